package runner

import (
	"context"
	"time"

	"github.com/mongobench/mongobench/internal/spec/workload"
)

// replay is the replay model: a recorded timeline (capture --replay). Each
// recorded connection is a worker that starts its operations in their
// recorded order, each when it is due (its offset from the phase's start,
// divided by the speed) or, if its previous operation is still running,
// when that returns: a connection sends one command at a time. Latency
// counts from the due time, like an open loop's, and the service time from
// the send is recorded beside it.
type replay struct {
	engine *Engine
	spec   *workload.Replay
	// nodes are each connection's operations, bound.
	nodes [][]*node
}

// newReplay is the executor of a phase with a replay timeline.
func newReplay(ps *phaseSetup) Executor {
	r := &replay{engine: ps.engine, spec: ps.spec.Replay}

	for _, c := range r.spec.Connections {
		ns := make([]*node, len(c.Ops))
		for i, name := range c.Ops {
			// Validation checked that every name is an operation of the
			// phase's mix, which the phase binds.
			ns[i] = ps.bound.nodes[ps.bound.index[name]]
		}

		r.nodes = append(r.nodes, ns)
	}

	ps.phase.Concurrency = len(r.nodes)
	ps.service = true

	return r
}

// Setup has nothing to hook: the plan is the timeline.
func (*replay) Setup(*phaseRun) {}

// Run runs each connection's timeline until it ends or no new operation
// may start. The timeline starts with the phase, warm-up included.
func (r *replay) Run(ctx context.Context, pr *phaseRun) {
	start := pr.measureFrom.Add(-pr.phase.Warmup)
	conns := r.spec.Connections

	workers(len(r.nodes), func(w int) {
		s := r.engine.Env.NewScope(w)
		h := pr.newHandles()

		for i, n := range r.nodes[w] {
			due := start.Add(r.spec.Offset(conns[w].At[i]))
			if !sleepUntil(pr.issueCtx, due) {
				return
			}

			s.NextIteration()

			if pr.exec(ctx, s, h, n, false, due, false).stop {
				return
			}
		}
	})
}

// sleepUntil waits until at; false when ctx ended first.
func sleepUntil(ctx context.Context, at time.Time) bool {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err() == nil
	}

	t := time.NewTimer(d)
	defer t.Stop()

	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
