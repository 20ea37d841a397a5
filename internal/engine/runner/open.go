package runner

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mongobench/mongobench/internal/engine/schedule"
)

// LateThreshold is how long after its due time an operation may start and
// still count as on time. Handing an operation to a free slot takes
// microseconds; a millisecond means it waited for a slot.
const LateThreshold = time.Millisecond

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

	// SlotWait and ClientLag add up, over the late operations, the time
	// spent waiting for a free slot and the time the scheduler took to
	// hand them out: the weight of each cause, which counts alone do not
	// give (a stall makes few operations wait long, a busy client many
	// wait a little).
	SlotWait, ClientLag time.Duration

	// MaxSlotWait is the longest a late operation waited for a free slot.
	MaxSlotWait time.Duration

	// Stall is the longest time during measurement in which operations
	// were in flight and none succeeded, sampled every stallSample;
	// StallAt is when it began, from the end of warm-up (negative if in
	// warm-up), and StallInFlight how many were in flight at most.
	Stall, StallAt time.Duration
	StallInFlight  int

	// Warning explains, when the schedule was not kept, the likely cause.
	Warning string

	mu sync.Mutex
}

// minStall is the shortest stall that can be named as the cause of a
// schedule not kept, and stallFactor how many typical service times it must
// last: a server that is merely slow never lets that long pass without an
// answer while operations wait.
const (
	minStall    = 200 * time.Millisecond
	stallFactor = 10
)

// finish derives the warning once the phase is over; typical is the phase's
// median service time, against which a stall is judged.
func (st *ScheduleStats) finish(slots int, typical time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()

	onePercent := 0.01 * float64(st.Scheduled)
	kept := st.Dropped == 0 && float64(st.Late) < onePercent && float64(st.Pending) <= max(onePercent, float64(slots))

	if st.Scheduled == 0 || kept {
		return
	}

	what := fmt.Sprintf("of %d operations due, %d started late, %d were dropped and %d were still waiting at the end",
		st.Scheduled, st.Late, st.Dropped, st.Pending)

	st.Warning = what + ": " + st.cause(slots, typical)
}

// cause names, from the evidence, why the schedule was not kept. Waiting
// for slots outweighs the scheduler's lag when the late operations spent
// more time in all waiting for a slot than being handed out, or when the
// backlog overflowed (operations queue only behind busy slots); a stall is
// the cause when, besides, the server went long without any success while
// operations were in flight. Otherwise the client could not keep up.
func (st *ScheduleStats) cause(slots int, typical time.Duration) string {
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

	if st.SlotWait < st.ClientLag && st.Dropped == 0 {
		return fmt.Sprintf("the client is saturated: its scheduler handed operations out up to %s late "+
			"(%s in all, against %s spent waiting for a slot); lower the rate or give mongobench more CPU",
			ms(st.MaxSchedulerLag), ms(st.ClientLag), ms(st.SlotWait))
	}

	if st.Stall >= minStall && st.Stall >= stallFactor*typical {
		return fmt.Sprintf("the server stalled for ~%.1fs at %s (no operation succeeded while up to %d were in flight), "+
			"so the in-flight slots filled and operations due meanwhile waited for one, up to %s; the waits are in the response times",
			st.Stall.Seconds(), offsetClock(st.StallAt), st.StallInFlight, ms(st.MaxSlotWait))
	}

	return fmt.Sprintf("all %d in-flight slots were busy, so the server answered slower than the offered rate "+
		"(rate × latency > max_in_flight; waits up to %s are in the response times)", slots, ms(st.MaxWait))
}

