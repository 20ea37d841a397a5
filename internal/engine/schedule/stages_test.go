package schedule

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// rampThenHold is the schedule of the engine-level test: from 0 to 1000/s
// over 10 s, then 1000/s for 10 s; 15,000 operations in all.
func rampThenHold() Stages {
	return NewStages(0,
		Stage{Duration: 10 * time.Second, Target: 1000},
		Stage{Duration: 10 * time.Second, Target: 1000},
	)
}

// TestShapeString checks the names shapes print as, which are those
// workload files use.
func TestShapeString(t *testing.T) {
	t.Parallel()

	for shape, want := range map[Shape]string{Linear: "linear", Step: "step", Shape(7): "Shape(7)"} {
		if got := shape.String(); got != want {
			t.Errorf("Shape(%d).String() = %q, want %q", uint8(shape), got, want)
		}
	}
}

func TestStagesDue(t *testing.T) {
	t.Parallel()

	type due struct {
		n    uint64
		want time.Duration
		ok   bool
	}

	const s = time.Second

	for _, tc := range []struct {
		name   string
		stages Stages
		due    []due
	}{
		{
			// count(t) = 50t² during the ramp.
			name:   "ramp from zero then hold",
			stages: rampThenHold(),
			due: []due{
				{0, 0, true},
				{1, 141_421_356, true},
				{50, s, true},
				{200, 2 * s, true},
				{5000, 10 * s, true},
				{6000, 11 * s, true},
				{14_999, 19_999 * time.Millisecond, true},
				{15_000, 0, false},
				{math.MaxUint64, 0, false},
			},
		},
		{
			name:   "step stage at rate zero produces nothing",
			stages: NewStages(0, Stage{Duration: 5 * s, Shape: Step}, Stage{Duration: 5 * s, Target: 10, Shape: Step}),
			due:    []due{{0, 5 * s, true}, {1, 5100 * time.Millisecond, true}, {49, 9900 * time.Millisecond, true}, {50, 0, false}},
		},
		{
			name: "pause in the middle",
			stages: NewStages(10,
				Stage{Duration: s, Target: 10, Shape: Step},
				Stage{Duration: 2 * s, Target: 0, Shape: Step},
				Stage{Duration: s, Target: 10, Shape: Step}),
			due: []due{{9, 900 * time.Millisecond, true}, {10, 3 * s, true}, {19, 3900 * time.Millisecond, true}, {20, 0, false}},
		},
		{
			// count(t) = 100t - 5t²; 500 operations in all.
			name:   "ramp down to zero",
			stages: NewStages(100, Stage{Duration: 10 * s, Target: 0}),
			due: []due{
				{0, 0, true},
				{375, 5 * s, true},
				{480, 8 * s, true},
				{499, 10*s - time.Duration(math.Sqrt(0.2)*1e9), true},
				{500, 0, false},
			},
		},
		{
			// A linear stage from 0 to 0 has no operations; then count = 25t².
			name: "ramp from zero after a zero stage",
			stages: NewStages(0,
				Stage{Duration: s, Target: 0},
				Stage{Duration: 2 * s, Target: 100}),
			due: []due{{0, s, true}, {25, 2 * s, true}, {99, s + time.Duration(math.Sqrt(99.0/25)*1e9), true}, {100, 0, false}},
		},
		{
			name:   "linear stage without change is constant",
			stages: NewStages(10, Stage{Duration: 2 * s, Target: 10}),
			due:    []due{{5, 500 * time.Millisecond, true}, {19, 1900 * time.Millisecond, true}, {20, 0, false}},
		},
		{
			name:   "zero-length stage is an instant jump",
			stages: NewStages(0, Stage{Target: 100}, Stage{Duration: s, Target: 100}),
			due:    []due{{0, 0, true}, {50, 500 * time.Millisecond, true}, {99, 990 * time.Millisecond, true}, {100, 0, false}},
		},
		{
			// 100 in the step, then count = 100t - 25t² over 2 s.
			name: "step up then ramp down",
			stages: NewStages(0,
				Stage{Duration: s, Target: 100, Shape: Step},
				Stage{Duration: 2 * s, Target: 0}),
			due: []due{{99, 990 * time.Millisecond, true}, {100, s, true}, {175, 2 * s, true}, {200, 0, false}},
		},
		{
			name:   "invalid schedule has no operations",
			stages: NewStages(-1, Stage{Duration: s, Target: 10}),
			due:    []due{{0, 0, false}},
		},
		{
			name:   "zero value has no operations",
			stages: Stages{},
			due:    []due{{0, 0, false}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			for _, d := range tc.due {
				got, ok := tc.stages.Due(d.n)
				if ok != d.ok || (got-d.want).Abs() > 2 {
					t.Errorf("Due(%d) = %v, %v; want %v, %v", d.n, got, ok, d.want, d.ok)
				}
			}
		})
	}
}

// countBefore returns the number of operations of p due before offset.
func countBefore(p Pacer, offset time.Duration) uint64 {
	var n uint64

	for {
		off, ok := p.Due(n)
		if !ok || off >= offset {
			return n
		}

		n++
	}
}

