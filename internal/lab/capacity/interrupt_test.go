package capacity_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/lab/capacity"
	benchplan "github.com/mongobench/mongobench/internal/lab/plan"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// phaseHook is an observer that calls its function with each phase's load
// model as the phase starts.
type phaseHook func(model string)

func (h phaseHook) PhaseStarted(p runner.Phase)                          { h(p.Model) }
func (phaseHook) Warmup(runner.Phase, time.Duration)                     {}
func (phaseHook) Interval(runner.Phase, metrics.Interval, time.Duration) {}
func (phaseHook) PhaseEnded(runner.Phase, *runner.PhaseResult)           {}

// probe is one findOne per iteration on an empty collection: a step
// costs the test server's latency and nothing else.
const probe = `name: capacity_probe
database: mongobench_capacity_probe
collections: [{name: items}]
run:
  concurrency: 1
  interval: 250ms
operations:
  - name: get
    op: findOne
    collection: items
    filter: {_id: 1}
`

// probePlan is the plan of a capacity search of probe against the server
// at uri, with an owner key of the test's, as the command makes it.
func probePlan(t *testing.T, ctx context.Context, uri string) *bench.Plan {
	t.Helper()

	spec, errs := workload.Parse("probe.yaml", []byte(probe))
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	w, errs := bench.Compile(spec)
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	plan, err := benchplan.New(ctx, &benchplan.Request{Path: "probe.yaml", Workload: w, URI: uri, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}

	if plan.Options.OwnerKey, err = targets.LoadOwnerKey(filepath.Join(t.TempDir(), "owner.key")); err != nil {
		t.Fatal(err)
	}

	return plan
}

// quickConfig is a short search against a test server answering in 1 ms
// under a generous objective: every step passes, so the search grows from
// 50/s to --max-rate 100/s and confirms it, whatever the machine's load.
func quickConfig(t *testing.T, ctx context.Context) capacity.Config {
	t.Helper()

	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	slo, err := capacity.ParseSLO("p99 < 2s")
	if err != nil {
		t.Fatal(err)
	}

	return capacity.Config{
		Plan:         probePlan(t, ctx, srv.URI()),
		SLO:          []capacity.SLO{slo},
		Search:       capacity.SearchOptions{Start: 50, Max: 100, Growth: 2, Resolution: 0.05, MaxSteps: 6},
		StepDuration: 300 * time.Millisecond, MaxStepDuration: 600 * time.Millisecond, Warmup: 50 * time.Millisecond,
	}
}

// writeAndRead writes res as the command does and reads it back: what an
// interrupted search leaves must be a whole, valid results file.
func writeAndRead(t *testing.T, res *result.Result) *result.Result {
	t.Helper()

	path := filepath.Join(t.TempDir(), "capacity.json")
	if err := result.WriteFile(path, res); err != nil {
		t.Fatalf("writing the interrupted search's results: %v", err)
	}

	back, err := result.Read(context.Background(), path)
	if err != nil {
		t.Fatalf("reading the interrupted search's results back: %v", err)
	}

	return back
}

// A search cancelled while its second step runs (Ctrl-C) returns the
// results of the step done so far, with status interrupted, no confirmed
// rate and a verdict that says so; the step that was cut short is left out.
func TestRunInterruptedDuringTheSearch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	stop, stopCause := context.WithCancelCause(ctx)
	defer stopCause(nil)

	cfg := quickConfig(t, ctx)

	// The cancel comes as the second step's measured phase starts: the
	// step is running, as under a real Ctrl-C.
	measured := 0
	cfg.Hooks.Observer = func() runner.Observer {
		return phaseHook(func(model string) {
			if model != "load" {
				if measured++; measured == 2 {
					stopCause(errors.New("SIGINT"))
				}
			}
		})
	}

	res, err := capacity.Run(stop, cfg)
	if !errors.Is(err, capacity.ErrInterrupted) {
		t.Fatalf("Run returned %v, want ErrInterrupted", err)
	}

	if res == nil || res.Capacity == nil {
		t.Fatal("no results for the step done before the interrupt")
	}

	back := writeAndRead(t, res)
	c := back.Capacity

	if back.Status != result.StatusInterrupted {
		t.Errorf("status %q, want %q", back.Status, result.StatusInterrupted)
	}

	if !c.Interrupted || c.MaxRate != 0 || c.Confirmed {
		t.Errorf("capacity interrupted=%v max_rate=%v confirmed=%v, want an interrupted search with no rate claimed", c.Interrupted, c.MaxRate, c.Confirmed)
	}

	if len(c.Steps) != 1 || c.Steps[0].OfferedRate != 50 || !c.Steps[0].Passed {
		t.Fatalf("steps %+v, want the one step done, 50/s, passed", c.Steps)
	}

	for _, want := range []string{"interrupted after 1 steps", "50.0 ops/s (unconfirmed)"} {
		if !strings.Contains(c.Verdict, want) {
			t.Errorf("verdict %q, want it to say %q", c.Verdict, want)
		}
	}

	if len(c.SLO) != 1 || c.SLO[0] != "p99 < 2s" {
		t.Errorf("slo %v, want the objective searched against", c.SLO)
	}
}

// A search that had finished and is stopped during its concurrency sweep
// keeps its confirmed rate; the sweep keeps the steps it ended and no fit
// is made from them.
func TestRunInterruptedDuringTheSweep(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	stop, stopCause := context.WithCancelCause(ctx)
	defer stopCause(nil)

	cfg := quickConfig(t, ctx)
	cfg.Workers = []int{1, 2, 3, 4}
	cfg.Progress = func(s result.CapacityStep) {
		if s.Kind == result.CapacityStepWorkers {
			stopCause(errors.New("SIGTERM")) // before the second sweep step
		}
	}

	res, err := capacity.Run(stop, cfg)
	if !errors.Is(err, capacity.ErrInterrupted) {
		t.Fatalf("Run returned %v, want ErrInterrupted", err)
	}

	back := writeAndRead(t, res)
	c := back.Capacity

	if back.Status != result.StatusInterrupted || !c.Interrupted {
		t.Errorf("status %q, interrupted %v: want an interrupted result", back.Status, c.Interrupted)
	}

	if !c.Confirmed || c.MaxRate != 100 {
		t.Errorf("confirmed %v at %v ops/s, want the finished search's 100 ops/s kept", c.Confirmed, c.MaxRate)
	}

	if len(c.Sweep) != 1 || c.Fit != nil {
		t.Errorf("sweep of %d steps, fit %+v: want the one step done and no fit", len(c.Sweep), c.Fit)
	}

	if !strings.Contains(c.Verdict, "interrupted during the concurrency sweep after 1 of its steps") {
		t.Errorf("verdict %q, want it to say where the sweep stopped", c.Verdict)
	}
}
