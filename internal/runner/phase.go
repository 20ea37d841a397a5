// Package runner is the load engine: it runs a phase's workers against the
// server, records every operation into per-worker histogram handles, merges
// them each interval, and stops on time, on an operation count, on a dead
// server or when its context is cancelled.
package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mongobench/mongobench/internal/errkind"
	"github.com/mongobench/mongobench/internal/metrics"
)

// Status says how a phase ended.
type Status string

// Phase end states, as written to results files.
const (
	// StatusCompleted means the phase ran to its planned end.
	StatusCompleted Status = "completed"

	// StatusInterrupted means the user stopped the run (Ctrl-C).
	StatusInterrupted Status = "interrupted"

	// StatusAborted means mongobench stopped the phase because it could not
	// go on: the server stopped answering, or a load step failed.
	StatusAborted Status = "aborted"
)

// Phase describes one phase for observers.
type Phase struct {
	// Name is "load_<collection>" or "run".
	Name string

	// Concurrency is the number of workers.
	Concurrency int

	// Warmup precedes measurement; nothing done in it is recorded.
	Warmup time.Duration

	// Duration is the planned measured length (0: until done).
	Duration time.Duration

	// MaxOps is the planned number of measured operations (0: no limit).
	MaxOps int64

	// Docs is the number of documents a load phase inserts.
	Docs int64
}

// Observer is told about a phase's progress, for live output. Its methods are
// called from one goroutine, never concurrently.
type Observer interface {
	// PhaseStarted is called before the first worker starts.
	PhaseStarted(p Phase)

	// Warmup is called once per interval during warm-up.
	Warmup(p Phase, remaining time.Duration)

	// Interval is called after every merged interval; elapsed counts from
	// the end of warm-up.
	Interval(p Phase, iv metrics.Interval, elapsed time.Duration)

	// PhaseEnded is called after the last worker stopped.
	PhaseEnded(p Phase, r *PhaseResult)
}

// PhaseResult is what a phase measured.
type PhaseResult struct {
	// Phase is the phase's description.
	Phase Phase

	// Start is when the workers started; measurement began Warmup later.
	Start time.Time

	// Elapsed is the measured time, from the end of warm-up to the stop.
	Elapsed time.Duration

	// Registry holds the interval snapshots and cumulative histograms.
	Registry *metrics.Registry

	// Status says how the phase ended, Reason why when not completed.
	Status Status
	Reason string

	// FirstError is the first failure seen (nil if none), for messages.
	FirstError error
}

// errStopPlanned marks a stop at the planned end (time or count reached).
var errStopPlanned = errors.New("planned end reached")

// abortError marks a stop mongobench decided on.
type abortError struct{ reason string }

func (e *abortError) Error() string { return e.reason }

// phaseRun is the shared state of one running phase.
type phaseRun struct {
	phase       Phase
	reg         *metrics.Registry
	measureFrom time.Time

	cancel context.CancelCauseFunc

	// maxOps and issued implement run.max_operations: a worker takes a
	// ticket before each measured operation.
	maxOps int64
	issued atomic.Int64

	// lastSuccess (unix nanoseconds) lets the watchdog see a dead server.
	lastSuccess atomic.Int64

	// firstErr keeps the first failure for messages.
	firstErr atomic.Pointer[error]
}

// firstError returns the first failure seen, or nil.
func (pr *phaseRun) firstError() error {
	if p := pr.firstErr.Load(); p != nil {
		return *p
	}

	return nil
}

// ticket reserves one measured operation; false means the planned count is
// reached and the worker must stop.
func (pr *phaseRun) ticket() bool {
	if pr.maxOps <= 0 {
		return true
	}

	if pr.issued.Add(1) > pr.maxOps {
		pr.cancel(errStopPlanned)
		return false
	}

	return true
}

// record files one finished operation. Operations that started in warm-up
// are dropped, and so are those cut off by the phase's own stop, which are
// artefacts of stopping, not server behaviour.
func (pr *phaseRun) record(ctx context.Context, h *metrics.Handle, op int, start, end time.Time, docs int64, err error) {
	kind := errkind.Of(err)

	if err == nil {
		pr.lastSuccess.Store(end.UnixNano())
	} else {
		if ctx.Err() != nil && (kind == errkind.Canceled || kind == errkind.Timeout) {
			return
		}

		pr.firstErr.CompareAndSwap(nil, &err)
	}

	if start.Before(pr.measureFrom) {
		return
	}

	h.Record(op, end.Sub(start), docs, kind)
}

