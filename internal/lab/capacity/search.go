package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/mongobench/mongobench/internal/results/result"
)

// StepFunc runs one open-loop step at rate operations per second and
// returns it judged (see Judge); kind is result.CapacityStepRate or
// result.CapacityStepConfirm.
type StepFunc func(ctx context.Context, kind string, rate float64) (result.CapacityStep, error)

// SearchOptions bound the rate search.
type SearchOptions struct {
	// Start is the first rate tried, operations per second.
	Start float64
	// Max is the highest rate tried: reaching it with the SLO met ends
	// the search ("at least Max").
	Max float64
	// Growth multiplies the rate while it meets the SLO (> 1).
	Growth float64
	// Resolution ends the bisection when the highest passing and lowest
	// failing rates are this close, relative to the former (e.g. 0.05).
	Resolution float64
	// MaxSteps bounds the number of steps, confirmations included.
	MaxSteps int
	// Progress, when set, is told about every step as it ends.
	Progress func(result.CapacityStep)
}

// Check reports options the search cannot work with, naming the flag.
func (o SearchOptions) Check() error {
	switch {
	case !(o.Start > 0) || math.IsInf(o.Start, 0):
		return errors.New("--start-rate must be > 0")
	case !(o.Max >= o.Start) || math.IsInf(o.Max, 0):
		return errors.New("--max-rate must be at least --start-rate")
	case !(o.Growth > 1) || o.Growth > 100:
		return errors.New("--growth must be above 1 and at most 100")
	case !(o.Resolution > 0) || o.Resolution >= 1:
		return errors.New("--resolution must be above 0% and below 100%")
	case o.MaxSteps < 3:
		return errors.New("--max-steps must be at least 3")
	}

	return nil
}

// confirmations bounds the confirmation runs: a confirmation that fails
// reopens the bisection below its rate, once more.
const confirmations = 2

// Search finds the highest rate that meets the SLO: it grows the rate by
// Growth from Start while steps pass, then bisects between the highest
// passing and the lowest failing rate until they are Resolution apart
// (when nothing passes, it divides by Growth until something does, down to
// Start/Growth⁴), runs a step just below the candidate when nothing there
// passed beyond doubt (so that the interval has a near lower end), then
// confirms the candidate with a run of its own (a failed confirmation
// reopens the bisection below it, once). A
// step the client limited ends the search at once: its rate says nothing
// about the server. The returned Capacity holds every step.
func Search(ctx context.Context, o SearchOptions, step StepFunc) (*result.Capacity, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}

	s := &search{opts: o, step: step, capa: &result.Capacity{Broke: -1}}

	if err := s.run(ctx); err != nil {
		return s.capa, err
	}

	s.finish()

	return s.capa, nil
}

type search struct {
	opts SearchOptions
	step StepFunc
	capa *result.Capacity

	// lo is the highest passing rate (0: none), hi the lowest failing
	// one (0: none).
	lo, hi float64
	client bool
}

func (s *search) try(ctx context.Context, kind string, rate float64) (result.CapacityStep, error) {
	st, err := s.step(ctx, kind, rate)
	if err != nil {
		return st, err
	}

	s.capa.Steps = append(s.capa.Steps, st)

	if s.opts.Progress != nil {
		s.opts.Progress(st)
	}

	if st.Cause == CauseClient {
		s.client = true
	}

	return st, nil
}

func (s *search) budget() bool { return len(s.capa.Steps) < s.opts.MaxSteps-1 } // one left to confirm

func (s *search) run(ctx context.Context) error {
	// Grow.
	for r := s.opts.Start; s.budget(); r = min(r*s.opts.Growth, s.opts.Max) {
		st, err := s.try(ctx, result.CapacityStepRate, r)
		if err != nil || s.client {
			return err
		}

		if !st.Passed {
			s.hi = r
			break
		}

		s.lo = r
		if r >= s.opts.Max {
			break
		}
	}

	// Nothing passed yet: come down until something does.
	floor := s.opts.Start / math.Pow(s.opts.Growth, 4)
	for s.lo == 0 && s.hi > floor && s.budget() {
		if err := s.narrow(ctx, s.hi/s.opts.Growth); err != nil || s.client {
			return err
		}
	}

	// Bisect, then confirm. A confirmation that fails is one more failing
	// step at that rate: near the capacity a step passes or fails by the
	// noise of the measurement, so the search bisects again below it,
	// between the next lower passing rate and this one, and confirms the
	// new candidate, rather than falling back to a rate far below.
	for range confirmations {
		if err := s.bisect(ctx); err != nil || s.client {
			return err
		}

		if s.lo == 0 || len(s.capa.Steps) >= s.opts.MaxSteps {
			return nil
		}

		if err := s.bracket(ctx); err != nil || s.client {
			return err
		}

		st, err := s.try(ctx, result.CapacityStepConfirm, s.lo)
		if err != nil || s.client {
			return err
		}

		if st.Passed {
			s.capa.Confirmed = true
			return nil
		}

		s.hi, s.lo = s.lo, s.passBelow(s.lo)
	}

	return nil
}

