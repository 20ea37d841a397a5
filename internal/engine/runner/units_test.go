package runner

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// checkResult files a phase's registry as a results file would and
// requires result.Check to find it consistent, units included.
func checkResult(t *testing.T, res *PhaseResult) result.Phase {
	t.Helper()

	p, err := result.NewPhase(result.PhaseRun, 0, res.Registry.Intervals())
	if err != nil {
		t.Fatal(err)
	}

	r := &result.Result{
		SchemaVersion: result.SchemaVersion,
		Target:        result.Target{Kind: targets.KindURI},
		Status:        result.StatusCompleted,
	}
	r.AddPhase(p)

	for _, err := range r.Check() {
		t.Errorf("result.Check: %v", err)
	}

	return p
}

// A sequence's iteration is measured as a unit beside its operations: as
// many iterations as passes, each lasting its three operations, so its
// median is about three times theirs and never below their sum.
func TestIterationUnit(t *testing.T) {
	t.Parallel()

	const delay = 2 * time.Millisecond

	r := newRig(t, `name: t
database: bench
collections: [{name: c}]
run:
  concurrency: 1
  max_operations: 300
  timeout: 5s
  sequence: [a, b, c]
operations:
  - {name: a, op: findOne, collection: c}
  - {name: b, op: insertOne, collection: c, document: {x: 1}}
  - {name: c, op: findOne, collection: c, filter: {x: 1}}
`, wiretest.Config{Latency: wiretest.Fixed(delay)}, nil)

	res := r.run(r.phases()[0])

	if got := res.Registry.Ops(); !slices.Equal(got, []string{"a", "b", "c", "iteration"}) {
		t.Fatalf("registry operations %v, want a, b, c, iteration", got)
	}

	it := opStats(t, res.Registry, "iteration")
	if it.Unit != result.UnitIteration || !slices.Equal(it.Steps, []string{"a", "b", "c"}) || it.Count != 100 || errorCount(it) != 0 {
		t.Fatalf("iteration: unit %q steps %v count %d errors %v; want an iteration unit of a, b, c with 100 passes",
			it.Unit, it.Steps, it.Count, it.Errors)
	}

	var stepP50, stepMin, stepMeans float64

	for _, name := range it.Steps {
		st := opStats(t, res.Registry, name)
		if st.Count != it.Count || st.Unit != "" {
			t.Errorf("step %s: count %d unit %q, want %d and no unit", name, st.Count, st.Unit, it.Count)
		}

		stepP50 += float64(st.Hist.ValueAtQuantile(50)) / 3
		stepMin += float64(st.Hist.Min())
		stepMeans += st.Hist.Mean()
	}

	p50 := float64(it.Hist.ValueAtQuantile(50))
	t.Logf("iteration p50 %s, mean step p50 %s; iteration mean %s, sum of step means %s",
		us(int64(p50)), us(int64(stepP50)), us(int64(it.Hist.Mean())), us(int64(stepMeans)))

	// Medians do not add up (a loaded machine skews latencies to the
	// right, and the median of a sum of skewed values exceeds the sum of
	// their medians), hence the generous bounds; means do, up to the
	// worker's own time between two steps.
	if ratio := p50 / stepP50; ratio < 2.5 || ratio > 6 {
		t.Errorf("iteration p50 is %.2f× the steps' p50, want about 3×", ratio)
	}

	if ratio := it.Hist.Mean() / stepMeans; ratio < 0.99 || ratio > 1.5 {
		t.Errorf("iteration mean is %.2f× the sum of its steps' means, want 1 plus the worker's time between steps", ratio)
	}

	// Every iteration lasts at least as long as its three operations; the
	// histogram keeps values within 0.1%.
	if got := float64(it.Hist.Min()); got < 0.99*stepMin {
		t.Errorf("shortest iteration %s is below the sum of the shortest steps %s", us(int64(got)), us(int64(stepMin)))
	}

	p := checkResult(t, res)
	if u := p.Operations[3]; u.Name != "iteration" || u.Unit != result.UnitIteration || len(u.Steps) != 3 {
		t.Errorf("results file operation %+v, want the iteration unit", u)
	}
}

