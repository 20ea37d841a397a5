package schedule

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Shape says how a stage moves from the previous target to its own.
type Shape uint8

// The shapes of a stage. Linear is the zero value because a ramp is what a
// stage means unless it says otherwise (as in k6's ramping executors).
const (
	// Linear moves the value in a straight line from the previous stage's
	// target (or the start value) at the stage's start to the stage's
	// target at its end.
	Linear Shape = iota

	// Step jumps to the stage's target at the stage's start and holds it
	// for the whole stage.
	Step
)

// String returns the shape's name as written in workload files.
func (s Shape) String() string {
	switch s {
	case Linear:
		return "linear"
	case Step:
		return "step"
	default:
		return fmt.Sprintf("Shape(%d)", uint8(s))
	}
}

// Stage is one part of a ramping schedule: for Duration, the value moves to
// Target along Shape. The same type describes a ramping arrival rate (Target
// in operations per second, see [Stages.Due] and [Stages.RateAt]) and a
// ramping number of closed-loop workers (Target in workers, see
// [Stages.ConcurrencyAt]).
type Stage struct {
	// Duration is how long the stage lasts. A zero-length Linear stage is
	// an instant jump: the next stage starts from its target.
	Duration time.Duration

	// Target is the value at the stage's end (Linear) or throughout the
	// stage (Step): operations per second or workers. A rate of zero
	// produces no operations.
	Target float64

	// Shape is how the stage reaches Target.
	Shape Shape
}

// Stages is a ramping schedule in the manner of k6's ramping-arrival-rate
// and ramping-vus executors: a start value followed by a sequence of stages.
// As a [Pacer], operation n is due when the integral of the rate function
// reaches n; the schedule ends with the last stage.
//
// A Stages value is made by [NewStages], which precomputes the cumulative
// operation count at every stage boundary so that Due is O(log stages). It
// is immutable afterwards and safe for concurrent use; the zero value is an
// empty schedule with no operations.
type Stages struct {
	start  float64
	stages []Stage

	// The plan, valid only when ok is true. begin and cum have one more
	// element than stages: the end of the last stage.
	begin []time.Duration // offset at which stage i starts
	from  []float64       // value at the start of stage i
	cum   []float64       // operations due before stage i starts
	ok    bool
}

// NewStages makes a ramping schedule that starts at start (operations per
// second, or workers) and then runs the stages in order. The stages are
// copied. Invalid input does not fail here: it yields a schedule without
// operations, and [Stages.Validate] says what is wrong with it.
func NewStages(start float64, stages ...Stage) Stages {
	s := Stages{start: start, stages: append([]Stage(nil), stages...)}
	if len(s.Validate()) > 0 {
		return s
	}

	n := len(s.stages)
	s.begin = make([]time.Duration, n+1)
	s.from = make([]float64, n)
	s.cum = make([]float64, n+1)

	prev := start
	for i, st := range s.stages {
		r0 := prev
		if st.Shape == Step {
			r0 = st.Target
		}

		s.from[i] = r0
		s.begin[i+1] = s.begin[i] + st.Duration
		s.cum[i+1] = s.cum[i] + (r0+st.Target)/2*st.Duration.Seconds()
		prev = st.Target
	}

	s.ok = true

	return s
}

// Start returns the value the schedule starts from.
func (s Stages) Start() float64 { return s.start }

// Stages returns a copy of the stages, for reporting.
func (s Stages) Stages() []Stage { return append([]Stage(nil), s.stages...) }

// Duration returns the total length of the schedule, the sum of the stages'
// durations; it is zero for an invalid schedule.
func (s Stages) Duration() time.Duration {
	if !s.ok {
		return 0
	}

	return s.begin[len(s.stages)]
}

