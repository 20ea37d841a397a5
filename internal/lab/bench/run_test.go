package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/analysis/finish"
	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// nullInsert is a short workload of single inserts, for the wiretest null
// server.
const nullInsert = `name: bench_null_insert
database: mongobench_bench_null_insert
collections: [{name: items}]
run:
  concurrency: 1
  duration: 600ms
  interval: 100ms
operations:
  - name: add
    op: insertOne
    collection: items
    document: {n: 1}
`

// recorder keeps a run's messages, steps and hard-exit registrations.
type recorder struct {
	mu           sync.Mutex
	lines, steps []string
	registered   int
	unregistered int
}

func (r *recorder) Printf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *recorder) Step(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, fmt.Sprintf(format, args...))
}

func (r *recorder) onHardExit(func()) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.registered++

	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.unregistered++
	}
}

func (r *recorder) hooks() Hooks {
	return Hooks{Messages: r, OnHardExit: r.onHardExit}
}

// compileNullInsert writes, reads and compiles the null-insert workload.
func compileNullInsert(t *testing.T) *Compiled {
	t.Helper()

	return compileWorkload(t, nullInsert)
}

func startNull(t *testing.T) *wiretest.Server {
	t.Helper()

	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	return srv
}

func options(t *testing.T) Options {
	t.Helper()

	// A key of the test's own, made as a run makes the user's, so that the
	// tests never make or read the user's.
	key, err := targets.LoadOwnerKey(filepath.Join(t.TempDir(), "owner.key"))
	if err != nil {
		t.Fatal(err)
	}

	return Options{ServerSelection: 5 * time.Second, NoExplain: true, Version: "test", OwnerKey: key}
}

// TestRunSingleTrial runs one variant on one named target: the result holds
// the measured inserts, the target's stop is registered for a forced exit
// until Close has stopped it, and Close's step is reported.
func TestRunSingleTrial(t *testing.T) {
	srv := startNull(t)
	w := compileNullInsert(t)
	rec := &recorder{}

	plan := &Plan{
		Path: "null_insert.yaml", Base: w.Spec, Variants: []*Compiled{w}, Rounds: 1,
		Targets: []targets.TargetSpec{{Name: "null", Kind: targets.KindURI, URI: srv.URI()}},
		Options: options(t),
	}

	if plan.Matrix() {
		t.Fatal("one variant on one target in one round is not a matrix")
	}

	out, err := Run(context.Background(), plan, rec.hooks())
	if err != nil {
		t.Fatal(err)
	}

	if out.Final == nil || out.Final.Status != runner.StatusCompleted || out.Result.Status != result.StatusCompleted {
		t.Fatalf("final %+v, result status %q", out.Final, out.Result.Status)
	}

	main := out.Result.MainPhase()
	if main == nil || len(main.Operations) != 1 || main.Operations[0].Name != "add" || main.Operations[0].Count == 0 {
		t.Fatalf("main phase: %+v", main)
	}

	if out.Result.MongobenchVersion != "test" || out.Result.Target.Kind != targets.KindURI {
		t.Errorf("version %q, target kind %q", out.Result.MongobenchVersion, out.Result.Target.Kind)
	}

	if rec.registered != 1 || rec.unregistered != 0 {
		t.Errorf("before Close: %d hard-exit cleanups registered, %d unregistered; want 1, 0", rec.registered, rec.unregistered)
	}

	out.Close()

	if rec.unregistered != 1 {
		t.Errorf("after Close: %d unregistered, want 1", rec.unregistered)
	}

	if !slices.Contains(rec.steps, "closing the connections to the server") || !slices.Contains(rec.steps, "gathering the results") {
		t.Errorf("steps: %q", rec.steps)
	}

	if !slices.ContainsFunc(rec.lines, func(l string) bool { return strings.HasPrefix(l, "Server: ") }) {
		t.Errorf("messages: %q", rec.lines)
	}
}

// TestRunMatrixInterleaves runs one variant on two targets in two rounds:
// the trials alternate in ABBA order, and the result is a matrix with the
// four trials, which the finisher gives verdicts comparing the targets:
// the same verdicts as it gives the trials rebuilt from their run logs (as
// finish of the trials directory does).
func TestRunMatrixInterleaves(t *testing.T) {
	a, b := startNull(t), startNull(t)
	w := compileNullInsert(t)
	rec := &recorder{}

	plan := &Plan{
		Path: "null_insert.yaml", Base: w.Spec, Variants: []*Compiled{w}, Rounds: 2,
		Targets: []targets.TargetSpec{
			{Name: "a", Kind: targets.KindURI, URI: a.URI()},
			{Name: "b", Kind: targets.KindURI, URI: b.URI()},
		},
		Options: options(t),
	}

	trials := filepath.Join(t.TempDir(), "cmp"+TrialsSuffix)
	plan.Options.TrialLogs = trials

	out, err := Run(context.Background(), plan, rec.hooks())
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()

	if out.Result.Kind() != result.KindMatrix || out.Result.Status != result.StatusCompleted || len(out.Failures) > 0 {
		t.Fatalf("kind %q, status %q, failures %q", out.Result.Kind(), out.Result.Status, out.Failures)
	}

	var order []string

	for _, l := range rec.lines {
		if strings.HasPrefix(l, "== ") {
			order = append(order, strings.TrimSpace(l))
		}
	}

	want := []string{
		"== a · bench_null_insert · round 1/2", "== b · bench_null_insert · round 1/2",
		"== b · bench_null_insert · round 2/2", "== a · bench_null_insert · round 2/2",
	}
	if !slices.Equal(order, want) {
		t.Errorf("trial order:\n%q\nwant\n%q", order, want)
	}

	m := out.Result.Matrix
	if len(m.Verdicts) != 0 {
		t.Errorf("bench judged the comparison (%d verdicts): verdicts are the finisher's", len(m.Verdicts))
	}

	if fin, err := finish.Finish(out.Result, finish.Options{}); err != nil || fin.Status != finish.OK {
		t.Fatalf("finishing the comparison: %+v, %v", fin, err)
	}

	if len(m.Trials) != 4 || len(m.Verdicts) == 0 {
		t.Fatalf("%d trials, %d verdicts", len(m.Trials), len(m.Verdicts))
	}

	if !slices.ContainsFunc(m.Verdicts, func(v result.MatrixVerdict) bool { return v.Target == analysis.CrossTarget }) {
		t.Errorf("no verdict compares the targets: %+v", m.Verdicts)
	}

	rebuilt, err := FinishTrials(context.Background(), trials)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := finish.Finish(rebuilt, finish.Options{}); err != nil {
		t.Fatal(err)
	}

	if got := rebuilt.Matrix; len(got.Trials) != 4 || !reflect.DeepEqual(got.Verdicts, m.Verdicts) {
		t.Errorf("finished from the trials' run logs: %d trials, verdicts\n%+v\nthe run's\n%+v", len(got.Trials), got.Verdicts, m.Verdicts)
	}
}
