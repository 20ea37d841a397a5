package runner

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/spec/workload"
)

// Every load model a phase can have maps to exactly one executor, and the
// registry holds nothing else.
func TestExecutorRegistry(t *testing.T) {
	t.Parallel()

	want := slices.Sorted(slices.Values(workload.LoadModelNames()))
	if got := Models(); !slices.Equal(got, want) {
		t.Errorf("executors for %v, want exactly the workload's models %v", got, want)
	}

	for _, m := range workload.LoadModelNames() {
		if err := CheckModel(m); err != nil {
			t.Errorf("model %s: %v", m, err)
		}
	}

	err := CheckModel("poisson")
	if err == nil || !strings.Contains(err.Error(), `"poisson"`) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("unknown model: %v, want an error naming it and the known ones", err)
	}
}

// Each way of writing a phase is run by its model's executor, found through
// the registry, which also adjusts the phase's description as the model
// needs (a ramp's planned length, an open loop's slots and service times).
func TestExecutorChosenFromPhase(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		run     string
		model   string
		want    string // the executor's type
		service bool
	}{
		{"duration: 1s\n  concurrency: 3", workload.ModelClosed, "*runner.closedLoop", false},
		{"stages: [{duration: 2s, concurrency: 4}]", workload.ModelRampingConcurrency, "*runner.rampingConcurrency", false},
		{"duration: 1s\n  rate: 100/s", workload.ModelRate, "*runner.rate", true},
		{"stages: [{duration: 2s, rate: 50/s}]", workload.ModelRampingRate, "*runner.rate", true},
		{"blocks: {steps: [{operations: [ins], count: 10}], until: {collection: c, blocks: 1}}", workload.ModelBlocks, "*runner.blocks", false},
	} {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()

			spec, errs := workload.Parse("w.yaml", []byte("name: t\ndatabase: bench\ncollections: [{name: c}]\nrun:\n  "+tc.run+
				"\noperations:\n  - {name: ins, op: insertOne, collection: c, document: {x: 1}}\n"))
			if len(errs) > 0 {
				t.Fatal(errs)
			}

			sp := &spec.Run.Phase
			if sp.Model() != tc.model {
				t.Fatalf("model %s, want %s", sp.Model(), tc.model)
			}

			b := &bound{index: map[string]int{}}
			b.add("ins", &node{})

			p := Phase{Concurrency: sp.Concurrency, Duration: sp.Duration.D()}
			ps := &phaseSetup{engine: &Engine{}, spec: sp, mix: []string{"ins"}, bound: b, weights: map[string]float64{"ins": 1}, phase: &p, result: &PhaseResult{}}
			ex := executors()[sp.Model()](ps)

			if got := fmt.Sprintf("%T", ex); got != tc.want {
				t.Errorf("executor %s, want %s", got, tc.want)
			}

			if ps.service != tc.service {
				t.Errorf("service times asked: %v, want %v", ps.service, tc.service)
			}

			if len(sp.Stages) > 0 && p.Duration.String() != "2s" {
				t.Errorf("planned duration %s, want the stages' 2s", p.Duration)
			}

			if tc.service && (p.Concurrency != sp.MaxInFlight || ps.result.Schedule == nil) {
				t.Errorf("open loop: concurrency %d (want max_in_flight %d), schedule %v", p.Concurrency, sp.MaxInFlight, ps.result.Schedule)
			}
		})
	}
}