// Validate reports every problem with the schedule; a nil result means it is
// usable. Durations must not be negative and must add up to a positive
// length that fits in a time.Duration; the start value and the targets must
// be finite and not negative; shapes must be known.
func (s Stages) Validate() []error {
	var errs []error

	if !finiteNonNegative(s.start) {
		errs = append(errs, fmt.Errorf("start: must be a finite number, 0 or more, got %v", s.start))
	}

	if len(s.stages) == 0 {
		return append(errs, fmt.Errorf("stages: at least one stage is required"))
	}

	var (
		total    time.Duration
		overflow bool
	)

	for i, st := range s.stages {
		switch {
		case st.Duration < 0:
			errs = append(errs, fmt.Errorf("stages[%d].duration: must not be negative, got %v", i, st.Duration))
		case total > math.MaxInt64-st.Duration:
			overflow = true
		default:
			total += st.Duration
		}

		if !finiteNonNegative(st.Target) {
			errs = append(errs, fmt.Errorf("stages[%d].target: must be a finite number, 0 or more, got %v", i, st.Target))
		}

		if st.Shape != Linear && st.Shape != Step {
			errs = append(errs, fmt.Errorf("stages[%d].shape: unknown shape %v", i, st.Shape))
		}
	}

	switch {
	case overflow:
		errs = append(errs, fmt.Errorf("stages: the durations add up to more than %v", time.Duration(math.MaxInt64)))
	case total == 0:
		errs = append(errs, fmt.Errorf("stages: the durations add up to 0; the schedule would be empty"))
	}

	return errs
}

// Due returns the offset at which the integral of the rate function reaches
// n, more precisely the last moment at which it is still at most n, so that
// a stage at rate 0 produces no operations and its operations wait for the
// next stage with a positive rate. Within a stage the cumulative count is
// quadratic in time and is inverted analytically; the stage is found by
// binary search. ok is false after the last stage and for an invalid
// schedule.
func (s Stages) Due(n uint64) (time.Duration, bool) {
	if !s.ok {
		return 0, false
	}

	x := float64(n)

	i := sort.Search(len(s.stages), func(i int) bool { return s.cum[i+1] > x })
	if i == len(s.stages) {
		return 0, false
	}

	// The stage holds operations, so it has a positive duration and a rate
	// that is positive somewhere in it.
	d := s.stages[i].Duration
	r0, r1 := s.from[i], s.stages[i].Target
	x -= s.cum[i]

	// count(t) = r0·t + (r1-r0)·t²/(2D) = x. The positive root is written
	// as 2x / (r0 + √(r0² + 4ax)) with a = (r1-r0)/(2D): this form has no
	// cancellation when the ramp is gentle, reduces to x/r0 when the rate
	// is constant, and works for falling ramps as well as rising ones.
	var t float64

	if x > 0 {
		a := (r1 - r0) / (2 * d.Seconds())
		den := r0 + math.Sqrt(max(r0*r0+4*a*x, 0))

		t = d.Seconds()
		if den > 0 {
			t = min(2*x/den, t)
		}
	}

	off, ok := seconds(t)
	if !ok {
		return 0, false
	}

	return s.begin[i] + min(off, d), true
}

// RateAt returns the target rate at offset, in operations per second, for
// reporting the planned rate next to the achieved one. It is 0 outside the
// schedule (before 0 and from the end of the last stage on).
func (s Stages) RateAt(offset time.Duration) float64 {
	v, _ := s.at(offset)

	return v
}

// ConcurrencyAt returns the number of workers a ramping closed-loop phase
// should run at offset, reading the stages' targets as worker counts: the
// linear interpolation rounded to the nearest integer, or the step's target.
// It is 0 outside the schedule.
func (s Stages) ConcurrencyAt(offset time.Duration) int {
	v, ok := s.at(offset)
	if !ok {
		return 0
	}

	v = math.Round(v)
	if v >= math.MaxInt {
		return math.MaxInt
	}

	return int(v)
}

// at interpolates the schedule's value at offset; ok is false outside it.
func (s Stages) at(offset time.Duration) (float64, bool) {
	if !s.ok || offset < 0 || offset >= s.begin[len(s.stages)] {
		return 0, false
	}

	// Zero-length stages end where they begin and are never found.
	i := sort.Search(len(s.stages), func(i int) bool { return s.begin[i+1] > offset })
	r0, r1 := s.from[i], s.stages[i].Target
	frac := float64(offset-s.begin[i]) / float64(s.stages[i].Duration)

	return r0 + (r1-r0)*frac, true
}

// finiteNonNegative reports whether v is a finite number that is 0 or more.
func finiteNonNegative(v float64) bool {
	return v >= 0 && !math.IsInf(v, 1)
}
