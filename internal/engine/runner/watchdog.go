package runner

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mongobench/mongobench/internal/engine/errkind"
)

// watchdogPeriod is how often the watchdog looks for overrunning
// operations: a timeout fires at most this much late.
const watchdogPeriod = 25 * time.Millisecond

// errOpTimeout is the cancellation cause of an operation that overran its
// timeout.
var errOpTimeout = errors.New("operation timed out")

// opTimeoutError reports an operation the watchdog cancelled. It unwraps to
// context.DeadlineExceeded, not to the driver's cancellation error, so that
// it is classified and counted as a timeout.
type opTimeoutError struct{ err error }

func (e *opTimeoutError) Error() string { return "operation timed out: " + e.err.Error() }

func (e *opTimeoutError) Unwrap() error { return context.DeadlineExceeded }

// opSlot is one worker's operation context and deadline. Instead of a
// context with a deadline per operation (the engine's largest cost per
// operation), each worker keeps one cancellable context, and the phase's
// watchdog cancels it when the operation in flight overruns its deadline.
type opSlot struct {
	parent   context.Context
	deadline atomic.Int64 // unix nanoseconds; 0 when no operation is in flight
	current  atomic.Pointer[slotContext]
}

type slotContext struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// context returns the slot's context, renewed if the watchdog cancelled it.
func (sl *opSlot) context() context.Context {
	c := sl.current.Load()
	if c == nil || c.ctx.Err() != nil {
		ctx, cancel := context.WithCancelCause(sl.parent)
		c = &slotContext{ctx: ctx, cancel: cancel}
		sl.current.Store(c)
	}

	return c.ctx
}

// begin marks an operation with the given timeout as in flight.
func (sl *opSlot) begin(start time.Time, timeout time.Duration) context.Context {
	ctx := sl.context()
	sl.deadline.Store(start.Add(timeout).UnixNano())

	return ctx
}

// end marks the operation as done and turns a watchdog cancellation into a
// timeout error.
func (sl *opSlot) end(ctx context.Context, err error) error {
	sl.deadline.Store(0)

	// A network error the driver returns after the cancellation (the
	// failure of a first attempt whose retry was cut off) names the real
	// cause: it stays a network error.
	if err != nil && errors.Is(context.Cause(ctx), errOpTimeout) && errkind.Of(err) != errkind.Network {
		return &opTimeoutError{err: err}
	}

	return err
}

// watchdog cancels the operations that overran their deadlines.
type watchdog struct {
	mu    sync.Mutex
	slots []*opSlot
}

func (w *watchdog) slot(parent context.Context) *opSlot {
	sl := &opSlot{parent: parent}

	w.mu.Lock()
	w.slots = append(w.slots, sl)
	w.mu.Unlock()

	return sl
}

// inFlight counts the slots with an operation in flight.
func (w *watchdog) inFlight() int {
	w.mu.Lock()
	slots := w.slots
	w.mu.Unlock()

	n := 0

	for _, sl := range slots {
		if sl.deadline.Load() != 0 {
			n++
		}
	}

	return n
}

// run checks the slots every watchdogPeriod until ctx is done, and calls
// also (when not nil) at the same period: the phase's hang check, so that a
// hung server ends the phase within this period of abort_after, whatever
// the interval and whoever runs the operations.
func (w *watchdog) run(ctx context.Context, also func(now time.Time)) {
	t := time.NewTicker(watchdogPeriod)
	defer t.Stop()

	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			w.check(now.UnixNano())

			if also != nil {
				also(now)
			}
		}
	}
}

func (w *watchdog) check(now int64) {
	w.mu.Lock()
	slots := w.slots
	w.mu.Unlock()

	for _, sl := range slots {
		// The compare-and-swap makes sure it is still the same operation:
		// one that ended (deadline reset) or a next one (new deadline) is
		// left alone.
		if d := sl.deadline.Load(); d != 0 && now > d && sl.deadline.CompareAndSwap(d, 0) {
			if c := sl.current.Load(); c != nil {
				c.cancel(errOpTimeout)
			}
		}
	}
}