// workFunc is one worker's loop; it returns when ctx is done or the phase's
// work is exhausted.
type workFunc func(ctx context.Context, worker int, h *metrics.Handle, pr *phaseRun)

// drive runs a phase: starts the workers, ticks the registry every interval
// from the end of warm-up (scheduled from that instant, so ticks never
// drift), watches for a dead server, and collects the result.
func drive(ctx context.Context, p Phase, ops []string, interval, abortAfter time.Duration, obs Observer, work workFunc) *PhaseResult {
	start := time.Now()
	pr := &phaseRun{
		phase:       p,
		measureFrom: start.Add(p.Warmup),
		maxOps:      p.MaxOps,
	}
	pr.lastSuccess.Store(start.UnixNano())

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	pr.cancel = cancel

	if p.Duration > 0 {
		// A cancel rather than a context deadline: operations cut off by
		// the planned end then fail as cancelled, not as timeouts.
		t := time.AfterFunc(time.Until(pr.measureFrom.Add(p.Duration)), func() { cancel(errStopPlanned) })
		defer t.Stop()
	}

	// The first interval starts when measurement does: nothing is recorded
	// before, since record drops operations started in warm-up.
	pr.reg = metrics.NewRegistry(ops)
	pr.reg.Reset(pr.measureFrom)

	obs.PhaseStarted(p)

	var wg sync.WaitGroup
	for w := range p.Concurrency {
		h := pr.reg.NewHandle()

		wg.Add(1)

		go func() {
			defer wg.Done()
			work(runCtx, w, h, pr)
		}()
	}

	done := make(chan struct{})

	go func() {
		wg.Wait()
		close(done)
	}()

	pr.tickUntil(runCtx, done, interval, abortAfter, obs)

	<-done

	end := time.Now()
	if d := pr.measureFrom.Add(p.Duration); p.Duration > 0 && end.After(d) {
		end = d
	}

	var elapsed time.Duration
	if end.After(pr.measureFrom) {
		elapsed = end.Sub(pr.measureFrom)
	}

	if !end.Before(pr.measureFrom) {
		pr.reg.Tick(end)
	}

	res := &PhaseResult{
		Phase:      p,
		Start:      start,
		Elapsed:    elapsed,
		Registry:   pr.reg,
		Status:     StatusCompleted,
		FirstError: pr.firstError(),
	}

	var ae *abortError

	switch cause := context.Cause(runCtx); {
	case errors.As(cause, &ae):
		res.Status, res.Reason = StatusAborted, ae.reason
	case ctx.Err() != nil:
		res.Status, res.Reason = StatusInterrupted, "interrupted by the user"
	}

	obs.PhaseEnded(p, res)

	return res
}

// tickUntil merges intervals and checks the watchdog until the workers are
// done.
func (pr *phaseRun) tickUntil(ctx context.Context, done <-chan struct{}, interval, abortAfter time.Duration, obs Observer) {
	next := pr.measureFrom.Add(interval)
	if pr.phase.Warmup > interval {
		next = time.Now().Add(interval)
	}

	timer := time.NewTimer(time.Until(next))
	defer timer.Stop()

	for {
		select {
		case <-done:
			return
		case <-timer.C:
		}

		now := time.Now()

		switch {
		case now.Before(pr.measureFrom):
			obs.Warmup(pr.phase, pr.measureFrom.Sub(now))

			// The first measured tick is one interval after warm-up ends.
			next = now.Add(interval)
			if left := pr.measureFrom.Sub(now); left <= interval {
				next = pr.measureFrom.Add(interval)
			}
		case ctx.Err() == nil:
			iv := pr.reg.Tick(now)
			obs.Interval(pr.phase, iv, now.Sub(pr.measureFrom))

			// Schedule from the end of warm-up, not from now, so the
			// interval grid does not drift with slow ticks.
			k := now.Sub(pr.measureFrom)/interval + 1
			next = pr.measureFrom.Add(k * interval)
		default:
			// Stopping: the final tick happens after the workers are done.
			next = now.Add(interval)
		}

		if silent := now.Sub(time.Unix(0, pr.lastSuccess.Load())); silent > abortAfter {
			reason := fmt.Sprintf("no operation succeeded for %s", silent.Truncate(time.Second))
			if err := pr.firstError(); err != nil {
				reason += fmt.Sprintf(" (first error: %s)", errkind.Of(err))
			}

			pr.cancel(&abortError{reason: reason})
		}

		timer.Reset(time.Until(next))
	}
}
