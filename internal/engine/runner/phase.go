// Package runner is the load engine: it runs a phase's workers against the
// server, records every operation into per-worker histogram handles, merges
// them each interval, and stops on time, on an operation count, on a dead
// server or when its context is cancelled.
//
// A phase has one load model: closed-loop workers (each issues its next
// operation when the previous one returned), possibly with a ramped number of
// workers; open-loop (operations start on a schedule computed from the
// phase's start, latency counted from the scheduled start); or growth blocks.
// Each model is an Executor, registered by name in executor.go and written in
// a file of its own; RunPhase finds the phase's through the registry and
// wraps it in what every phase shares (drive). Background jobs run beside any
// of them at a fixed or latency-paced rate.
//
// A worker's iteration is one operation of the mix, a composite operation, or
// one pass of the phase's sequence; the last two are also measured as units
// of their own beside their operations (units.go).
package runner

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mongobench/mongobench/internal/engine/errkind"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/stats/metrics"
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
	// Name is "load_<collection>" or the phase's name.
	Name string

	// Model is the load model (see workload.Model*), "load" for loading.
	Model string

	// Concurrency is the number of workers (in-flight slots when open-loop).
	Concurrency int

	// Warmup precedes measurement; nothing started in it is recorded.
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

	// Registry holds the interval snapshots and cumulative histograms of
	// latency: response time, from the intended start.
	Registry *metrics.Registry

	// Service holds service time (from the actual send) of open-loop
	// phases, with the same operations and intervals; nil when closed-loop,
	// where the two are the same.
	Service *metrics.Registry

	// Schedule describes how well an open-loop schedule was kept.
	Schedule *ScheduleStats

	// Targets are the planned rate or concurrency at each interval's end.
	Targets []Target

	// Blocks are the growth blocks of a blocks phase.
	Blocks []Block

	// Background are the phase's background jobs.
	Background []BackgroundResult

	// Status says how the phase ended, Reason why when not completed.
	Status Status
	Reason string

	// FirstError is the first failure seen (nil if none), for messages.
	FirstError error

	// Starved counts the waits of an external client's workers on an
	// empty queue of operations (see external.go); 0 for the Go engine.
	Starved int64
}

// Target is the plan at one interval's end.
type Target struct {
	// Elapsed is the interval's end, from the end of warm-up.
	Elapsed time.Duration

	// Rate is the planned rate (open-loop), 0 otherwise.
	Rate float64

	// Concurrency is the planned number of workers (closed-loop), 0
	// otherwise.
	Concurrency int
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
	svc         *metrics.Registry
	measureFrom time.Time

	cancel context.CancelCauseFunc

	// issueCtx is done when no new operation may start: at any stop, and
	// also when max_operations is reached, which must not cut off the
	// operations already in flight (their tickets were valid).
	issueCtx  context.Context
	stopIssue context.CancelFunc

	// maxOps and issued implement max_operations: a worker takes a ticket
	// before each measured operation.
	maxOps    int64
	issued    atomic.Int64
	exhausted atomic.Bool

	// lastTick is the end of the last merged interval, guarded by tickMu,
	// which also serialises ticks from the ticker and from block ends.
	tickMu   sync.Mutex
	lastTick time.Time

	// lastSuccess (unix nanoseconds) lets the watchdog see a dead server.
	lastSuccess atomic.Int64

	// netErrAt (unix nanoseconds) is when the first network error after
	// the last success happened (older than lastSuccess when none), and
	// netErr the first network error of the phase; with unreachable and
	// abortAfter they decide an early stop (see abort.go).
	netErrAt                atomic.Int64
	netErr                  atomic.Pointer[error]
	unreachable, abortAfter time.Duration

	// firstErr keeps the first failure for messages.
	firstErr atomic.Pointer[error]

	// runCtx is the phase's context; watchdog enforces operation timeouts.
	runCtx   context.Context
	watchdog watchdog

	// onTick hooks run after each merged interval, in the ticker goroutine
	// (pacing controllers, target recording).
	onTick []func(iv metrics.Interval, now time.Time)

	// stream sends each interval to the phase's sink; nil when there is
	// none.
	stream *intervalStream
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
		pr.exhausted.Store(true)
		pr.stopIssue()

		return false
	}

	return true
}

