package schedule

import (
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// change is one SetRate call.
type change struct {
	at   time.Duration
	rate float64
}

func TestAdaptiveCountMatchesIntegral(t *testing.T) {
	t.Parallel()

	type point struct {
		offset   time.Duration
		integral float64 // of the piecewise rate from 0 to offset
	}

	const (
		s  = time.Second
		ms = time.Millisecond
	)

	many := make([]change, 1000)
	for i := range many {
		many[i] = change{at: time.Duration(i+1) * 10 * ms, rate: float64(100 + 200*(i%2))}
	}

	for _, tc := range []struct {
		name     string
		start    float64
		duration time.Duration
		changes  []change
		points   []point
		segments int // segments recorded after the changes
	}{
		{
			name: "constant", start: 100,
			points:   []point{{s, 100}, {10 * s, 1000}},
			segments: 1,
		},
		{
			name: "up then down", start: 10,
			changes:  []change{{s, 100}, {3 * s, 5}},
			points:   []point{{s, 10}, {2 * s, 110}, {3 * s, 210}, {5 * s, 220}},
			segments: 3,
		},
		{
			// 1.5 at 0.5 s, 6.75 at 1.25 s, then 0.4 more per second.
			name: "fractional counts at changes", start: 3,
			changes:  []change{{500 * ms, 7}, {1250 * ms, 0.4}},
			points:   []point{{500 * ms, 1.5}, {1250 * ms, 6.75}, {11250 * ms, 10.75}},
			segments: 3,
		},
		{
			name: "change at the same offset replaces", start: 10,
			changes:  []change{{s, 20}, {s, 40}},
			points:   []point{{s, 10}, {2 * s, 50}},
			segments: 2,
		},
		{
			name: "change before the previous one is moved up to it", start: 10,
			changes:  []change{{2 * s, 20}, {s, 40}},
			points:   []point{{2 * s, 20}, {3 * s, 60}},
			segments: 2,
		},
		{
			name: "change at zero replaces the start rate", start: 10,
			changes:  []change{{0, 50}},
			points:   []point{{s, 50}},
			segments: 1,
		},
		{
			name: "same rate records nothing", start: 10,
			changes:  []change{{s, 10}, {2 * s, 10}},
			points:   []point{{3 * s, 30}},
			segments: 1,
		},
		{
			name: "duration ends the schedule", start: 10, duration: 2 * s,
			changes:  []change{{s, 100}},
			points:   []point{{2 * s, 110}, {time.Hour, 110}},
			segments: 2,
		},
		{
			name: "a thousand changes", start: 200,
			changes:  many,
			points:   []point{{5 * s, 1000}, {10 * s, 2000}, {20 * s, 5000}},
			segments: 1001,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			a, err := NewAdaptive(tc.start, tc.duration)
			if err != nil {
				t.Fatal(err)
			}

			for _, c := range tc.changes {
				if err := a.SetRate(c.at, c.rate); err != nil {
					t.Fatal(err)
				}
			}

			if len(a.segs) != tc.segments {
				t.Errorf("%d segments; want %d", len(a.segs), tc.segments)
			}

			want := tc.start
			if len(tc.changes) > 0 {
				want = tc.changes[len(tc.changes)-1].rate
			}

			if a.Rate() != want {
				t.Errorf("Rate() = %v; want %v", a.Rate(), want)
			}

			for _, p := range tc.points {
				got := countBefore(a, p.offset)
				if math.Abs(float64(got)-p.integral) > 1 {
					t.Errorf("%d operations due before %v; the integral is %v", got, p.offset, p.integral)
				}
			}

			var last time.Duration

			for n := range uint64(5000) {
				off, ok := a.Due(n)
				if !ok {
					break
				}

				if off < last {
					t.Fatalf("Due(%d) = %v, before Due(%d) = %v", n, off, n-1, last)
				}

				last = off
			}
		})
	}
}

func TestAdaptiveErrors(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name     string
		rate     float64
		duration time.Duration
	}{
		{name: "zero rate", rate: 0},
		{name: "negative rate", rate: -1},
		{name: "NaN rate", rate: math.NaN()},
		{name: "infinite rate", rate: math.Inf(1)},
		{name: "negative duration", rate: 1, duration: -time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			if a, err := NewAdaptive(tc.rate, tc.duration); err == nil {
				t.Errorf("NewAdaptive(%v, %v) = %v, nil; want an error", tc.rate, tc.duration, a)
			}

			a, err := NewAdaptive(10, 0)
			if err != nil {
				t.Fatal(err)
			}

			if tc.duration == 0 {
				if err := a.SetRate(time.Second, tc.rate); err == nil {
					t.Errorf("SetRate(1s, %v) = nil; want an error", tc.rate)
				}
			}

			if a.Rate() != 10 || len(a.segs) != 1 {
				t.Errorf("a failed SetRate changed the pacer: rate %v, %d segments", a.Rate(), len(a.segs))
			}
		})
	}
}

