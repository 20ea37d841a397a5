package alarm

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// timerfdAlarm is the Linux alarm: a timerfd on CLOCK_MONOTONIC, the clock
// behind time.Now's monotonic reading. Its expiry makes the descriptor
// readable, which wakes the Go runtime's poller at once, with the kernel
// timer's resolution rather than the millisecond of the runtime's own timer
// wait. Wait parks the goroutine in that poller, so it costs no CPU.
type timerfdAlarm struct {
	f *os.File
}

// newPlatform returns the timerfd alarm.
func newPlatform() (Alarm, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("alarm: timerfd_create: %w", err)
	}

	// A non-blocking descriptor makes os.NewFile register it with the
	// runtime poller, so Read parks instead of blocking a thread, and
	// Close interrupts it.
	return &timerfdAlarm{f: os.NewFile(uintptr(fd), "alarm-timerfd")}, nil
}

// Set arms the timer relative to now. A zero it_value would disarm it, so
// an elapsed deadline is armed for a nanosecond, which rings at once. The
// setting also clears an expiry not yet read, which at most turns that
// ring into the new one.
func (a *timerfdAlarm) Set(d time.Duration) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(d.Nanoseconds(), 1))}

	rc, err := a.f.SyscallConn()
	if err != nil {
		return // closed
	}

	// Control holds the descriptor open for the call, so a concurrent
	// Close cannot hand its number to another file in between. It fails
	// only on a closed file, when there is nothing left to wake.
	_ = rc.Control(func(fd uintptr) {
		_ = unix.TimerfdSettime(int(fd), 0, &spec, nil)
	})
}

// Wait reads the expiry count, parking until the timer rings.
func (a *timerfdAlarm) Wait() bool {
	var buf [8]byte

	// os.File retries EINTR and parks on EAGAIN itself. Any other error is
	// unexpected; reporting it as a ring is safe, since the scheduler
	// releases nothing early and sets the alarm again.
	_, err := a.f.Read(buf[:])

	return !errors.Is(err, os.ErrClosed)
}

// Close closes the descriptor, which ends a Wait in progress.
func (a *timerfdAlarm) Close() error {
	return a.f.Close()
}