// handles are one worker's recorders: response time, and service time for
// open-loop phases (nil otherwise), and its operation slot for timeouts.
type handles struct {
	resp, svc *metrics.Handle
	slot      *opSlot

	// clock times the decoding of the worker's current operation.
	clock *op.DecodeClock
}

// newHandles returns a worker's recorders.
func (pr *phaseRun) newHandles() handles {
	h := handles{resp: pr.reg.NewHandle(), slot: pr.watchdog.slot(pr.runCtx), clock: &op.DecodeClock{}}
	if pr.svc != nil {
		h.svc = pr.svc.NewHandle()
	}

	return h
}

// record files one finished operation. intended is when it should have
// started (the actual start for closed-loop workers): response time counts
// from it, so a stall delays the schedule's operations and shows in their
// latency instead of hiding behind a waiting client. Operations intended
// during warm-up are dropped, and so are those cut off by the phase's own
// stop, which are artefacts of stopping, not server behaviour. It returns
// false only for those.
func (pr *phaseRun) record(ctx context.Context, h handles, op int, intended, start, end time.Time, docs int64, err error) bool {
	var kind string

	if err == nil {
		pr.lastSuccess.Store(end.UnixNano())
	} else {
		kind = errkind.Of(err)
		if ctx.Err() != nil && (kind == errkind.Canceled || kind == errkind.Timeout) {
			return false
		}

		pr.noteError(err)

		if kind == errkind.Network {
			pr.noteNetworkError(err, end)
		}
	}

	if intended.Before(pr.measureFrom) {
		return true
	}

	h.resp.Record(op, end.Sub(intended), docs, kind)

	if h.svc != nil {
		h.svc.Record(op, end.Sub(start), docs, kind)
	}

	return true
}

// noteError keeps the first failure. It is a function of its own so that
// only failing operations pay for moving the error to the heap.
func (pr *phaseRun) noteError(err error) {
	pr.firstErr.CompareAndSwap(nil, &err)
}

// runFunc runs a phase's workers and returns when they are all done: when
// ctx is done or the work is exhausted.
type runFunc func(ctx context.Context, pr *phaseRun)

// driveConfig is what drive needs besides the executor.
type driveConfig struct {
	phase      Phase
	ops        []string
	service    bool
	interval   time.Duration
	abortAfter time.Duration
	obs        Observer

	// unreachable aborts the phase when operations fail with network
	// errors and nothing succeeded for this long (0: never).
	unreachable time.Duration

	// setup runs after the registries exist and before the executor
	// starts; it may add onTick hooks.
	setup func(pr *phaseRun)

	// startAt, when in the future, is when the phase starts (Engine.StartAt).
	startAt time.Time

	// units describes the registries' measured units (nil: none).
	units *bound

	// sink receives each closed interval (nil: nobody), keep bounds the
	// intervals the registries retain (0: all), and planned and jobs are
	// where the executor and the background jobs leave the plan points
	// and pacing decisions the sink is sent with each interval.
	sink    IntervalSink
	keep    int
	planned *PhaseResult
	jobs    []*backgroundJob
}

