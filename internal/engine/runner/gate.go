package runner

import (
	"context"
	"sync"
	"time"

	"github.com/mongobench/mongobench/internal/engine/schedule"
)

// gate lets through the workers numbered below the wanted concurrency, for
// ramping the number of closed-loop workers: worker w runs while w < active.
type gate struct {
	mu     sync.Mutex
	cond   *sync.Cond
	active int
	closed bool
}

func newGate(active int) *gate {
	g := &gate{active: active}
	g.cond = sync.NewCond(&g.mu)

	return g
}

// set changes the wanted concurrency and wakes waiting workers.
func (g *gate) set(n int) {
	g.mu.Lock()
	g.active = n
	g.mu.Unlock()
	g.cond.Broadcast()
}

// wait blocks worker w until it may run; false means the phase is over.
func (g *gate) wait(ctx context.Context, w int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()

	for w >= g.active && !g.closed && ctx.Err() == nil {
		g.cond.Wait()
	}

	return !g.closed && ctx.Err() == nil
}

// gateStep is how often a ramp updates the wanted concurrency.
const gateStep = 100 * time.Millisecond

// follow moves the gate along the stages (offsets from start) until ctx is
// done, then releases every waiting worker. It returns a function that waits
// for it to finish.
func (g *gate) follow(ctx context.Context, stages schedule.Stages, start time.Time) func() {
	done := make(chan struct{})

	go func() {
		defer close(done)

		t := time.NewTicker(gateStep)
		defer t.Stop()

		for {
			g.set(stages.ConcurrencyAt(time.Since(start)))

			select {
			case <-ctx.Done():
				g.mu.Lock()
				g.closed = true
				g.mu.Unlock()
				g.cond.Broadcast()

				return
			case <-t.C:
			}
		}
	}()

	return func() { <-done }
}
