package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/verdict"
	"github.com/mongobench/mongobench/internal/targets"
)

// plain is a workload of one timed phase.
const plain = `name: plain
database: mongobench_plan_plain
collections: [{name: c}]
run: {concurrency: 2, duration: 1s}
operations:
  - {name: ins, op: insertOne, collection: c, document: {a: 1}}
`

// counted is a workload whose only phase ends after a number of operations.
const counted = `name: counted
database: mongobench_plan_counted
collections: [{name: c}]
run: {concurrency: 1, max_operations: 50}
operations:
  - {name: ins, op: insertOne, collection: c, document: {a: 1}}
`

// twoPhases has a load phase and a measured one, and a trial duration.
const twoPhases = `name: two
database: mongobench_plan_two
collections: [{name: c}]
run: {concurrency: 2}
phases:
  - {name: warm, operations: [ins], duration: 1s, measure: false}
  - {name: main, operations: [ins, get], duration: 2s}
trials: {duration: 3s}
operations:
  - {name: ins, op: insertOne, collection: c, document: {a: 1}}
  - {name: get, op: findOne, collection: c, filter: {a: 1}}
`

// variants compares two variants.
const variants = plain + `variants:
  - name: one
  - name: two
    run: {concurrency: 4}
`

// compile parses and compiles a workload text, failing the test on an
// error: the inputs here are valid workloads, the requests are what is
// tested.
func compile(t *testing.T, text string) *bench.Compiled {
	t.Helper()

	spec, errs := workload.Parse("w.yaml", []byte(text))
	if len(errs) > 0 {
		t.Fatalf("parse: %v", errs)
	}

	c, errs := bench.Compile(spec)
	if len(errs) > 0 {
		t.Fatalf("compile: %v", errs)
	}

	return c
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// wide is a workload of n operations, whose recorders grow with workers.
func wide(n int) string {
	var b strings.Builder

	b.WriteString("name: wide\ndatabase: mongobench_wide\ncollections:\n  - name: c\nrun:\n  concurrency: 2\n  duration: 1s\noperations:\n")

	for i := range n {
		fmt.Fprintf(&b, "  - name: op%d\n    op: findOne\n    collection: c\n", i)
	}

	return b.String()
}

// TestNewRefuses checks that every request that cannot run is refused as
// bad input, with the message the command line prints.
func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		workload string
		req      Request
		want     string
	}{
		{
			name:     "concurrency past the memory caps",
			workload: wide(200),
			req:      Request{Concurrency: 10000},
			want:     "with --concurrency 10000: w.yaml:6:16: run.concurrency: 200 operations × 10000 workers would hold about 1.9 GiB",
		},
		{
			name:     "duration without a timed phase",
			workload: counted,
			req:      Request{Duration: 5 * time.Second},
			want:     "--duration applies to phases timed by a duration and to growth blocks, and no phase of counted is either",
		},
		{
			name:     "markdown with nothing to compare",
			workload: plain,
			req:      Request{Markdown: true},
			want:     "--markdown applies to runs with variants",
		},
		{
			name:     "a bad --target",
			workload: plain,
			req:      Request{Targets: []string{"nosuchkind"}},
			want:     "--target ",
		},
		{
			name:     "two targets of one name",
			workload: plain,
			req:      Request{Targets: []string{"embedded", "embedded"}},
			want:     `two targets are named "embedded"; name them (name=... in --target)`,
		},
		{
			name:     "an unset variable in a workload target",
			workload: plain + "targets:\n  - {kind: uri, uri: 'mongodb://${PLAN_NO_HOST}/'}\n  - {kind: embedded}\n",
			want:     "w.yaml:8:22: targets[0].uri: environment variable PLAN_NO_HOST is not set",
		},
		{
			name:     "an unset variable in a --target",
			workload: plain,
			req:      Request{Targets: []string{"uri:mongodb://${PLAN_NO_HOST}/", "embedded"}},
			want:     `--target "uri:mongodb://${PLAN_NO_HOST}/": environment variable PLAN_NO_HOST is not set`,
		},
		{
			name:     "a client profile of the go engine",
			workload: plain,
			req:      Request{ClientProfile: true},
			want:     "--client-profile profiles an external client's adapter; this run uses client go",
		},
		{
			name:     "an external stack with no installer",
			workload: plain,
			req:      Request{Client: "node-driver"},
			want:     "this run uses client node-driver, and no client stack can be installed here",
		},
		{
			name:     "a sharded comparison",
			workload: variants,
			req:      Request{URI: "mongodb://127.0.0.1:1/", Shard: &bench.Shard{Index: 0, Count: 2}},
			want:     "--shard runs one workload on one target: a comparison",
		},
		{
			name:     "a sharded run on a server of its own",
			workload: plain,
			req:      Request{Shard: &bench.Shard{Index: 0, Count: 2}},
			want:     "--shard needs a server every shard reaches",
		},
		{
			name:     "a sharded run on a launched target",
			workload: plain,
			req:      Request{Targets: []string{"embedded"}, Shard: &bench.Shard{Index: 1, Count: 2}},
			want:     "--shard needs a server every shard reaches",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Path = "w.yaml"
			req.Workload = compile(t, tc.workload)

			p, err := New(context.Background(), &req)

			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("New = %v, %v; want an input error", p, err)
			}

			if !strings.Contains(ie.Msg, tc.want) {
				t.Errorf("message %q, want it to hold %q", ie.Msg, tc.want)
			}
		})
	}
}

