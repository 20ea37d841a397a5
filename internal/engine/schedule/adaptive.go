package schedule

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// Adaptive is a [Pacer] whose rate changes over the phase, typically at
// interval boundaries by the pacing controller ([PacingConfig.Next]). The
// rate is piecewise constant: every change closes the current segment and
// opens a new one, recording the exact cumulative operation count at the
// change, so due times stay anchored to the phase's start and the rate
// never drifts however often it changes.
//
// SetRate and Due may be called concurrently (typically from a controller
// goroutine and a scheduler goroutine).
type Adaptive struct {
	duration time.Duration

	mu   sync.Mutex
	segs []segment // ordered by start; segs[0].start == 0
}

// segment is a stretch of constant rate.
type segment struct {
	start time.Duration // offset at which the segment begins
	count float64       // operations due before start
	rate  float64       // operations per second, positive
}

// NewAdaptive makes a pacer that starts at rate operations per second and
// ends at duration (0: never). It fails when the rate is not a positive
// finite number or the duration is negative.
func NewAdaptive(rate float64, duration time.Duration) (*Adaptive, error) {
	if !positiveFinite(rate) {
		return nil, fmt.Errorf("rate: must be a positive number of operations per second, got %v", rate)
	}

	if duration < 0 {
		return nil, fmt.Errorf("duration: must not be negative, got %v", duration)
	}

	return &Adaptive{duration: duration, segs: []segment{{rate: rate}}}, nil
}

// SetRate changes the rate to rate operations per second from offset at on.
// The operations due before at keep their due times; the count reached at
// at is carried over exactly, so the new rate continues the schedule
// instead of restarting it.
//
// Changes must come in order: an at before the previous change is moved up
// to it, which replaces the previous change's rate. A change that leaves
// the rate as it is records nothing. An operation whose due time was already
// asked for and lies after at may now be due earlier or later: a scheduler
// that is waiting for it asks again (see [Schedule.Peek]). SetRate fails,
// changing nothing, when the rate is not a positive finite number; pausing
// is not supported because a scheduler could not know when to ask again.
func (a *Adaptive) SetRate(at time.Duration, rate float64) error {
	if !positiveFinite(rate) {
		return fmt.Errorf("rate: must be a positive number of operations per second, got %v", rate)
	}

	a.mu.Lock()
	defer a.mu.Unlock()

	last := &a.segs[len(a.segs)-1]

	switch {
	case rate == last.rate:
	case at <= last.start:
		last.rate = rate
	default:
		count := last.count + (at-last.start).Seconds()*last.rate
		a.segs = append(a.segs, segment{start: at, count: count, rate: rate})
	}

	return nil
}

// Rate returns the current rate, the one set last.
func (a *Adaptive) Rate() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()

	return a.segs[len(a.segs)-1].rate
}

// Due returns the offset at which the cumulative count of the piecewise
// constant rate reaches n, assuming the current rate goes on for ever; the
// segment is found by binary search. ok is false at or after the pacer's
// duration.
func (a *Adaptive) Due(n uint64) (time.Duration, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()

	x := float64(n)

	// The last segment whose count does not exceed n; segs[0].count is 0.
	i := sort.Search(len(a.segs), func(i int) bool { return a.segs[i].count > x }) - 1
	seg := a.segs[i]

	off, ok := seconds((x - seg.count) / seg.rate)
	if !ok {
		return 0, false
	}

	off += seg.start
	if off < seg.start {
		return 0, false // overflow
	}

	// Rounding must not push an operation past the start of the next
	// segment, which would break the order of due times.
	if i+1 < len(a.segs) {
		off = min(off, a.segs[i+1].start)
	}

	if a.duration > 0 && off >= a.duration {
		return 0, false
	}

	return off, true
}