func TestStagesCountMatchesIntegral(t *testing.T) {
	t.Parallel()

	type point struct {
		offset   time.Duration
		integral float64 // of the rate function from 0 to offset
	}

	const s = time.Second

	for _, tc := range []struct {
		name   string
		stages Stages
		points []point
	}{
		{
			name:   "ramp from zero then hold",
			stages: rampThenHold(),
			points: []point{{s, 50}, {5 * s, 1250}, {10 * s, 5000}, {15 * s, 10_000}, {20 * s, 15_000}, {25 * s, 15_000}},
		},
		{
			name:   "ramp down to zero",
			stages: NewStages(100, Stage{Duration: 10 * s, Target: 0}),
			points: []point{{5 * s, 375}, {10 * s, 500}, {time.Minute, 500}},
		},
		{
			// 3t + 4t²/7 up to 7 s (49), then 2/s for 3 s (55), then
			// 2t - t²/5 for 5 s (60).
			name: "mixed shapes and fractional counts",
			stages: NewStages(3,
				Stage{Duration: 7 * s, Target: 11},
				Stage{Duration: 3 * s, Target: 2, Shape: Step},
				Stage{Duration: 5 * s, Target: 0}),
			points: []point{{3500 * time.Millisecond, 17.5}, {7 * s, 49}, {8250 * time.Millisecond, 51.5}, {12500 * time.Millisecond, 58.75}, {15 * s, 60}},
		},
		{
			name: "high rates",
			stages: NewStages(0,
				Stage{Duration: 3 * s, Target: 100_000},
				Stage{Duration: 2 * s, Target: 20_000}),
			points: []point{{s, 100_000.0 / 6}, {3 * s, 150_000}, {4 * s, 230_000}, {5 * s, 270_000}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			for _, p := range tc.points {
				got := countBefore(tc.stages, p.offset)
				if math.Abs(float64(got)-p.integral) > 1 {
					t.Errorf("%d operations due before %v; the integral is %v", got, p.offset, p.integral)
				}
			}
		})
	}
}

// TestStagesDueProperties checks random schedules: due times never go
// backwards, stay within the schedule, and the operations due before each
// stage boundary match the integral up to it.
func TestStagesDueProperties(t *testing.T) {
	t.Parallel()

	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))

		start := float64(rng.IntN(500))
		stages := make([]Stage, 1+rng.IntN(6))
		integral := make([]float64, len(stages)+1)
		boundary := make([]time.Duration, len(stages)+1)
		prev := start

		for i := range stages {
			st := Stage{
				Duration: time.Duration(rng.IntN(3000)) * time.Millisecond,
				Target:   float64(rng.IntN(4)) * rng.Float64() * 300,
				Shape:    Shape(rng.IntN(2)),
			}
			stages[i] = st

			r0 := prev
			if st.Shape == Step {
				r0 = st.Target
			}

			integral[i+1] = integral[i] + (r0+st.Target)/2*st.Duration.Seconds()
			boundary[i+1] = boundary[i] + st.Duration
			prev = st.Target
		}

		s := NewStages(start, stages...)
		if boundary[len(stages)] == 0 {
			continue // invalid: an empty schedule
		}

		var last time.Duration

		for n := uint64(0); ; n++ {
			off, ok := s.Due(n)
			if !ok {
				if d := float64(n) - integral[len(stages)]; d < -1 || d > 1 {
					t.Errorf("seed %d: %d operations; the integral is %v", seed, n, integral[len(stages)])
				}

				break
			}

			if off < last || off > s.Duration() {
				t.Fatalf("seed %d: Due(%d) = %v after %v, schedule of %v", seed, n, off, last, s.Duration())
			}

			last = off
		}

		for i, b := range boundary {
			if got := countBefore(s, b); math.Abs(float64(got)-integral[i]) > 1 {
				t.Errorf("seed %d: %d operations due before %v; the integral is %v", seed, got, b, integral[i])
			}
		}
	}
}

func TestStagesRateAt(t *testing.T) {
	t.Parallel()

	type at struct {
		offset time.Duration
		want   float64
	}

	const s = time.Second

	for _, tc := range []struct {
		name   string
		stages Stages
		at     []at
	}{
		{
			name:   "ramp from zero then hold",
			stages: rampThenHold(),
			at:     []at{{-s, 0}, {0, 0}, {500 * time.Millisecond, 50}, {5 * s, 500}, {10 * s, 1000}, {19 * s, 1000}, {20 * s, 0}},
		},
		{
			name:   "step then linear",
			stages: NewStages(5, Stage{Duration: s, Target: 20, Shape: Step}, Stage{Duration: s, Target: 40}),
			at:     []at{{0, 20}, {500 * time.Millisecond, 20}, {s, 20}, {1500 * time.Millisecond, 30}, {2 * s, 0}},
		},
		{
			name:   "zero-length stage is an instant jump",
			stages: NewStages(0, Stage{Target: 100}, Stage{Duration: s, Target: 200}),
			at:     []at{{0, 100}, {500 * time.Millisecond, 150}},
		},
		{
			name:   "invalid schedule",
			stages: NewStages(math.NaN(), Stage{Duration: s, Target: 1}),
			at:     []at{{0, 0}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			for _, a := range tc.at {
				if got := tc.stages.RateAt(a.offset); math.Abs(got-a.want) > 1e-9 {
					t.Errorf("RateAt(%v) = %v; want %v", a.offset, got, a.want)
				}
			}
		})
	}
}