// TestClientCheckDetails checks that a workload a stack cannot express is
// refused with each problem as a detail, before any installer is asked.
func TestClientCheckDetails(t *testing.T) {
	w := compile(t, plain+"  - {name: rep, op: replaceOne, collection: c, filter: {a: 1}, replacement: {a: 2}}\n")

	asked := false
	_, err := New(context.Background(), &Request{
		Path: "w.yaml", Workload: w, Client: "python-mongoengine",
		Installer: func() (*client.Installer, error) { asked = true; return nil, errors.New("not here") },
	})

	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an input error", err)
	}

	if ie.Msg != "the workload cannot run with client python-mongoengine" || len(ie.Details) == 0 {
		t.Errorf("message %q, details %v", ie.Msg, ie.Details)
	}

	if asked {
		t.Error("the installer was asked for a workload the stack cannot run")
	}
}

// TestInstallerFailureIsNoInputError checks that an installer that cannot
// be had fails the run with its own error, not as bad input.
func TestInstallerFailureIsNoInputError(t *testing.T) {
	cause := errors.New("no cache directory")

	_, err := New(context.Background(), &Request{
		Path: "w.yaml", Workload: compile(t, plain), Client: "node-driver",
		Installer: func() (*client.Installer, error) { return nil, cause },
	})

	var ie *InputError
	if !errors.Is(err, cause) || errors.As(err, &ie) {
		t.Errorf("err = %v, want the installer's error as it came", err)
	}
}

// TestOverrides checks what the request's overrides change in the spec
// that runs.
func TestOverrides(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
		// want, per phase: workers and measured duration.
		workers   []int
		durations []time.Duration
		client    string
		minEffect string
	}{
		{
			name:      "none: the trial duration over the phases'",
			workers:   []int{2, 2},
			durations: []time.Duration{3 * time.Second, 3 * time.Second},
		},
		{
			name:      "concurrency and duration",
			req:       Request{Concurrency: 7, Duration: 10 * time.Second},
			workers:   []int{7, 7},
			durations: []time.Duration{10 * time.Second, 10 * time.Second},
		},
		{
			name:      "client and minimum effect",
			req:       Request{Client: "go", MinEffect: "2%"},
			workers:   []int{2, 2},
			durations: []time.Duration{3 * time.Second, 3 * time.Second},
			client:    "go",
			minEffect: "2%",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Path = "w.yaml"
			req.Workload = compile(t, twoPhases)

			p, err := New(context.Background(), &req)
			if err != nil {
				t.Fatal(err)
			}

			spec := p.Variants[0].Spec

			phases, _ := spec.PhaseList()
			if len(phases) != len(tc.workers) {
				t.Fatalf("%d phases, want %d", len(phases), len(tc.workers))
			}

			for i, ph := range phases {
				if ph.Concurrency != tc.workers[i] || ph.Duration.D() != tc.durations[i] {
					t.Errorf("phase %s: %d workers for %s, want %d for %s", ph.Name, ph.Concurrency, ph.Duration.D(), tc.workers[i], tc.durations[i])
				}
			}

			if spec.Run.Client != tc.client || spec.Run.MinEffect != tc.minEffect {
				t.Errorf("client %q, min effect %q; want %q, %q", spec.Run.Client, spec.Run.MinEffect, tc.client, tc.minEffect)
			}
		})
	}
}

// TestOverridesReachEveryVariant checks that a variant's own setting
// yields to the request's, and that each variant is compiled on its own.
func TestOverridesReachEveryVariant(t *testing.T) {
	w := compile(t, variants)

	p, err := New(context.Background(), &Request{Path: "w.yaml", Workload: w, Concurrency: 3, MaxOperations: 9})
	if err != nil {
		t.Fatal(err)
	}

	if len(p.Variants) != 2 || p.Variants[0] == w || p.Variants[0].Spec == p.Variants[1].Spec {
		t.Fatalf("variants %v: want two compiled apart from the base", p.Variants)
	}

	for _, v := range p.Variants {
		if v.Spec.Run.Concurrency != 3 || v.Spec.Seed != w.Spec.Seed {
			t.Errorf("variant %s: concurrency %d, seed %d; want 3 and the base's %d", v.Spec.Variant, v.Spec.Run.Concurrency, v.Spec.Seed, w.Spec.Seed)
		}

		phases, _ := v.Spec.PhaseList()
		for _, ph := range phases {
			if ph.MaxOperations != 9 {
				t.Errorf("variant %s, phase %s: max operations %d, want 9", v.Spec.Variant, ph.Name, ph.MaxOperations)
			}
		}
	}
}