// bracket runs one step just below the candidate, at its rate less the
// resolution, when no step from there up to the candidate met every
// objective beyond doubt. The capacity's interval starts at the highest
// such step (see interval), and near the capacity a pass is rarely beyond
// doubt: without this step that end could be a coarse step of the growth,
// half the candidate or less, and the interval would say nothing. Its
// outcome does not move the candidate; the confirmation decides that.
func (s *search) bracket(ctx context.Context) error {
	below := s.lo * (1 - s.opts.Resolution)

	for _, st := range s.capa.Steps {
		if st.Passed && certain(st) && st.OfferedRate >= below && st.OfferedRate <= s.lo {
			return nil
		}
	}

	if !s.budget() {
		return nil
	}

	_, err := s.try(ctx, result.CapacityStepRate, below)

	return err
}

// bisect halves the interval between the highest passing and the lowest
// failing rate until they are Resolution apart, leaving a step of the
// budget to confirm.
func (s *search) bisect(ctx context.Context) error {
	for s.lo > 0 && s.hi > 0 && (s.hi-s.lo) > s.opts.Resolution*s.lo && s.budget() {
		if err := s.narrow(ctx, (s.lo+s.hi)/2); err != nil || s.client {
			return err
		}
	}

	return nil
}

// narrow runs a rate step at r and makes r the highest passing rate or the
// lowest failing one, as the step went: the move of both the descent and
// the bisection.
func (s *search) narrow(ctx context.Context, r float64) error {
	st, err := s.try(ctx, result.CapacityStepRate, r)
	if err != nil || s.client { // a client-limited step says nothing of the server's rate
		return err
	}

	if st.Passed {
		s.lo = r
	} else {
		s.hi = r
	}

	return nil
}

// lowestBreak is the index of the step where the SLO broke: the lowest
// rate that failed for the server's sake (not the client's); -1 when none.
func lowestBreak(steps []result.CapacityStep) int {
	broke := -1

	for i, st := range steps {
		if !st.Passed && st.Cause != CauseClient && (broke < 0 || st.OfferedRate < steps[broke].OfferedRate) {
			broke = i
		}
	}

	return broke
}

// passBelow is the highest rate below r that passed, 0 when none.
func (s *search) passBelow(r float64) float64 {
	best := 0.0

	for _, st := range s.capa.Steps {
		if st.Passed && st.OfferedRate < r {
			best = max(best, st.OfferedRate)
		}
	}

	return best
}

// finish sets the result's rate, its interval, the step that broke and the
// verdict.
func (s *search) finish() {
	c := s.capa
	if c.Confirmed || s.client { // a client-limited search's rate is a lower bound
		c.MaxRate = s.lo
	}

	c.ClientLimited = s.client

	c.Broke = lowestBreak(c.Steps)

	if !s.client { // a lower bound has no interval
		c.MaxRateCI = s.interval()
	}
	c.Verdict = s.verdict()
}

// interval bounds the capacity: below by the highest rate that met the SLO
// beyond doubt (each objective's CI on its side of the limit), as achieved
// (what was sustained), at most the confirmation run's achieved rate; above
// by the lowest rate that broke it beyond doubt, else the lowest that broke
// it, else the highest tried. The bisection's resolution and the
// measurement noise both widen it.
func (s *search) interval() [2]float64 {
	c := s.capa
	if c.MaxRate == 0 {
		return [2]float64{}
	}

	lo, hi := 0.0, 0.0
	hiAny := 0.0

	for _, st := range c.Steps {
		switch {
		case st.Passed && st.OfferedRate <= c.MaxRate && certain(st):
			lo = max(lo, st.AchievedRate)
		case !st.Passed && st.OfferedRate > c.MaxRate:
			if certain(st) && (hi == 0 || st.OfferedRate < hi) {
				hi = st.OfferedRate
			}

			if hiAny == 0 || st.OfferedRate < hiAny {
				hiAny = st.OfferedRate
			}
		}
	}

	if conf := c.Steps[len(c.Steps)-1]; conf.Kind == result.CapacityStepConfirm && conf.Passed {
		lo = min(lo, conf.AchievedRate)
	}

	switch {
	case hi > 0:
	case hiAny > 0:
		hi = hiAny
	default:
		hi = c.MaxRate // the search hit --max-rate: the capacity is at least this
	}

	return [2]float64{lo, max(hi, c.MaxRate)}
}

func (s *search) verdict() string {
	c := s.capa

	broke := ""
	if c.Broke >= 0 {
		b := c.Steps[c.Broke]
		broke = fmt.Sprintf("; the SLO broke at %.1f ops/s (%s: %s)", b.OfferedRate, b.Cause, b.Why)
	}

	switch {
	case s.client && c.MaxRate > 0:
		return fmt.Sprintf("the client limited the search: the server sustains at least %.1f ops/s within the SLO (run mongobench on a bigger machine or shard it to go further)%s", c.MaxRate, broke)
	case s.client:
		return "the client limited the search before any rate was confirmed: mongobench's own process is the bottleneck" + broke
	case c.MaxRate == 0:
		return "no rate tried met the SLO" + broke
	case c.Broke < 0:
		return fmt.Sprintf("the SLO held up to --max-rate: the capacity is at least %.1f ops/s", c.MaxRate)
	}

	return fmt.Sprintf("maximum sustainable rate %.1f ops/s%s", c.MaxRate, broke)
}
