package runner

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mongobench/mongobench/internal/schedule"
)

// LateThreshold is how long after its due time an operation may start and
// still count as on time. Handing an operation to a free slot takes
// microseconds; a millisecond means it waited for a slot.
const LateThreshold = time.Millisecond

// schedulerLagWarning is the scheduler's own lateness above which the client
// is reported as saturated (it could not even wake up on time).
const schedulerLagWarning = 10 * time.Millisecond

// ScheduleStats says how well an open-loop schedule was kept. Late and
// dropped operations are counted instead of silently falling behind.
type ScheduleStats struct {
	// Scheduled is the number of operations that came due while measuring.
	Scheduled int64

	// Late is the number of operations that started more than
	// LateThreshold after their due time, because every in-flight slot was
	// busy or the client was slow; their latency includes the wait.
	Late int64

	// Dropped is the number of operations never sent because the backlog
	// of waiting operations was full.
	Dropped int64

	// Pending is the number of operations due but not started when the
	// phase ended.
	Pending int64

	// MaxWait is the longest an operation waited for a slot.
	MaxWait time.Duration

	// MaxSchedulerLag is the longest the scheduler itself woke up after a
	// due time; large values mean the client machine is saturated.
	MaxSchedulerLag time.Duration

	// LateForSlot and LateForClient split Late by cause: most of the
	// delay spent waiting for a free in-flight slot (the server is slower
	// than the offered rate), or in the scheduler handing the operation out
	// (the client is saturated).
	LateForSlot, LateForClient int64

	// Warning explains, when the schedule was not kept, the likely cause.
	Warning string

	mu sync.Mutex
}

// finish derives the warning once the phase is over.
func (st *ScheduleStats) finish(slots int) {
	st.mu.Lock()
	defer st.mu.Unlock()

	onePercent := 0.01 * float64(st.Scheduled)
	kept := st.Dropped == 0 && float64(st.Late) < onePercent && float64(st.Pending) <= max(onePercent, float64(slots))

	if st.Scheduled == 0 || kept {
		return
	}

	what := fmt.Sprintf("of %d operations due, %d started late, %d were dropped and %d were still waiting at the end",
		st.Scheduled, st.Late, st.Dropped, st.Pending)

	if st.LateForClient > st.LateForSlot && st.Dropped == 0 {
		st.Warning = fmt.Sprintf("%s: the client is saturated (its scheduler handed operations out up to %s late); "+
			"lower the rate or give mongobench more CPU", what, st.MaxSchedulerLag.Round(time.Millisecond))

		return
	}

	st.Warning = fmt.Sprintf("%s: all %d in-flight slots were busy, so the server answered slower than the offered rate "+
		"(rate × latency > max_in_flight; waits up to %s are in the response times)", what, slots, st.MaxWait.Round(time.Millisecond))
}

// openLoop is an open-loop executor's configuration and counters.
type openLoop struct {
	pacer   schedule.Pacer
	slots   int
	backlog int

	// changed, when not nil, is signalled when the pacer's rate changes,
	// so that a scheduler waiting for a far due time asks again.
	changed chan struct{}

	stats ScheduleStats

	scheduled, late, dropped, pending atomic.Int64
	lateForSlot, lateForClient        atomic.Int64
	maxWait, maxLag                   atomic.Int64
}

// dispatch is a due operation handed to a slot.
type dispatch struct {
	// due is when the schedule wanted it started; sent is when the
	// scheduler handed it out.
	due, sent time.Time
}

func storeMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// openLoop runs a schedule: one scheduler goroutine hands due times to
// ol.slots workers through a bounded backlog. Due times come from the
// phase's start, never from the previous send, so the rate does not drift
// and a slow server shows up as latency (counted from the due time) and as
// late operations, not as a lower offered rate. Operations run with ctx;
// scheduling stops when stop is done. worker numbers the scopes.
func (e *Engine) openLoop(ctx, stop context.Context, pr *phaseRun, ol *openLoop, m *mix, b *bound, worker int) {
	queue := make(chan dispatch, ol.backlog)

	var wg sync.WaitGroup

	for w := range ol.slots {
		wg.Go(func() {
			s := e.Env.NewScope(worker + w)
			h := pr.newHandles()
			buf := make([]int, 0, len(m.idx))
			stopped := false

			for d := range queue {
				due := d.due
				measured := !due.Before(pr.measureFrom)

				if stopped || stop.Err() != nil {
					if measured {
						ol.pending.Add(1)
					}

					continue
				}

				if start := time.Now(); measured && start.Sub(due) > LateThreshold {
					wait := start.Sub(due)

					ol.late.Add(1)
					storeMax(&ol.maxWait, int64(wait))

					if start.Sub(d.sent) >= d.sent.Sub(due) {
						ol.lateForSlot.Add(1)
					} else {
						ol.lateForClient.Add(1)
					}
				}

				stopped = !pr.iteration(ctx, s, h, b, m, buf, due)
			}
		})
	}

	e.schedule(stop, pr, ol, queue)
	close(queue)
	wg.Wait()

	ol.stats.mu.Lock()
	ol.stats.Scheduled = ol.scheduled.Load()
	ol.stats.Late = ol.late.Load()
	ol.stats.Dropped = ol.dropped.Load()
	ol.stats.Pending = ol.pending.Load()
	ol.stats.MaxWait = time.Duration(ol.maxWait.Load())
	ol.stats.MaxSchedulerLag = time.Duration(ol.maxLag.Load())
	ol.stats.LateForSlot = ol.lateForSlot.Load()
	ol.stats.LateForClient = ol.lateForClient.Load()
	ol.stats.mu.Unlock()
}

// maxSleep bounds one wait of the scheduler, so that it notices rate
// changes and the end of the phase without a wake-up per operation.
const maxSleep = 50 * time.Millisecond

// schedule feeds due times to the queue until the schedule ends or stop is
// done.
func (e *Engine) schedule(stop context.Context, pr *phaseRun, ol *openLoop, queue chan<- dispatch) {
	sched := schedule.NewSchedule(ol.pacer, pr.measureFrom.Add(-pr.phase.Warmup))
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()

	// Operations that came due but that a lagging scheduler never reached
	// are counted as pending, so that "of N due" tells the truth.
	defer ol.countUnreached(sched, pr.measureFrom)

	for stop.Err() == nil {
		due, ok := sched.Peek()
		if !ok {
			return
		}

		if d := time.Until(due); d > 0 {
			timer.Reset(min(d, maxSleep))

			select {
			case <-stop.Done():
				return
			case <-ol.changed:
			case <-timer.C:
			}

			continue
		}

		sched.Next()

		now := time.Now()

		measured := !due.Before(pr.measureFrom)
		if measured {
			ol.scheduled.Add(1)
			storeMax(&ol.maxLag, int64(now.Sub(due)))
		}

		select {
		case queue <- dispatch{due: due, sent: now}:
		default:
			if measured {
				ol.dropped.Add(1)
			}
		}
	}
}

// maxUnreached bounds counting unreached operations after a stop, so that
// an absurd rate cannot hold the end of a phase.
const maxUnreached = 10_000_000

// countUnreached counts the operations due by now that the scheduler did not
// hand out before it stopped.
func (ol *openLoop) countUnreached(sched *schedule.Schedule, measureFrom time.Time) {
	now := time.Now()

	for range maxUnreached {
		due, ok := sched.Peek()
		if !ok || due.After(now) {
			return
		}

		sched.Next()

		if !due.Before(measureFrom) {
			ol.scheduled.Add(1)
			ol.pending.Add(1)
		}
	}
}