// An iteration with a failed operation is one failed iteration, of the kind
// of its failure, while the other operations of the pass still run.
func TestIterationUnitCountsFailedStep(t *testing.T) {
	t.Parallel()

	r := newRig(t, `name: t
database: bench
collections: [{name: c}]
run:
  concurrency: 1
  max_operations: 30
  timeout: 5s
  max_error_rate: 1
  sequence: [a, bad, c]
operations:
  - {name: a, op: findOne, collection: c}
  - {name: bad, op: runCommand, command: {noSuchCommand: 1}}
  - {name: c, op: findOne, collection: c}
`, wiretest.Config{}, nil)

	res := r.run(r.phases()[0])

	bad := opStats(t, res.Registry, "bad")
	it := opStats(t, res.Registry, "iteration")

	if bad.Count != 0 || errorCount(bad) != 10 || len(bad.Errors) != 1 {
		t.Fatalf("bad: count %d errors %v, want 10 failures of one kind", bad.Count, bad.Errors)
	}

	if it.Count != 0 || errorCount(it) != 10 || !maps2Equal(it.Errors, bad.Errors) {
		t.Errorf("iteration: count %d errors %v, want the 10 failures of its step %v", it.Count, it.Errors, bad.Errors)
	}

	for _, name := range []string{"a", "c"} {
		if st := opStats(t, res.Registry, name); st.Count != 10 || errorCount(st) != 0 {
			t.Errorf("%s: count %d errors %v, want 10 successes", name, st.Count, st.Errors)
		}
	}

	checkResult(t, res)
}

func maps2Equal(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}

	for k, v := range a {
		if b[k] != v {
			return false
		}
	}

	return true
}

// A composite operation is one entry of a weighted mix: it is picked by its
// weight, measured as one unit, and each of its steps is measured under
// composite/step with the composite's count. A growth block runs an exact
// number of iterations, so the counts are exact.
func TestCompositeInWeightedMix(t *testing.T) {
	t.Parallel()

	const iterations = 2000

	r := newRig(t, `name: t
database: bench
vars:
  key: {^int: {min: 1, max: 1000}}
collections: [{name: c}]
run:
  concurrency: 2
  timeout: 5s
  blocks:
    steps: [{operations: [ins, rmw], count: 2000}]
    until: {collection: c, blocks: 1}
operations:
  - {name: ins, op: insertOne, collection: c, document: {x: 1}}
  - name: rmw
    weight: 3
    steps:
      - {name: read, op: findOne, collection: c, filter: {_id: {^var: key}}}
      - {name: update, op: updateOne, collection: c, filter: {_id: {^var: key}}, update: {$inc: {n: 1}}}
`, wiretest.Config{}, nil)

	res := r.run(r.phases()[0])

	if got := res.Registry.Ops(); !slices.Equal(got, []string{"ins", "rmw", "rmw/read", "rmw/update"}) {
		t.Fatalf("registry operations %v, want ins, rmw, rmw/read, rmw/update", got)
	}

	ins := opStats(t, res.Registry, "ins")
	rmw := opStats(t, res.Registry, "rmw")

	if rmw.Unit != result.UnitComposite || !slices.Equal(rmw.Steps, []string{"rmw/read", "rmw/update"}) {
		t.Errorf("rmw: unit %q steps %v, want a composite of rmw/read, rmw/update", rmw.Unit, rmw.Steps)
	}

	if n := ins.Count + rmw.Count; n != iterations || errorCount(ins)+errorCount(rmw) != 0 {
		t.Fatalf("ins %d + rmw %d = %d iterations (errors %v %v), want %d", ins.Count, rmw.Count, n, ins.Errors, rmw.Errors, iterations)
	}

	// Weight 3 of 4: a binomial share of 2000 draws is within ±0.05 of
	// 0.75 with a probability far above 1 - 1e-6.
	if share := float64(rmw.Count) / iterations; share < 0.70 || share > 0.80 {
		t.Errorf("rmw share %.3f, want 0.75 ± 0.05", share)
	}

	for _, name := range rmw.Steps {
		if st := opStats(t, res.Registry, name); st.Count != rmw.Count {
			t.Errorf("%s: count %d, want the composite's %d", name, st.Count, rmw.Count)
		}
	}

	if r.finds() != rmw.Count {
		t.Errorf("server saw %d finds, want one per composite (%d)", r.finds(), rmw.Count)
	}

	checkResult(t, res)
}

