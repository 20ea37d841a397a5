package wiretest

import (
	"container/heap"
	"runtime"
	"sync"
	"time"

	"github.com/mongobench/mongobench/internal/base/alarm"
)

// Why held replies are not released by time.Timer: see package alarm. The
// server releases held replies from one scheduler goroutine, the wakeups
// below, that sleeps on an alarm with the kernel's own resolution (a
// timerfd on Linux, woken through the same poller as the sockets) and
// wakes the replies in deadline order.
//
// Waking a thread that slept a long time still costs the kernel tens of
// microseconds on a busy machine (50-90 µs measured on a loaded 2-core
// machine for 20 ms waits, against 15-35 µs for sub-millisecond ones, when
// the process is still warm). So a wait of at least spinAfter is cut short
// by spinLead and its end spun out, yielding to the process's other
// goroutines (runtime.Gosched) as it checks the clock. Only those long
// waits spin, and only one goroutine does, so spinning takes at most
// spinLead in every spinAfter of one core (10%) however many connections
// hold replies, and none when replies are due back to back.
const (
	spinAfter = time.Millisecond
	spinLead  = 100 * time.Microsecond
)

// wakeups releases held replies at their deadlines. Holders register a
// deadline with at and wait on the channel it returns; one goroutine (run)
// sleeps on the alarm until the earliest deadline (or spinLead before it,
// then spins), closes the channels of every deadline that has passed, and
// sets the alarm for the next one.
//
// A channel is never closed before now() has reached its deadline, whatever
// the alarm does, so a reply is never sent early.
type wakeups struct {
	now   func() time.Time
	alarm alarm.Alarm

	// lead is how early a wait of at least spinAfter ends, to be spun out;
	// zero never spins, which tests on synctest's fake clock need (a
	// spinning goroutine would keep its time from moving).
	lead time.Duration

	mu      sync.Mutex // guards pending, armedAt and early
	pending deadlines
	armedAt time.Time // the deadline the alarm is set for; zero when unset
	early   bool      // the alarm is set lead before armedAt
}

// newWakeups returns a scheduler reading time from now and sleeping on a,
// that spins out the last lead of long waits (zero for none); the caller
// runs its run method in a goroutine and closes a to stop it.
func newWakeups(now func() time.Time, a alarm.Alarm, lead time.Duration) *wakeups {
	return &wakeups{now: now, alarm: a, lead: lead}
}

// at registers deadline and returns a channel closed once it has passed.
func (w *wakeups) at(deadline time.Time) <-chan struct{} {
	ch := make(chan struct{})

	w.mu.Lock()
	defer w.mu.Unlock()

	heap.Push(&w.pending, waiter{deadline: deadline, ch: ch})

	// Only an earlier deadline than the one the alarm waits for needs the
	// alarm moved; a later one is set by run after the earlier releases.
	if w.armedAt.IsZero() || deadline.Before(w.armedAt) {
		w.arm(deadline, w.now())
	}

	return ch
}

// arm sets the alarm for deadline, lead early when the wait is long enough
// to spin its end out. The caller holds mu.
func (w *wakeups) arm(deadline, now time.Time) {
	d := deadline.Sub(now)

	w.armedAt = deadline
	w.early = w.lead > 0 && d >= spinAfter

	if w.early {
		d -= w.lead
	}

	w.alarm.Set(d)
}

// run releases deadlines as the alarm rings, until the alarm is closed.
func (w *wakeups) run() {
	for w.alarm.Wait() {
		w.spin()
		w.release()
	}
}

// spin yields until the deadline the alarm was set early for has come, if
// it rang for one. The lock is not held meanwhile, so holders can register;
// one that registers an earlier deadline ends the spin at its own.
func (w *wakeups) spin() {
	w.mu.Lock()
	target, early := w.armedAt, w.early
	w.mu.Unlock()

	// Bounded: the alarm never rings early by more than lead, so this ends
	// lead after it rang at the latest, plus whatever the machine takes
	// from the thread. An alarm ringing spuriously earlier than that is
	// set again by release instead.
	if !early || target.Sub(w.now()) > w.lead {
		return
	}

	for w.now().Before(target) {
		runtime.Gosched()

		w.mu.Lock()
		target = w.armedAt // only ever moved earlier while spinning
		w.mu.Unlock()
	}
}

// release closes the channels of every deadline that has passed and sets the
// alarm for the earliest one left. An alarm that rang early releases nothing
// and is simply set again for the rest of the wait.
func (w *wakeups) release() {
	w.mu.Lock()
	defer w.mu.Unlock()

	now := w.now()

	for len(w.pending) > 0 && !w.pending[0].deadline.After(now) {
		close(heap.Pop(&w.pending).(waiter).ch)
	}

	if len(w.pending) == 0 {
		w.armedAt, w.early = time.Time{}, false
		return
	}

	w.arm(w.pending[0].deadline, now)
}

// waiter is one held reply: its deadline and the channel closed at it.
type waiter struct {
	deadline time.Time
	ch       chan struct{}
}

// deadlines is a min-heap of waiters by deadline, for container/heap.
type deadlines []waiter

func (d deadlines) Len() int           { return len(d) }
func (d deadlines) Less(i, j int) bool { return d[i].deadline.Before(d[j].deadline) }
func (d deadlines) Swap(i, j int)      { d[i], d[j] = d[j], d[i] }

// Push appends x, as container/heap requires.
func (d *deadlines) Push(x any) {
	if w, ok := x.(waiter); ok {
		*d = append(*d, w)
	}
}

// Pop removes the last element, as container/heap requires.
func (d *deadlines) Pop() any {
	old := *d
	n := len(old)
	w := old[n-1]
	old[n-1] = waiter{} // drop the channel reference for the collector
	*d = old[:n-1]

	return w
}
