// Package alarm is a wake-up with the kernel's timer resolution rather than
// the Go runtime's.
//
// Why: on Linux the Go runtime waits for its next timer in epoll_wait, whose
// timeout is whole milliseconds, rounded up when under one. An otherwise
// idle process therefore oversleeps a sub-millisecond timer to about 1 ms
// and a 1.2 ms timer to about 2 ms (1 ms, then 1 ms more for the remaining
// 0.2 ms). Measured on a 2-core Linux machine, a loop sleeping on a
// time.Timer until due times 1.25 ms apart woke 0.55 ms late at the median
// and 1.07 ms at the 99th percentile; the Linux Alarm below woke about
// 0.06 ms late at the median, for the same CPU. Two users need that
// precision: the test server, which holds replies for a modelled latency
// (a 2 ms model answering in 2.5 ms is a different server), and the
// open-loop scheduler, whose lateness counts in every response time it
// measures from the due time (0.5 ms of a 2 ms operation is a quarter).
package alarm

import (
	"sync"
	"time"
)

// Alarm rings once per setting. Rings may be early or spurious (a user
// checks the clock after every ring and sets the alarm again for what
// remains), but a setting must never be lost: a Set made before or during
// a Wait makes that Wait, or the next one, return.
type Alarm interface {
	// Set makes the alarm ring once, d from now, replacing any earlier
	// setting; d <= 0 rings at once. It may be called while another
	// goroutine is in Wait. On a closed alarm it does nothing.
	Set(d time.Duration)

	// Wait blocks until the alarm rings, and reports false once the alarm
	// is closed.
	Wait() bool

	// Close makes Wait return false, now and from then on.
	Close() error
}

// New returns the most precise alarm the platform offers (see the package
// comment), or an error if the platform's could not be made; NewTimer is
// then the fallback.
func New() (Alarm, error) {
	return newPlatform()
}

// Timer is the portable alarm, on a time.Timer. It has the Go runtime's
// timer resolution (see the package comment), so it serves platforms
// without a finer one and the tests, where testing/synctest's fake clock
// drives it.
type Timer struct {
	timer  *time.Timer
	closed chan struct{}
	once   sync.Once
}

// NewTimer returns an unset Timer alarm.
func NewTimer() *Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()

	return &Timer{timer: t, closed: make(chan struct{})}
}

// Set resets the timer. Since Go 1.23 a reset timer delivers no stale tick.
func (a *Timer) Set(d time.Duration) {
	a.timer.Reset(d)
}

// Wait waits for the timer or Close.
func (a *Timer) Wait() bool {
	select {
	case <-a.timer.C:
		return true
	case <-a.closed:
		return false
	}
}

// Close stops the timer and ends every Wait.
func (a *Timer) Close() error {
	a.once.Do(func() {
		a.timer.Stop()
		close(a.closed)
	})

	return nil
}
