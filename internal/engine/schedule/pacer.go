package schedule

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Pacer says when operation number n (0-based) of an open-loop phase is due,
// as an offset from the phase's start; ok=false means the phase has no
// operation n (its schedule is over).
//
// Due times never depend on when earlier operations were actually sent,
// which is what keeps the rate from drifting. Implementations return
// non-decreasing offsets for increasing n (an [Adaptive] pacer as long as its
// rate does not change in between), and once ok is false it stays false for
// every larger n.
type Pacer interface {
	Due(n uint64) (offset time.Duration, ok bool)
}

// Constant paces operations at a fixed rate, evenly spaced: operation n is
// due at n/Rate seconds. It is the pacer of a plain open-loop phase.
type Constant struct {
	// Rate is the number of operations per second; it must be positive.
	Rate float64

	// Duration ends the schedule: operations due at or after it do not
	// exist. Zero means the schedule never ends.
	Duration time.Duration
}

// Due returns n/Rate seconds, rounded to the nearest nanosecond. Integer
// rates are computed with exact integer arithmetic, so operation 10⁹ at
// 3 ops/s is as exactly placed as operation 1; other rates are computed in
// float64 directly from n, never by adding periods. An invalid Rate yields
// no operations, and offsets beyond the range of time.Duration (about 292
// years) are treated as the end of the schedule.
func (c Constant) Due(n uint64) (time.Duration, bool) {
	if !(c.Rate > 0) || math.IsInf(c.Rate, 0) {
		return 0, false
	}

	var (
		offset time.Duration
		ok     bool
	)

	if c.Rate == math.Trunc(c.Rate) && c.Rate < 1<<63 {
		offset, ok = divideRound(n, uint64(c.Rate))
	} else {
		offset, ok = seconds(float64(n) / c.Rate)
	}

	if !ok || (c.Duration > 0 && offset >= c.Duration) {
		return 0, false
	}

	return offset, true
}

// Validate reports every problem with the pacer; a nil result means it is
// usable. It exists so that configuration errors are found before a phase
// starts instead of producing an empty schedule.
func (c Constant) Validate() []error {
	var errs []error

	if !(c.Rate > 0) || math.IsInf(c.Rate, 0) {
		errs = append(errs, fmt.Errorf("rate: must be a positive number of operations per second, got %v", c.Rate))
	}

	if c.Duration < 0 {
		errs = append(errs, fmt.Errorf("duration: must not be negative, got %v", c.Duration))
	}

	return errs
}

// divideRound returns n seconds divided by rate, in nanoseconds rounded to
// the nearest one, computed in 128-bit integers so that it is exact.
func divideRound(n, rate uint64) (time.Duration, bool) {
	hi, lo := bits.Mul64(n, uint64(time.Second))
	if hi >= rate {
		// The quotient does not fit in 64 bits.
		return 0, false
	}

	q, rem := bits.Div64(hi, lo, rate)
	if rem >= rate-rem {
		q++
	}

	if q > math.MaxInt64 {
		return 0, false
	}

	return time.Duration(q), true
}

// seconds converts a non-negative number of seconds to a duration rounded to
// the nearest nanosecond; ok is false when it does not fit.
func seconds(s float64) (time.Duration, bool) {
	ns := math.Round(s * float64(time.Second))

	switch {
	case math.IsNaN(ns) || ns < 0:
		return 0, false
	case ns >= math.MaxInt64: // float64(math.MaxInt64) is 2⁶³, out of range
		return 0, false
	default:
		return time.Duration(ns), true
	}
}
