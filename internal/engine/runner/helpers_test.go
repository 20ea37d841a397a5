package runner

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/base/alarm"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// phaseGuard bounds every phase a test runs when the test has no deadline,
// so that a broken stop never hangs the suite. It is a hang guard, not a
// speed limit: phases bounded by an operation count may take minutes on a
// loaded machine under the race detector, so with a deadline (go test's
// -timeout) the guard is that deadline less guardMargin, which leaves time
// to report the phase that hung instead of go test's panic.
const (
	phaseGuard  = 10 * time.Minute
	guardMargin = 15 * time.Second
)

// guard bounds ctx by the test's deadline (less guardMargin), or by
// phaseGuard without one.
func guard(ctx context.Context, t *testing.T) (context.Context, context.CancelFunc) {
	if d, ok := t.Deadline(); ok {
		return context.WithDeadline(ctx, d.Add(-guardMargin))
	}

	return context.WithTimeout(ctx, phaseGuard)
}

// rig is a workload wired to a wiretest server the way `mongobench run`
// wires a workload to a deployment (internal/cli/run.go, runWorkload):
// parsed and compiled from YAML, one driver client, one Engine.
type rig struct {
	t      *testing.T
	srv    *wiretest.Server
	client *mongo.Client
	spec   *workload.Spec
	ops    []*op.Operation
	eng    *Engine
}

// newRig parses src, starts a wiretest server with cfg and connects a
// client to it; tweak, if not nil, adjusts the client options (pool sizes).
// The client has pinged the server when newRig returns. Everything is torn
// down when the test ends.
func newRig(t *testing.T, src string, cfg wiretest.Config, tweak func(*options.ClientOptions)) *rig {
	t.Helper()

	spec, errs := workload.Parse("test.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("workload does not parse: %v", errs)
	}

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		t.Fatalf("vars do not compile: %v", errs)
	}

	ops, errs := op.Compile(spec, env)
	if len(errs) > 0 {
		t.Fatalf("operations do not compile: %v", errs)
	}

	srv, err := wiretest.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	co := options.Client().ApplyURI(srv.URI()).SetServerSelectionTimeout(5 * time.Second)
	if tweak != nil {
		tweak(co)
	}

	client, err := mongo.Connect(co)
	if err != nil {
		t.Fatal(err)
	}

	// Registered after the server's Close, so it runs before it.
	t.Cleanup(func() {
		// Short: against a closed server the driver's endSessions waits
		// for server selection until the deadline.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()

		_ = client.Disconnect(ctx)
	})

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	if err := client.Ping(ctx, nil); err != nil {
		t.Fatalf("ping the wiretest server: %v", err)
	}

	return &rig{
		t:      t,
		srv:    srv,
		client: client,
		spec:   spec,
		ops:    ops,
		eng: &Engine{
			DB:         client.Database(spec.Database),
			Env:        env,
			Interval:   spec.Run.Interval.D(),
			AbortAfter: spec.Run.AbortAfter.D(),
			Timeout:    spec.Run.Timeout.D(),
			// As runs do: the rig's tests run on the real clock against a
			// real server, so they exercise the scheduler's precise waits.
			NewAlarm: alarm.New,
		},
	}
}

// phases returns the workload's phases, as the CLI runs them.
func (r *rig) phases() []*workload.Phase {
	ps, _ := r.spec.PhaseList()
	return ps
}

// run runs one phase and checks that it ended as planned.
func (r *rig) run(p *workload.Phase) *PhaseResult {
	r.t.Helper()

	res := r.runCtx(r.t.Context(), p)
	if res.Status != StatusCompleted {
		r.t.Fatalf("phase %s: status %s (%s), first error %v", p.Name, res.Status, res.Reason, res.FirstError)
	}

	return res
}

// runCtx runs one phase under ctx (bounded by guard) whatever its end.
func (r *rig) runCtx(ctx context.Context, p *workload.Phase) *PhaseResult {
	r.t.Helper()

	guarded, cancel := guard(ctx, r.t)
	defer cancel()

	res := r.eng.RunPhase(guarded, PhasePlan{Spec: p, Mix: r.spec.MixOperations(p), Ops: r.ops})
	if res.Status == StatusInterrupted && ctx.Err() == nil {
		r.t.Fatalf("phase %s did not end before the test's deadline (its hang guard)", p.Name)
	}

	return res
}

// finds is how many find commands (find and findOne) the server received.
func (r *rig) finds() int64 { return r.srv.Stats().Requests["find"] }

// opStats returns the totals of the named operation.
func opStats(t *testing.T, reg *metrics.Registry, name string) metrics.OpStats {
	t.Helper()

	if reg == nil {
		t.Fatalf("no registry for %s", name)
	}

	for _, st := range reg.Totals() {
		if st.Name == name {
			return st
		}
	}

	t.Fatalf("operation %s not in the registry (%v)", name, reg.Ops())

	return metrics.OpStats{}
}

// errorCount adds up an operation's failures of every kind.
func errorCount(st metrics.OpStats) int64 {
	var n int64
	for _, v := range st.Errors {
		n += v
	}

	return n
}

// intervals returns a registry's closed intervals.
func intervals(t *testing.T, reg *metrics.Registry) []metrics.Interval {
	t.Helper()

	var out []metrics.Interval

	for iv, err := range reg.Intervals() {
		if err != nil {
			t.Fatal(err)
		}

		out = append(out, iv)
	}

	return out
}

// countIn counts the histogram's samples (microseconds) in [lo, hi).
func countIn(h *metrics.Histogram, lo, hi time.Duration) int64 {
	loUS, hiUS := lo.Microseconds(), hi.Microseconds()

	var n int64

	for from, count := range h.ForEachBucket {
		if count > 0 && from >= loUS && from < hiUS {
			n += count
		}
	}

	return n
}

// us turns a histogram value (microseconds) into a duration.
func us(v int64) time.Duration { return time.Duration(v) * time.Microsecond }

// within reports whether got is within frac of want.
func within(got, want, frac float64) bool {
	return got >= want*(1-frac) && got <= want*(1+frac)
}