// offsetClock formats an offset from the end of warm-up.
func offsetClock(d time.Duration) string {
	if d < 0 {
		return fmt.Sprintf("%.1fs before the end of warm-up", (-d).Seconds())
	}

	return clock(d)
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
	slotWait, clientLag, maxSlotWait  atomic.Int64

	// stall is written by watchStalls only, and read after it stopped.
	stall stallWatch
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
func (e *Engine) openLoop(ctx, stop context.Context, pr *phaseRun, ol *openLoop, m *mix, worker int) {
	queue := make(chan dispatch, ol.backlog)

	var wg sync.WaitGroup

	for w := range ol.slots {
		wg.Go(func() {
			s := e.Env.NewScope(worker + w)
			h := pr.newHandles()
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

					forSlot, forClient := start.Sub(d.sent), d.sent.Sub(due)
					ol.slotWait.Add(int64(forSlot))
					ol.clientLag.Add(int64(forClient))
					storeMax(&ol.maxSlotWait, int64(forSlot))

					if forSlot >= forClient {
						ol.lateForSlot.Add(1)
					} else {
						ol.lateForClient.Add(1)
					}
				}

				stopped = !pr.iteration(ctx, s, h, m, due)
			}
		})
	}

	watchDone := make(chan struct{})
	watching := make(chan struct{})

	go func() {
		defer close(watching)
		ol.stall.watch(watchDone, pr)
	}()

	e.schedule(stop, pr, ol, queue)
	close(queue)
	wg.Wait()
	close(watchDone)
	<-watching

	ol.stats.mu.Lock()
	ol.stats.Scheduled = ol.scheduled.Load()
	ol.stats.Late = ol.late.Load()
	ol.stats.Dropped = ol.dropped.Load()
	ol.stats.Pending = ol.pending.Load()
	ol.stats.MaxWait = time.Duration(ol.maxWait.Load())
	ol.stats.MaxSchedulerLag = time.Duration(ol.maxLag.Load())
	ol.stats.LateForSlot = ol.lateForSlot.Load()
	ol.stats.LateForClient = ol.lateForClient.Load()
	ol.stats.SlotWait = time.Duration(ol.slotWait.Load())
	ol.stats.ClientLag = time.Duration(ol.clientLag.Load())
	ol.stats.MaxSlotWait = time.Duration(ol.maxSlotWait.Load())
	ol.stats.Stall = ol.stall.longest.length
	ol.stats.StallAt = ol.stall.longest.start.Sub(pr.measureFrom)
	ol.stats.StallInFlight = ol.stall.longest.inFlight
	ol.stats.mu.Unlock()
}

// schedule feeds due times to the queue until the schedule ends or stop is
// done.
func (e *Engine) schedule(stop context.Context, pr *phaseRun, ol *openLoop, queue chan<- dispatch) {
	sched := schedule.NewSchedule(ol.pacer, pr.measureFrom.Add(-pr.phase.Warmup))
	sl := newSleeper(e)
	defer sl.close()

	// Operations that came due but that a lagging scheduler never reached
	// are counted as pending, so that "of N due" tells the truth.
	defer ol.countUnreached(sched, pr.measureFrom, pr.phaseEnd())

	for stop.Err() == nil {
		due, ok := sched.Peek()
		if !ok || pr.pastEnd(due) {
			return
		}

		if time.Until(due) > 0 {
			if sl.wait(stop.Done(), ol.changed, due) {
				return
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
func (ol *openLoop) countUnreached(sched *schedule.Schedule, measureFrom, end time.Time) {
	now := time.Now()
	if !end.IsZero() && end.Before(now) {
		now = end
	}

	for range maxUnreached {
		// The measured time is [start, end): an operation due exactly
		// at the end is not due.
		due, ok := sched.Peek()
		if !ok || due.After(now) || (!end.IsZero() && !due.Before(end)) {
			return
		}

		sched.Next()

		if !due.Before(measureFrom) {
			ol.scheduled.Add(1)
			ol.pending.Add(1)
		}
	}
}

// phaseEnd is the planned end of measurement, zero when the phase has no
// planned duration.
func (pr *phaseRun) phaseEnd() time.Time {
	if pr.phase.Duration <= 0 {
		return time.Time{}
	}

	return pr.measureFrom.Add(pr.phase.Duration)
}

// pastEnd reports whether an operation due at due falls at or after the
// planned end: measured time is [start, end), so a rate of r for d seconds
// offers exactly r×d operations.
func (pr *phaseRun) pastEnd(due time.Time) bool {
	return pr.phase.Duration > 0 && !due.Before(pr.measureFrom.Add(pr.phase.Duration))
}

// stallSample is how often watchStalls looks at the operations in flight.
const stallSample = 10 * time.Millisecond

// stallWatch finds the longest stall of a phase: a time in which operations
// were in flight and none succeeded. It samples instead of hooking every
// completion, so that it costs the operations nothing: the time of the last
// success is recorded anyway, and the watchdog knows which slots are busy.
type stallWatch struct {
	longest, current stall
}

// stall is one stretch without success while operations were in flight.
type stall struct {
	start    time.Time
	length   time.Duration
	inFlight int
}

// watch samples until done is closed. Only stalls seen during measurement
// count (one that began in warm-up counts from its start).
func (sw *stallWatch) watch(done <-chan struct{}, pr *phaseRun) {
	t := time.NewTicker(stallSample)
	defer t.Stop()

	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			if now.Before(pr.measureFrom) {
				continue
			}

			sw.sample(now, time.Unix(0, pr.lastSuccess.Load()), pr.watchdog.inFlight())
		}
	}
}

// sample notes one observation: at now, n operations in flight, the last
// success at last.
func (sw *stallWatch) sample(now, last time.Time, n int) {
	if n == 0 || !now.After(last) {
		return
	}

	if !sw.current.start.Equal(last) {
		sw.current = stall{start: last}
	}

	sw.current.length = now.Sub(last)
	sw.current.inFlight = max(sw.current.inFlight, n)

	if sw.current.length > sw.longest.length {
		sw.longest = sw.current
	}
}