// TestRounds checks where a run's rounds come from: the request, then
// run.rounds, then trials.rounds, then the default of a comparison, which
// must be enough for a confidence interval.
func TestRounds(t *testing.T) {
	if need := verdict.MinSamples(verdict.Paired, analysis.MatrixAlpha); workload.DefaultRounds < need {
		t.Errorf("workload.DefaultRounds = %d, fewer than the %d rounds a 95%% CI needs", workload.DefaultRounds, need)
	}

	spec := &workload.Spec{}

	for _, tc := range []struct {
		override, run, trials int
		variants, targets     int
		want                  int
	}{
		{0, 0, 0, 1, 2, workload.DefaultRounds},
		{0, 0, 0, 2, 1, workload.DefaultRounds},
		{0, 0, 0, 1, 1, 1},
		{0, 0, 0, 1, 0, 1},
		{0, 0, 9, 1, 2, 9},
		{0, 7, 9, 1, 2, 7},
		{3, 7, 9, 1, 2, 3},
		{2, 0, 0, 1, 1, 2},
	} {
		spec.Run.Rounds, spec.Trials.Rounds = tc.run, tc.trials
		if got := trialRounds(spec, tc.override, tc.variants, tc.targets); got != tc.want {
			t.Errorf("override %d, run.rounds %d, trials.rounds %d, %d variants × %d targets: %d rounds, want %d",
				tc.override, tc.run, tc.trials, tc.variants, tc.targets, got, tc.want)
		}
	}
}

// TestPlanIsAMatrixWhenItCompares checks that the plan's shape follows the
// request: rounds alone make a comparison, as do targets.
func TestPlanIsAMatrixWhenItCompares(t *testing.T) {
	for _, tc := range []struct {
		name   string
		req    Request
		rounds int
		matrix bool
	}{
		{"one target", Request{}, 1, false},
		{"one named target", Request{Targets: []string{"embedded"}}, 1, false},
		{"rounds", Request{Rounds: 3}, 3, true},
		{"two targets", Request{Targets: []string{"embedded", "uri:mongodb://127.0.0.1:1/"}}, workload.DefaultRounds, true},
		{"--uri beside a target", Request{Targets: []string{"embedded"}, URI: "mongodb://127.0.0.1:1/"}, workload.DefaultRounds, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Path, req.Workload = "w.yaml", compile(t, plain)

			p, err := New(context.Background(), &req)
			if err != nil {
				t.Fatal(err)
			}

			if p.Rounds != tc.rounds || p.Matrix() != tc.matrix {
				t.Errorf("%d rounds, matrix %v; want %d, %v", p.Rounds, p.Matrix(), tc.rounds, tc.matrix)
			}
		})
	}
}

// TestServerSelection checks that the request's timeout wins over the
// workload's, which applies when none is asked for.
func TestServerSelection(t *testing.T) {
	for _, tc := range []struct {
		given, want time.Duration
	}{
		{0, 5 * time.Second},
		{2 * time.Second, 2 * time.Second},
	} {
		p, err := New(context.Background(), &Request{Path: "w.yaml", Workload: compile(t, plain), ServerSelection: tc.given})
		if err != nil {
			t.Fatal(err)
		}

		if p.Options.ServerSelection != tc.want {
			t.Errorf("requested %s: %s, want %s", tc.given, p.Options.ServerSelection, tc.want)
		}
	}
}

// TestShardedRunOnAServer checks that a sharded run on --uri, or on one uri
// target, is planned with its shard.
func TestShardedRunOnAServer(t *testing.T) {
	for _, req := range []Request{
		{URI: "mongodb://127.0.0.1:1/"},
		{Targets: []string{"uri:mongodb://127.0.0.1:1/"}},
	} {
		req.Path, req.Workload = "w.yaml", compile(t, plain)
		req.Shard = &bench.Shard{Index: 1, Count: 2, Wait: time.Minute}

		p, err := New(context.Background(), &req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}

		if p.Options.Shard != req.Shard {
			t.Errorf("%+v: shard %v not in the plan", req, p.Options.Shard)
		}
	}
}

