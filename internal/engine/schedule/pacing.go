package schedule

import (
	"fmt"
	"math"
	"time"
)

// Action is the decision the pacing controller takes at the end of an
// interval. Its values are written to results files.
type Action string

// The controller's decisions.
const (
	// ActionUp raises the rate: the observed latency was below the low
	// threshold, so the server has room for more.
	ActionUp Action = "up"

	// ActionHold keeps the rate: the latency was between the thresholds,
	// or nothing completed and there is nothing to judge by.
	ActionHold Action = "hold"

	// ActionDown cuts the rate: the latency reached the high threshold.
	ActionDown Action = "down"
)

// PacingConfig configures the adaptive pacing controller for latency-paced
// background work: the rate goes up multiplicatively while the latency is
// comfortably low, holds while it is acceptable and comes down sharply when
// it is too high, which settles the rate where the latency sits between the
// two thresholds.
type PacingConfig struct {
	// Start is the initial rate, Min its floor and Max its ceiling, in
	// operations per second.
	Start, Min, Max float64

	// Low and High are the thresholds on the observed latency (for
	// example the p99 of the last interval): below Low the rate goes up,
	// at or above High it comes down, in between it holds.
	Low, High time.Duration

	// SpeedUp multiplies the rate when the latency is below Low (for
	// example 1.1); SlowDown multiplies it when the latency is at or above
	// High (for example 0.66). A cut larger than the raise makes the
	// controller back off quickly and probe upwards carefully.
	SpeedUp, SlowDown float64
}

// Validate reports every problem with the settings; a nil result means they
// are usable. Rates must be positive and finite with Min ≤ Start ≤ Max, the
// thresholds must satisfy 0 < Low < High so that there is a band to settle
// in, SpeedUp must be above 1 and SlowDown strictly between 0 and 1.
func (c PacingConfig) Validate() []error {
	var errs []error

	for _, r := range []struct {
		name string
		v    float64
	}{{"start", c.Start}, {"min", c.Min}, {"max", c.Max}} {
		if !positiveFinite(r.v) {
			errs = append(errs, fmt.Errorf("%s: must be a positive number of operations per second, got %v", r.name, r.v))
		}
	}

	if positiveFinite(c.Min) && positiveFinite(c.Max) {
		switch {
		case c.Min > c.Max:
			errs = append(errs, fmt.Errorf("min: %v is above max %v", c.Min, c.Max))
		case positiveFinite(c.Start) && (c.Start < c.Min || c.Start > c.Max):
			errs = append(errs, fmt.Errorf("start: %v is outside [min, max] = [%v, %v]", c.Start, c.Min, c.Max))
		}
	}

	switch {
	case c.Low <= 0:
		errs = append(errs, fmt.Errorf("low: must be positive, got %v", c.Low))
	case c.High <= c.Low:
		errs = append(errs, fmt.Errorf("high: must be above low (%v), got %v", c.Low, c.High))
	}

	if !(c.SpeedUp > 1) || math.IsInf(c.SpeedUp, 1) {
		errs = append(errs, fmt.Errorf("speed_up: must be a finite factor above 1, got %v", c.SpeedUp))
	}

	if !(c.SlowDown > 0 && c.SlowDown < 1) {
		errs = append(errs, fmt.Errorf("slow_down: must be a factor between 0 and 1 exclusive, got %v", c.SlowDown))
	}

	return errs
}

// Decide returns the controller's decision for an interval in which samples
// operations completed with the observed latency: hold when nothing
// completed, up below Low, down at or above High, hold in between.
func (c PacingConfig) Decide(observed time.Duration, samples int64) Action {
	switch {
	case samples <= 0:
		return ActionHold
	case observed < c.Low:
		return ActionUp
	case observed >= c.High:
		return ActionDown
	default:
		return ActionHold
	}
}

// Next returns the rate for the next interval from the current rate and the
// latency observed in the last interval; samples==0 (nothing completed)
// holds the rate. The result is always within [Min, Max], so an "up" at the
// ceiling or a "down" at the floor leaves the rate unchanged. A current rate
// that is not a positive finite number is replaced by Start.
func (c PacingConfig) Next(rate float64, observed time.Duration, samples int64) float64 {
	if !positiveFinite(rate) {
		rate = c.Start
	}

	switch c.Decide(observed, samples) {
	case ActionUp:
		rate *= c.SpeedUp
	case ActionDown:
		rate *= c.SlowDown
	case ActionHold:
	}

	return min(max(rate, c.Min), c.Max)
}

// positiveFinite reports whether v is a finite number above 0.
func positiveFinite(v float64) bool {
	return v > 0 && !math.IsInf(v, 1)
}