// The steps of one composite execution see the same iteration variables,
// and the next execution draws new ones.
func TestCompositeStepsShareIterationVariables(t *testing.T) {
	t.Parallel()

	vars := &yaml.Node{}
	if err := yaml.Unmarshal([]byte("key: {^int: {min: 1, max: 1000000000}}"), vars); err != nil {
		t.Fatal(err)
	}

	env, errs := datagen.NewEnv(1, vars.Content[0], "vars")
	if errs != nil {
		t.Fatal(errs)
	}

	ref := &yaml.Node{}
	if err := yaml.Unmarshal([]byte("{^var: key}"), ref); err != nil {
		t.Fatal(err)
	}

	tmpl, errs := env.Compile(ref.Content[0], "ref")
	if errs != nil {
		t.Fatal(errs)
	}

	var seen [][2]any

	step := func(k int) func(context.Context, *datagen.Scope) (int64, error) {
		return func(_ context.Context, s *datagen.Scope) (int64, error) {
			if k == 0 {
				seen = append(seen, [2]any{})
			}

			seen[len(seen)-1][k] = tmpl.Value(s)

			return 1, nil
		}
	}

	b := &bound{index: map[string]int{}}
	u := b.add("rmw", &node{})
	u.steps = []*node{b.add("rmw/read", &node{fn: step(0), timeout: time.Minute}), b.add("rmw/update", &node{fn: step(1), timeout: time.Minute})}
	b.units = map[int]unitMark{0: {kind: result.UnitComposite, steps: []string{"rmw/read", "rmw/update"}}}

	cfg := driveConfig{
		phase: Phase{Name: "run", Model: workload.ModelClosed, MaxOps: 200},
		ops:   b.names, units: b, interval: time.Second, abortAfter: time.Minute, obs: nopObserver{},
	}
	ex := &closedLoop{engine: &Engine{Env: env}, mix: &mix{nodes: []*node{u}}, n: 1}

	res := drive(t.Context(), cfg, ex.Run)

	if st := opStats(t, res.Registry, "rmw"); st.Count != 100 || len(seen) != 100 {
		t.Fatalf("%d composites recorded, %d run; want 100", st.Count, len(seen))
	}

	distinct := map[any]bool{}

	for i, v := range seen {
		if v[0] != v[1] {
			t.Fatalf("execution %d: read saw key %v, update %v", i, v[0], v[1])
		}

		distinct[v[0]] = true
	}

	if len(distinct) < 90 {
		t.Errorf("%d distinct keys in 100 executions: variables are not drawn per execution", len(distinct))
	}
}

// Units are marked in every interval and in the totals, so results carry
// them whatever reads the registry.
func TestUnitsMarkedInRegistry(t *testing.T) {
	t.Parallel()

	reg := metrics.NewRegistry([]string{"a", "iteration"})
	reg.SetUnit(1, result.UnitIteration, []string{"a"})
	reg.Tick(time.Now())

	for _, iv := range intervals(t, reg) {
		if iv.Ops[1].Unit != result.UnitIteration || iv.Ops[0].Unit != "" {
			t.Errorf("interval ops %+v, want only iteration marked", iv.Ops)
		}
	}

	if tot := reg.Totals(); tot[1].Unit != result.UnitIteration || !slices.Equal(tot[1].Steps, []string{"a"}) {
		t.Errorf("totals %+v, want iteration marked with step a", tot[1])
	}
}

// A sequence may hold a composite: the iteration is made of the composite,
// which is made of its steps, and each level is measured once per pass. The
// composite counts as one of max_operations, so a pass is two operations.
func TestCompositeInSequence(t *testing.T) {
	t.Parallel()

	r := newRig(t, `name: t
database: bench
collections: [{name: c}]
run:
  concurrency: 1
  max_operations: 30
  timeout: 5s
  sequence: [ins, rmw]
operations:
  - {name: ins, op: insertOne, collection: c, document: {x: 1}}
  - name: rmw
    steps:
      - {name: read, op: findOne, collection: c}
      - {name: update, op: updateOne, collection: c, filter: {x: 1}, update: {$inc: {n: 1}}}
`, wiretest.Config{}, nil)

	res := r.run(r.phases()[0])

	if got := res.Registry.Ops(); !slices.Equal(got, []string{"ins", "rmw", "rmw/read", "rmw/update", "iteration"}) {
		t.Fatalf("registry operations %v", got)
	}

	if it := opStats(t, res.Registry, "iteration"); !slices.Equal(it.Steps, []string{"ins", "rmw"}) {
		t.Errorf("iteration steps %v, want ins, rmw", it.Steps)
	}

	for _, name := range res.Registry.Ops() {
		if st := opStats(t, res.Registry, name); st.Count != 15 || errorCount(st) != 0 {
			t.Errorf("%s: count %d errors %v, want 15 (30 operations, 2 per pass)", name, st.Count, st.Errors)
		}
	}

	checkResult(t, res)
}