// TestHasRunBlocks checks which single runs end with a comparison block.
func TestHasRunBlocks(t *testing.T) {
	sequence := `name: seq
database: mongobench_plan_seq
collections: [{name: c}]
run: {concurrency: 1%s}
phases:
  - {name: main, sequence: [ins, get], duration: 1s}
operations:
  - {name: ins, op: insertOne, collection: c, document: {a: 1}}
  - {name: get, op: findOne, collection: c, filter: {a: 1}}
`

	for _, tc := range []struct {
		name, workload string
		want           bool
	}{
		{"plain", plain, false},
		{"two phases", twoPhases, false},
		{"compare_operations", strings.Replace(twoPhases, "run: {concurrency: 2}", "run: {concurrency: 2, compare_operations: true}", 1), true},
		{"a sequence without a figure", fmt.Sprintf(sequence, ""), false},
		{"a sequence ranked by a figure", fmt.Sprintf(sequence, ", compare_by: p50"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HasRunBlocks(compile(t, tc.workload).Spec); got != tc.want {
				t.Errorf("HasRunBlocks = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTargets checks the order, names and connection strings of a run's
// targets: the workload's, the flags', then --uri, with ${NAME} expanded
// in the first two only.
func TestTargets(t *testing.T) {
	w := compile(t, plain+"targets:\n  - {kind: uri, name: file, uri: 'mongodb://${PLAN_HOST}/'}\n")

	p, err := New(context.Background(), &Request{
		Path:     "w.yaml",
		Workload: w,
		Targets:  []string{"uri:mongodb://${PLAN_HOST}:27018/", "embedded"},
		URI:      "mongodb://literal${X}/",
		Getenv:   env(map[string]string{"PLAN_HOST": "db.example", "X": "no"}),
	})
	if err != nil {
		t.Fatal(err)
	}

	var got []string
	for _, tg := range p.Targets {
		got = append(got, tg.Name+"="+tg.URI)
	}

	// A flag's target is named by its text as given, so its name shows no
	// expanded value.
	want := []string{
		"file=mongodb://db.example/", "uri:mongodb://${PLAN_HOST}:27018/=mongodb://db.example:27018/",
		"embedded=", "uri=mongodb://literal${X}/",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("targets %v, want %v", got, want)
	}

	if w.Spec.Targets[0].URI != "mongodb://${PLAN_HOST}/" {
		t.Errorf("the workload's text changed to %q", w.Spec.Targets[0].URI)
	}
}

// TestMongodBinary checks that the request's mongod program goes to the
// mongod targets that name none, and a target's own wins.
func TestMongodBinary(t *testing.T) {
	for _, tc := range []struct {
		name   string
		binary string
		want   []string // per target; "" for none
	}{
		{"none", "", []string{"/opt/own", "", ""}},
		{"from the request", "/opt/flag", []string{"/opt/own", "/opt/flag", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list, err := targetSpecs(&workload.Spec{}, &Request{
				Targets:      []string{"mongod:binary=/opt/own,name=own", "mongod:name=default", "embedded"},
				MongodBinary: tc.binary,
			})
			if err != nil {
				t.Fatal(err)
			}

			if len(list) != 3 || list[0].Name != "own" || list[1].Name != "default" || list[2].Name != "embedded" {
				t.Fatalf("targets %v, want own, default and embedded, named as given", list)
			}

			for i, tg := range list {
				got := ""
				if tg.Mongod != nil {
					got = tg.Mongod.Binary
				}

				if tg.Kind != targets.KindMongod && got != "" {
					t.Errorf("target %s of kind %s was given a mongod program", tg.Name, tg.Kind)
				}

				if got != tc.want[i] {
					t.Errorf("target %s: binary %q, want %q", tg.Name, got, tc.want[i])
				}
			}
		})
	}
}

// TestDurationCapsGrowthBlocks checks that --duration applies to growth
// blocks as their until.duration, beside the until conditions the file
// sets, and that a run without it keeps the file's.
func TestDurationCapsGrowthBlocks(t *testing.T) {
	const grows = `name: grows
database: mongobench_plan_grows
collections: [{name: c}]
run:
  concurrency: 2
  blocks:
    steps: [{operations: [ins], count: 10}]
    until: {collection: c, blocks: 100}
operations:
  - {name: ins, op: insertOne, collection: c, document: {a: 1}}
`

	for _, tc := range []struct {
		name string
		d    time.Duration
		want time.Duration
	}{
		{"no --duration", 0, 0},
		{"--duration 30s", 30 * time.Second, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{Path: "w.yaml", Workload: compile(t, grows), Duration: tc.d}

			p, err := New(context.Background(), &req)
			if err != nil {
				t.Fatal(err)
			}

			phases, _ := p.Variants[0].Spec.PhaseList()
			if len(phases) != 1 || phases[0].Blocks == nil {
				t.Fatalf("phases %+v, want one with blocks", phases)
			}

			u := phases[0].Blocks.Until
			if u.Duration.D() != tc.want || u.Blocks != 100 {
				t.Errorf("until %+v, want duration %s and the file's 100 blocks", u, tc.want)
			}
		})
	}
}