func TestStagesConcurrencyAt(t *testing.T) {
	t.Parallel()

	const s = time.Second

	// 1 → 10 workers over 10 s, 50 for 5 s, then down to 0 over 10 s.
	stages := NewStages(1,
		Stage{Duration: 10 * s, Target: 10},
		Stage{Duration: 5 * s, Target: 50, Shape: Step},
		Stage{Duration: 10 * s, Target: 0})

	for _, tc := range []struct {
		offset time.Duration
		want   int
	}{
		{-s, 0},
		{0, 1},
		{4900 * time.Millisecond, 5}, // 5.41
		{5 * s, 6},                   // 5.5 rounds up
		{9999 * time.Millisecond, 10},
		{10 * s, 50},
		{15 * s, 50},
		{20 * s, 25},
		{24990 * time.Millisecond, 0},
		{25 * s, 0},
		{time.Hour, 0},
	} {
		if got := stages.ConcurrencyAt(tc.offset); got != tc.want {
			t.Errorf("ConcurrencyAt(%v) = %d; want %d", tc.offset, got, tc.want)
		}
	}

	if got := NewStages(0, Stage{Duration: s, Target: 1e300, Shape: Step}).ConcurrencyAt(0); got != math.MaxInt {
		t.Errorf("ConcurrencyAt with a huge target = %d; want math.MaxInt", got)
	}
}

func TestStagesAccessors(t *testing.T) {
	t.Parallel()

	in := []Stage{{Duration: time.Second, Target: 3}, {Duration: 2 * time.Second, Target: 4, Shape: Step}}
	s := NewStages(2, in...)
	in[0].Target = 99 // the schedule keeps its own copy

	got := s.Stages()
	got[1].Target = 99 // and hands out copies

	if s.Start() != 2 || s.Duration() != 3*time.Second || s.Stages()[0].Target != 3 || s.Stages()[1].Target != 4 {
		t.Errorf("Start() = %v, Duration() = %v, Stages() = %v", s.Start(), s.Duration(), s.Stages())
	}

	if d := NewStages(-1, in...).Duration(); d != 0 {
		t.Errorf("Duration() of an invalid schedule = %v; want 0", d)
	}
}

func TestStagesValidate(t *testing.T) {
	t.Parallel()

	const s = time.Second

	for _, tc := range []struct {
		name   string
		stages Stages
		want   []string // substrings of the errors, in order
	}{
		{name: "valid", stages: rampThenHold()},
		{name: "valid with zero targets and a zero-length stage", stages: NewStages(0, Stage{}, Stage{Duration: s})},
		{name: "empty", stages: NewStages(10), want: []string{"at least one stage"}},
		{name: "zero value", stages: Stages{}, want: []string{"at least one stage"}},
		{name: "negative start", stages: NewStages(-1, Stage{Duration: s}), want: []string{"start:"}},
		{name: "NaN start", stages: NewStages(math.NaN(), Stage{Duration: s}), want: []string{"start:"}},
		{name: "infinite start", stages: NewStages(math.Inf(1), Stage{Duration: s}), want: []string{"start:"}},
		{
			name:   "negative duration",
			stages: NewStages(0, Stage{Duration: s}, Stage{Duration: -s}),
			want:   []string{"stages[1].duration:"},
		},
		{
			name:   "bad targets",
			stages: NewStages(0, Stage{Duration: s, Target: math.NaN()}, Stage{Duration: s, Target: -3}, Stage{Duration: s, Target: math.Inf(1)}),
			want:   []string{"stages[0].target:", "stages[1].target:", "stages[2].target:"},
		},
		{name: "unknown shape", stages: NewStages(0, Stage{Duration: s, Shape: 9}), want: []string{"stages[0].shape: unknown shape Shape(9)"}},
		{name: "all zero-length", stages: NewStages(5, Stage{Target: 1}, Stage{Target: 2}), want: []string{"add up to 0"}},
		{
			name:   "overflowing total",
			stages: NewStages(0, Stage{Duration: math.MaxInt64}, Stage{Duration: s}),
			want:   []string{"add up to more than"},
		},
		{
			name:   "everything wrong",
			stages: NewStages(-1, Stage{Duration: -s, Target: -1, Shape: 2}),
			want:   []string{"start:", "stages[0].duration:", "stages[0].target:", "stages[0].shape:", "add up to 0"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkErrors(t, tc.stages.Validate(), tc.want)
		})
	}
}
