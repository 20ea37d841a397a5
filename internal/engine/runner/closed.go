package runner

import (
	"context"
	"time"
)

// closedLoop is the closed-loop model: n workers, each starting its next
// iteration as soon as the previous one returned (or think later), so the
// offered load is whatever the server lets through. With a gate, worker w
// runs only while more than w workers are wanted (ramping concurrency, see
// ramping_concurrency.go).
type closedLoop struct {
	engine *Engine
	mix    *mix
	n      int
	gate   *gate
	// think is the phase's think_time: each worker waits it after an
	// iteration, as an application does between requests. It is outside
	// every latency, which the iteration measures.
	think time.Duration
}

// newClosedLoop is the executor of a phase with concurrency workers.
func newClosedLoop(ps *phaseSetup) Executor {
	return &closedLoop{engine: ps.engine, mix: ps.newMix(), n: ps.spec.Concurrency, think: ps.spec.ThinkTime.D()}
}

// Setup has nothing to hook: the plan is the phase's concurrency.
func (*closedLoop) Setup(*phaseRun) {}

// Run runs the workers until no new iteration may start.
func (c *closedLoop) Run(ctx context.Context, pr *phaseRun) {
	workers(c.n, func(w int) {
		s := c.engine.Env.NewScope(w)
		h := pr.newHandles()

		var th *thinker
		if c.think > 0 {
			th = newThinker(c.engine)
			defer th.close()
		}

		for pr.issueCtx.Err() == nil {
			if c.gate != nil && !c.gate.wait(pr.issueCtx, w) {
				return
			}

			if !pr.iteration(ctx, s, h, c.mix, time.Time{}) {
				return
			}

			if th != nil && !th.wait(pr.issueCtx, c.think) {
				return
			}
		}
	})
}

// thinker is one worker's think-time wait. A think time is typically a
// millisecond or two, and the runtime's timers oversleep such a wait by up
// to a millisecond on Linux (package alarm): a worker thinking 1 ms would
// think about 2, halving the load it offers. So it waits as the open-loop
// scheduler does, with a sleeper.
type thinker struct {
	sl *sleeper
}

func newThinker(e *Engine) *thinker {
	return &thinker{sl: newSleeper(e)}
}

// wait waits d, and reports false if stop ended first (then the worker
// starts no further iteration).
func (t *thinker) wait(stop context.Context, d time.Duration) bool {
	end := time.Now().Add(d)

	for time.Now().Before(end) {
		if stop.Err() != nil || t.sl.wait(stop.Done(), nil, end) {
			return false
		}
	}

	return stop.Err() == nil
}

func (t *thinker) close() { t.sl.close() }
