package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	mongooptions "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// everyKindOfPhase has what a results file records per interval: a load
// step, a closed-loop mix, an open-loop phase (plan points, service times)
// with a latency-paced background job (pacing decisions), and growth
// blocks.
const everyKindOfPhase = `name: runlog_equivalence
database: mongobench_runlog_equivalence
collections: [{name: items}]
load:
  - collection: items
    documents: 300
    batch_size: 50
    document: {n: {^int: {min: 1, max: 9}}}
run:
  interval: 100ms
  timeout: 5s
phases:
  - name: closed
    concurrency: 2
    duration: 700ms
    operations: [get, put]
  - name: paced
    rate: 300/s
    max_in_flight: 8
    duration: 700ms
    operations: [get]
    background:
      - operation: put
        max_in_flight: 2
        pacing: {start: 20/s, min: 5/s, max: 100/s, low: 100ms, high: 300ms}
  - name: grow
    blocks:
      steps:
        - {operations: [put], count: 40}
        - {operations: [get], count: 40}
      until: {collection: items, blocks: 3}
operations:
  - {name: get, op: findOne, collection: items, filter: {n: 1}}
  - {name: put, op: insertOne, collection: items, document: {n: 2}}
`

// compileWorkload writes, reads and compiles a workload.
func compileWorkload(t *testing.T, text string) *Compiled {
	t.Helper()

	path := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	spec, errs := workload.ReadWith(context.Background(), path, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	c, errs := Compile(spec)
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	return c
}

// TestRunLogMatchesRegistryAssembly runs every kind of phase against the
// null server with registries that keep every interval, streaming them to
// a run log as a run does, and checks that the results built from the log
// are, phase by phase and field by field (counts, errors, histograms,
// percentiles, intervals, plan points, service times, blocks, pacing), the
// ones assembled from the registries the way results were made before run
// logs.
func TestRunLogMatchesRegistryAssembly(t *testing.T) {
	srv := startNull(t)
	w := compileWorkload(t, everyKindOfPhase)
	spec := w.Spec

	client, err := mongo.Connect(mongooptions.Client().ApplyURI(srv.URI()).SetServerSelectionTimeout(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })

	ctx := context.Background()
	tgt := &openedTarget{kind: targets.KindURI, uri: srv.URI(), client: client}
	rb := newResultBuilder(time.Now(), "test", "w.yaml", spec, tgt, targets.ServerInfo{})
	old := newResultBuilder(rb.started, "test", "w.yaml", spec, tgt, targets.ServerInfo{})

	logPath := filepath.Join(t.TempDir(), "r"+".runlog.jsonl")

	tl, err := openTrialLog(logPath, rb)
	if err != nil {
		t.Fatal(err)
	}

	eng := &runner.Engine{
		DB: client.Database(spec.Database), Env: w.Env, Interval: spec.Run.Interval.D(),
		AbortAfter: 10 * time.Second, Timeout: spec.Run.Timeout.D(), Sink: tl,
	}

	var final *runner.PhaseResult

	for _, l := range w.Loads {
		tl.beginLoad(l.Name())
		final = eng.Load(ctx, l)
		tl.endPhase(final)
		if err := old.addFromRegistry(final, false); err != nil {
			t.Fatal(err)
		}
	}

	phases, _ := spec.PhaseList()
	for _, p := range phases {
		tl.beginPhase(p, rb.decode)
		final = eng.RunPhase(ctx, runner.PhasePlan{Spec: p, Mix: spec.MixOperations(p), Ops: w.Ops})
		tl.endPhase(final)
		if err := old.addFromRegistry(final, !p.Measured()); err != nil {
			t.Fatal(err)
		}

		if final.Status != runner.StatusCompleted {
			t.Fatalf("phase %s: %s: %s", p.Name, final.Status, final.Reason)
		}
	}

	built, err := tl.finish(ctx, rb.build(final), nil)
	if err != nil {
		t.Fatal(err)
	}

	want := old.build(final)
	if len(built.Phases) != len(want.Phases) || len(want.Phases) != 4 {
		t.Fatalf("%d phases built from the log, %d from the registries; want 4", len(built.Phases), len(want.Phases))
	}

	for i := range want.Phases {
		w, b := &want.Phases[i], &built.Phases[i]

		if w.Name == "paced" && (len(w.Targets) == 0 || len(w.Background) != 1 || len(w.Background[0].Trajectory) < 2 ||
			w.Operations[0].ServiceHistogram == "") {
			t.Errorf("phase paced lacks what it should test: %d targets, background %+v", len(w.Targets), w.Background)
		}

		if w.Name == "grow" && len(w.Blocks) != 3 {
			t.Errorf("phase grow has %d blocks, want 3", len(w.Blocks))
		}

		if got, exp := jsonOf(t, b), jsonOf(t, w); got != exp {
			t.Errorf("phase %s built from the run log differs from the registry's:\n%s\nwant\n%s", w.Name, got, exp)
		}
	}

	if got, exp := jsonOf(t, built.Operations), jsonOf(t, want.Operations); got != exp {
		t.Errorf("operations differ:\n%s\nwant\n%s", got, exp)
	}

	if errs := built.Check(); len(errs) > 0 {
		t.Errorf("results built from the run log fail Check: %v", errs)
	}

	if built.Status != result.StatusCompleted {
		t.Errorf("status %q", built.Status)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()

	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}

	return string(b)
}
