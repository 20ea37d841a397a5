package schedule

import "time"

// Point is one interval's entry in a [Trajectory]: the pacing controller's
// decision at the end of an interval and what it was based on.
type Point struct {
	// Offset is when the decision was taken, from the phase's start: the
	// end of the interval that Observed and Samples describe, and the start
	// of the interval that runs at Rate.
	Offset time.Duration

	// Rate is the rate decided at Offset, in operations per second, which
	// the following interval runs at.
	Rate float64

	// Observed is the latency measured over the interval that ended at
	// Offset (for example its p99).
	Observed time.Duration

	// Samples is the number of operations that completed in that interval.
	Samples int64

	// Action is the decision that led from the previous rate to Rate.
	Action Action
}

// Trajectory is the record of an adaptive phase, one [Point] per interval in
// order, so that results can show how the rate moved and why. The engine
// normally starts it with the starting rate at offset 0 (no samples, hold).
type Trajectory []Point

// HighestSustained returns the highest rate whose following interval's
// observed latency stayed below high, with at least one completed operation
// to judge by: the answer to "how fast may the background job run". It is 0
// when no rate qualifies, including for the last point, whose following
// interval was never observed.
func (t Trajectory) HighestSustained(high time.Duration) float64 {
	best := 0.0

	for i := 0; i+1 < len(t); i++ {
		next := t[i+1]
		if next.Samples > 0 && next.Observed < high && t[i].Rate > best {
			best = t[i].Rate
		}
	}

	return best
}
