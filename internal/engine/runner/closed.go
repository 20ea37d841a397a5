package runner

import (
	"context"
	"time"
)

// closedLoop is the closed-loop model: n workers, each starting its next
// iteration as soon as the previous one returned, so the offered load is
// whatever the server lets through. With a gate, worker w runs only while
// more than w workers are wanted (ramping concurrency, see
// ramping_concurrency.go).
type closedLoop struct {
	engine *Engine
	mix    *mix
	n      int
	gate   *gate
}

// newClosedLoop is the executor of a phase with concurrency workers.
func newClosedLoop(ps *phaseSetup) Executor {
	return &closedLoop{engine: ps.engine, mix: ps.newMix(), n: ps.spec.Concurrency}
}

// Setup has nothing to hook: the plan is the phase's concurrency.
func (*closedLoop) Setup(*phaseRun) {}

// Run runs the workers until no new iteration may start.
func (c *closedLoop) Run(ctx context.Context, pr *phaseRun) {
	workers(c.n, func(w int) {
		s := c.engine.Env.NewScope(w)
		h := pr.newHandles()

		for pr.issueCtx.Err() == nil {
			if c.gate != nil && !c.gate.wait(pr.issueCtx, w) {
				return
			}

			if !pr.iteration(ctx, s, h, c.mix, time.Time{}) {
				return
			}
		}
	})
}