// In an open-loop phase a scheduled start is one iteration: the unit's
// response time counts from the schedule, its service time from its first
// operation's send, and both registries mark it.
func TestIterationUnitOpenLoop(t *testing.T) {
	t.Parallel()

	r := newRig(t, `name: t
database: bench
collections: [{name: c}]
run:
  rate: 50/s
  max_in_flight: 4
  duration: 1s
  timeout: 5s
  sequence: [a, b]
operations:
  - {name: a, op: findOne, collection: c}
  - {name: b, op: findOne, collection: c}
`, wiretest.Config{Latency: wiretest.Fixed(2 * time.Millisecond)}, nil)

	res := r.run(r.phases()[0])

	resp := opStats(t, res.Registry, "iteration")
	svc := opStats(t, res.Service, "iteration")

	if resp.Unit != result.UnitIteration || svc.Unit != result.UnitIteration || resp.Count != svc.Count {
		t.Fatalf("iteration: unit %q/%q, counts %d/%d; want the unit in both registries with one count",
			resp.Unit, svc.Unit, resp.Count, svc.Count)
	}

	// 50 came due in 1 s, however loaded the machine (those a lagging
	// scheduler never reached are counted as pending), and every one is
	// accounted for: done, failed, dropped, still waiting at the stop, or
	// one of those in flight then (at most one per slot: max_in_flight 4
	// keeps that bound tight). How many were done in time depends on the
	// machine, so only that some were is checked.
	sched := res.Schedule
	slots := int64(r.phases()[0].MaxInFlight)

	if sched.Scheduled != 50 {
		t.Errorf("%d iterations scheduled, want 50", sched.Scheduled)
	}

	if done := resp.Count + errorCount(resp) + sched.Dropped + sched.Pending; resp.Count < 1 || done > sched.Scheduled || done < sched.Scheduled-slots {
		t.Errorf("%d done + %v failed + %d dropped + %d pending, want the %d scheduled less at most %d cut off, and some done",
			resp.Count, resp.Errors, sched.Dropped, sched.Pending, sched.Scheduled, slots)
	}

	for _, name := range []string{"a", "b"} {
		if st := opStats(t, res.Registry, name); st.Count < resp.Count {
			t.Errorf("%s: count %d, below the iterations' %d", name, st.Count, resp.Count)
		}
	}

	// A response time is never shorter than the service time it contains.
	if resp.Hist.Max() < svc.Hist.Max() || resp.Hist.Mean() < 0.99*svc.Hist.Mean() {
		t.Errorf("response time (mean %.0fµs, max %dµs) below service time (mean %.0fµs, max %dµs)",
			resp.Hist.Mean(), resp.Hist.Max(), svc.Hist.Mean(), svc.Hist.Max())
	}
}

// max_operations counts a composite as one operation, however many steps it
// has (YCSB's operationcount counts a read-modify-write once), while its
// steps are still measured one by one.
func TestCompositeCountsOnceTowardMaxOperations(t *testing.T) {
	t.Parallel()

	const planned = 300

	r := newRig(t, `name: t
database: bench
vars:
  key: {^int: {min: 1, max: 1000}}
collections: [{name: c}]
run:
  concurrency: 3
  timeout: 5s
  max_operations: 300
operations:
  - {name: ins, op: insertOne, collection: c, document: {x: 1}}
  - name: rmw
    weight: 3
    steps:
      - {name: read, op: findOne, collection: c, filter: {_id: {^var: key}}}
      - {name: update, op: updateOne, collection: c, filter: {_id: {^var: key}}, update: {$inc: {n: 1}}}
`, wiretest.Config{}, nil)

	res := r.run(r.phases()[0])

	ins := opStats(t, res.Registry, "ins")
	rmw := opStats(t, res.Registry, "rmw")

	if n := ins.Count + rmw.Count; n != planned {
		t.Fatalf("ins %d + rmw %d = %d operations, want max_operations = %d", ins.Count, rmw.Count, n, planned)
	}

	for _, name := range []string{"rmw/read", "rmw/update"} {
		if st := opStats(t, res.Registry, name); st.Count != rmw.Count {
			t.Errorf("%s: count %d, want the composite's %d", name, st.Count, rmw.Count)
		}
	}
}