// drive runs a phase: starts the executor, ticks the registries every
// interval from the end of warm-up (scheduled from that instant, so ticks
// never drift), watches for a dead server, and collects the result.
func drive(ctx context.Context, cfg driveConfig, exec runFunc) *PhaseResult {
	p := cfg.phase
	start := waitStart(ctx, cfg.startAt)
	pr := &phaseRun{
		phase:       p,
		measureFrom: start.Add(p.Warmup),
		maxOps:      p.MaxOps,
		unreachable: cfg.unreachable,
		abortAfter:  cfg.abortAfter,
	}
	pr.lastSuccess.Store(start.UnixNano())

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	pr.cancel = cancel
	pr.runCtx = runCtx
	pr.issueCtx, pr.stopIssue = context.WithCancel(runCtx)

	go pr.watchdog.run(runCtx, pr.checkAbort)

	defer pr.stopIssue()

	if p.Duration > 0 {
		// A cancel rather than a context deadline: operations cut off by
		// the planned end then fail as cancelled, not as timeouts.
		t := time.AfterFunc(time.Until(pr.measureFrom.Add(p.Duration)), func() { cancel(errStopPlanned) })
		defer t.Stop()
	}

	// The first interval starts when measurement does: nothing is recorded
	// before, since record drops operations intended during warm-up.
	pr.reg = metrics.NewRegistry(cfg.ops)
	pr.reg.Reset(pr.measureFrom)

	if cfg.service {
		pr.svc = metrics.NewRegistry(cfg.ops)
		pr.svc.Reset(pr.measureFrom)
	}

	if cfg.units != nil {
		cfg.units.markUnits(pr.reg)
		cfg.units.markUnits(pr.svc)
	}

	pr.reg.Retain(cfg.keep)

	if pr.svc != nil {
		pr.svc.Retain(cfg.keep)
	}

	if cfg.sink != nil {
		pr.stream = &intervalStream{sink: cfg.sink, planned: cfg.planned, jobs: cfg.jobs}
	}

	if cfg.setup != nil {
		cfg.setup(pr)
	}

	cfg.obs.PhaseStarted(p)

	done := make(chan struct{})

	go func() {
		defer close(done)
		exec(runCtx, pr)
	}()

	pr.tickUntil(runCtx, done, cfg.interval, cfg.obs)

	end := time.Now()
	if d := pr.measureFrom.Add(p.Duration); p.Duration > 0 && end.After(d) {
		end = d
	}

	// A regular tick may have fired just after the planned end, before the
	// stop took effect: the final interval never ends before the last one.
	pr.tickMu.Lock()
	if end.Before(pr.lastTick) {
		end = pr.lastTick
	}
	pr.tickMu.Unlock()

	var elapsed time.Duration
	if end.After(pr.measureFrom) {
		elapsed = end.Sub(pr.measureFrom)
	}

	if !end.Before(pr.measureFrom) {
		pr.tick(end)
	}

	res := &PhaseResult{
		Phase:      p,
		Start:      start,
		Elapsed:    elapsed,
		Registry:   pr.reg,
		Service:    pr.svc,
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

	return res
}

// waitStart waits until at (or until ctx is done) and returns the phase's
// start: at itself when the wait ran its course, so that every process
// waiting for the same instant records the same start, else now.
func waitStart(ctx context.Context, at time.Time) time.Time {
	now := time.Now()
	d := at.Sub(now)

	if at.IsZero() || d <= 0 {
		return now
	}

	t := time.NewTimer(d)
	defer t.Stop()

	select {
	case <-t.C:
		// The same instant as at, with this clock's monotonic reading
		// (at, read from a flag or the database, has none), so that the
		// phase's timers and intervals do not follow a wall-clock step.
		return now.Add(d)
	case <-ctx.Done():
		return time.Now()
	}
}

// tick merges one interval in both registries and runs the hooks.
func (pr *phaseRun) tick(now time.Time) metrics.Interval {
	pr.tickMu.Lock()
	defer pr.tickMu.Unlock()

	if now.Before(pr.lastTick) {
		now = pr.lastTick
	}

	pr.lastTick = now

	iv := pr.reg.Tick(now)

	var svc *metrics.Interval

	if pr.svc != nil {
		s := pr.svc.Tick(now)
		svc = &s
	}

	for _, f := range pr.onTick {
		f(iv, now)
	}

	if pr.stream != nil {
		pr.stream.send(pr, iv, svc)
	}

	return iv
}

// tickUntil merges intervals and checks the watchdog until the executor is
// done.
func (pr *phaseRun) tickUntil(ctx context.Context, done <-chan struct{}, interval time.Duration, obs Observer) {
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
		case ctx.Err() == nil && (pr.phase.Duration == 0 || now.Before(pr.measureFrom.Add(pr.phase.Duration))):
			iv := pr.tick(now)
			obs.Interval(pr.phase, iv, now.Sub(pr.measureFrom))

			// Schedule from the end of warm-up, not from now, so the
			// interval grid does not drift with slow ticks.
			k := now.Sub(pr.measureFrom)/interval + 1
			next = pr.measureFrom.Add(k * interval)
		default:
			// Stopping: the final tick happens after the workers are done.
			next = now.Add(interval)
		}

		pr.checkAbort(now)

		timer.Reset(time.Until(next))
	}
}

// workers runs n goroutines of f and waits for them.
func workers(n int, f func(w int)) {
	var wg sync.WaitGroup

	for w := range n {
		wg.Go(func() { f(w) })
	}

	wg.Wait()
}