// TestAdaptiveConcurrent calls SetRate, Rate and Due from different
// goroutines, for the race detector.
func TestAdaptiveConcurrent(t *testing.T) {
	t.Parallel()

	a, err := NewAdaptive(100, 0)
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup

	wg.Go(func() {
		for i := range 1000 {
			if err := a.SetRate(time.Duration(i)*time.Millisecond, float64(100+i%7)); err != nil {
				t.Error(err)

				return
			}

			_ = a.Rate()
		}
	})

	wg.Go(func() {
		for n := range uint64(10_000) {
			if off, ok := a.Due(n); !ok || off < 0 {
				t.Errorf("Due(%d) = %v, %v", n, off, ok)

				return
			}
		}
	})

	wg.Wait()
}

// TestAdaptiveControlLoop runs a whole latency-paced phase on synctest's
// virtual clock: a scheduler dispatches an Adaptive pacer's operations, and
// at every 1-second boundary the controller observes the simulated server's
// latency for the interval's rate, sets the next rate and appends to the
// trajectory. Each interval holds as many operations as its rate, the rate
// settles where the latency is between the thresholds, and the trajectory
// reports the highest sustained rate.
func TestAdaptiveControlLoop(t *testing.T) {
	t.Parallel()

	synctest.Test(t, func(t *testing.T) {
		const (
			interval = time.Second
			duration = 60 * time.Second
		)

		cfg := testPacing()
		server := linearServer(20 * time.Microsecond) // 5 ms at 200/s, 10 ms at 450/s

		a, err := NewAdaptive(cfg.Start, duration)
		if err != nil {
			t.Fatal(err)
		}

		start := time.Now()
		s := NewSchedule(a, start)
		traj := Trajectory{{Rate: cfg.Start, Action: ActionHold}}
		boundary := start.Add(interval)
		rate := cfg.Start

		var (
			samples int64
			total   float64 // the integral of the rate
		)

		for {
			due, ok := s.Peek()
			if !ok && boundary.Sub(start) > duration {
				break
			}

			if !ok || !due.Before(boundary) {
				// The interval is over: observe, decide, change the rate,
				// and look at the next due time again.
				time.Sleep(time.Until(boundary))

				if math.Abs(float64(samples)-rate*interval.Seconds()) > 1 {
					t.Errorf("interval ending at %v: %d operations at %v/s", boundary.Sub(start), samples, rate)
				}

				total += rate * interval.Seconds()
				observed := server(rate)
				next := cfg.Next(rate, observed, samples)
				at := boundary.Sub(start)

				if err := a.SetRate(at, next); err != nil {
					t.Fatal(err)
				}

				traj = append(traj, Point{Offset: at, Rate: next, Observed: observed, Samples: samples, Action: cfg.Decide(observed, samples)})
				rate, samples = next, 0
				boundary = boundary.Add(interval)

				continue
			}

			time.Sleep(time.Until(due))

			if now := time.Now(); !now.Equal(due) {
				t.Fatalf("operation %d sent %v after its due time", s.Issued(), now.Sub(due))
			}

			s.Next()
			samples++
		}

		if got := float64(s.Issued()); math.Abs(got-total) > 1 {
			t.Errorf("%v operations in the phase; the integral of the rate is %v", got, total)
		}

		if len(traj) != 61 {
			t.Fatalf("%d trajectory points; want 61", len(traj))
		}

		// Settled: from 10/s, 32 raises of 10% pass 200/s.
		for _, p := range traj[40:] {
			if p.Rate < 200 || p.Rate >= 450 {
				t.Errorf("at %v the rate is %v; want it in [200, 450)", p.Offset, p.Rate)
			}

			if p.Observed < cfg.Low || p.Observed >= cfg.High {
				t.Errorf("at %v the latency is %v; want it between the thresholds", p.Offset, p.Observed)
			}
		}

		if best := traj.HighestSustained(cfg.High); best < 200 || best >= 450 {
			t.Errorf("HighestSustained = %v; want it in [200, 450)", best)
		}
	})
}
