package schedule

import "time"

// Schedule turns a [Pacer] into the sequence of wall-clock due times that an
// engine's scheduler goroutine waits for, one operation after another. It
// keeps nothing but the phase's start and the number of the next operation,
// so due times are always start + Due(n) and never depend on how late the
// previous operation was sent.
//
// A Schedule is used by one goroutine; it is not safe for concurrent use.
type Schedule struct {
	pacer Pacer
	start time.Time
	n     uint64
	done  bool
}

// NewSchedule starts a schedule of the pacer's operations at start, which
// should come from time.Now so that it carries a monotonic clock reading.
// A nil pacer yields an empty schedule.
func NewSchedule(p Pacer, start time.Time) *Schedule {
	return &Schedule{pacer: p, start: start, done: p == nil}
}

// Start returns the phase's start, the origin of every due time.
func (s *Schedule) Start() time.Time { return s.start }

// Issued returns the number of due times Next has handed out so far, which
// is also the number of the next operation.
func (s *Schedule) Issued() uint64 { return s.n }

// Peek returns the due time of the next operation without consuming it. A
// scheduler waiting for an [Adaptive] pacer calls it again after a rate
// change, because the change can move the due time of an operation that has
// not been handed out yet. ok is false when the schedule is over.
func (s *Schedule) Peek() (due time.Time, ok bool) {
	if s.done {
		return time.Time{}, false
	}

	off, ok := s.pacer.Due(s.n)
	if !ok {
		return time.Time{}, false
	}

	return s.start.Add(off), true
}

// Next returns the due time of the next operation and moves on to the one
// after it. ok is false when the schedule is over, and stays false.
func (s *Schedule) Next() (due time.Time, ok bool) {
	due, ok = s.Peek()
	if !ok {
		s.done = true

		return time.Time{}, false
	}

	s.n++

	return due, true
}
