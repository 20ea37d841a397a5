package runner

import (
	"time"

	"github.com/mongobench/mongobench/internal/base/alarm"
)

// maxSleep bounds one coarse wait of a sleeper, so that the open-loop
// scheduler notices rate changes and the end of the phase without a wake-up
// per operation.
const maxSleep = 50 * time.Millisecond

// fineWait is how close to its end a sleeper switches from the runtime's
// timer, which it can wait on together with the end of the phase and rate
// changes but which wakes up to a millisecond late on Linux, to the
// engine's precise alarm (Engine.NewAlarm), which it cannot: a stop or a
// rate change waits at most this long. Two milliseconds leave the coarse
// wait a millisecond of lateness to spare.
const fineWait = 2 * time.Millisecond

// sleeper waits until an instant with the precision of the engine's alarm:
// the open-loop scheduler until an operation's due time, a closed-loop
// worker through its think time. One rule for both, since the lateness of
// either is in what the run reports (the scheduler's in every response
// time, the think time's in the load offered).
type sleeper struct {
	timer *time.Timer
	fine  alarm.Alarm
}

func newSleeper(e *Engine) *sleeper {
	t := time.NewTimer(time.Hour)
	t.Stop()

	return &sleeper{timer: t, fine: e.fineAlarm()}
}

// wait waits towards end and returns when end has come, when wake is
// signalled (nil: never), after maxSleep of a coarse wait, or when stop is
// closed, reporting true only for the last; callers loop, looking again at
// what they wait for. The last fineWait before end is spent on the precise
// alarm, during which neither stop nor wake is noticed.
func (s *sleeper) wait(stop, wake <-chan struct{}, end time.Time) (stopped bool) {
	left := time.Until(end)

	switch {
	case left <= 0:
		return false
	case left > fineWait:
		s.timer.Reset(min(left-fineWait, maxSleep))

		select {
		case <-stop:
			s.timer.Stop()

			return true
		case <-wake:
			s.timer.Stop()
		case <-s.timer.C:
		}
	default:
		s.fine.Set(left)
		s.fine.Wait()
	}

	return false
}

func (s *sleeper) close() {
	s.timer.Stop()
	_ = s.fine.Close()
}
