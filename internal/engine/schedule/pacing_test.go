package schedule

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// testPacing returns the settings the tests start from: the defaults a
// workload gets when it sets none (workload.Pacing's applyDefaults), which
// are chosen there, not in this package.
func testPacing() PacingConfig {
	return PacingConfig{
		Start:    10,
		Min:      1,
		Max:      100_000,
		Low:      5 * time.Millisecond,
		High:     10 * time.Millisecond,
		SpeedUp:  1.1,
		SlowDown: 0.66,
	}
}

func TestPacingNext(t *testing.T) {
	t.Parallel()

	const ms = time.Millisecond

	c := testPacing()

	for _, tc := range []struct {
		name       string
		rate       float64
		observed   time.Duration
		samples    int64
		want       float64
		wantAction Action
	}{
		{name: "below low speeds up", rate: 100, observed: ms, samples: 10, want: 110, wantAction: ActionUp},
		{name: "just below low speeds up", rate: 100, observed: 5*ms - 1, samples: 1, want: 110, wantAction: ActionUp},
		{name: "speed-up is capped at max", rate: 95_000, observed: ms, samples: 10, want: 100_000, wantAction: ActionUp},
		{name: "at max stays at max", rate: 100_000, observed: ms, samples: 10, want: 100_000, wantAction: ActionUp},
		{name: "at low holds", rate: 100, observed: 5 * ms, samples: 10, want: 100, wantAction: ActionHold},
		{name: "between holds", rate: 100, observed: 7 * ms, samples: 10, want: 100, wantAction: ActionHold},
		{name: "just below high holds", rate: 100, observed: 10*ms - 1, samples: 10, want: 100, wantAction: ActionHold},
		{name: "at high slows down", rate: 100, observed: 10 * ms, samples: 10, want: 66, wantAction: ActionDown},
		{name: "above high slows down", rate: 100, observed: time.Second, samples: 10, want: 66, wantAction: ActionDown},
		{name: "slow-down is floored at min", rate: 1.2, observed: 50 * ms, samples: 10, want: 1, wantAction: ActionDown},
		{name: "at min stays at min", rate: 1, observed: 50 * ms, samples: 10, want: 1, wantAction: ActionDown},
		{name: "no samples holds despite high latency", rate: 100, observed: 50 * ms, samples: 0, want: 100, wantAction: ActionHold},
		{name: "no samples holds despite low latency", rate: 100, samples: 0, want: 100, wantAction: ActionHold},
		{name: "negative samples hold", rate: 100, observed: ms, samples: -1, want: 100, wantAction: ActionHold},
		{name: "rate above max is brought down to it", rate: 200_000, observed: 7 * ms, samples: 10, want: 100_000, wantAction: ActionHold},
		{name: "rate below min is brought up to it", rate: 0.5, observed: 7 * ms, samples: 10, want: 1, wantAction: ActionHold},
		{name: "NaN rate restarts from start", rate: math.NaN(), observed: 7 * ms, samples: 10, want: 10, wantAction: ActionHold},
		{name: "zero rate restarts from start", rate: 0, observed: ms, samples: 10, want: 11, wantAction: ActionUp},
		{name: "infinite rate restarts from start", rate: math.Inf(1), observed: 10 * ms, samples: 10, want: 6.6, wantAction: ActionDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			if got := c.Next(tc.rate, tc.observed, tc.samples); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("Next(%v, %v, %d) = %v; want %v", tc.rate, tc.observed, tc.samples, got, tc.want)
			}

			if got := c.Decide(tc.observed, tc.samples); got != tc.wantAction {
				t.Errorf("Decide(%v, %d) = %q; want %q", tc.observed, tc.samples, got, tc.wantAction)
			}
		})
	}
}

func TestPacingValidate(t *testing.T) {
	t.Parallel()

	with := func(edit func(*PacingConfig)) PacingConfig {
		c := testPacing()
		edit(&c)

		return c
	}

	for _, tc := range []struct {
		name string
		c    PacingConfig
		want []string // substrings of the errors, in order
	}{
		{name: "default", c: testPacing()},
		{name: "start at the bounds", c: with(func(c *PacingConfig) { c.Start, c.Min, c.Max = 5, 5, 5 })},
		{name: "zero value", c: PacingConfig{}, want: []string{"start:", "min:", "max:", "low:", "speed_up:", "slow_down:"}},
		{name: "NaN start", c: with(func(c *PacingConfig) { c.Start = math.NaN() }), want: []string{"start:"}},
		{name: "infinite max", c: with(func(c *PacingConfig) { c.Max = math.Inf(1) }), want: []string{"max:"}},
		{name: "negative min", c: with(func(c *PacingConfig) { c.Min = -1 }), want: []string{"min:"}},
		{name: "min above max", c: with(func(c *PacingConfig) { c.Min, c.Max = 10, 5 }), want: []string{"min: 10 is above max 5"}},
		{name: "start below min", c: with(func(c *PacingConfig) { c.Start = 0.5 }), want: []string{"start: 0.5 is outside"}},
		{name: "start above max", c: with(func(c *PacingConfig) { c.Start = 1e6 }), want: []string{"start: 1e+06 is outside"}},
		{name: "negative low", c: with(func(c *PacingConfig) { c.Low = -time.Millisecond }), want: []string{"low:"}},
		{name: "high equal to low", c: with(func(c *PacingConfig) { c.High = c.Low }), want: []string{"high: must be above low"}},
		{name: "high below low", c: with(func(c *PacingConfig) { c.High = time.Millisecond }), want: []string{"high:"}},
		{name: "speed-up of 1", c: with(func(c *PacingConfig) { c.SpeedUp = 1 }), want: []string{"speed_up:"}},
		{name: "infinite speed-up", c: with(func(c *PacingConfig) { c.SpeedUp = math.Inf(1) }), want: []string{"speed_up:"}},
		{name: "NaN speed-up", c: with(func(c *PacingConfig) { c.SpeedUp = math.NaN() }), want: []string{"speed_up:"}},
		{name: "slow-down of 1", c: with(func(c *PacingConfig) { c.SlowDown = 1 }), want: []string{"slow_down:"}},
		{name: "slow-down of 0", c: with(func(c *PacingConfig) { c.SlowDown = 0 }), want: []string{"slow_down:"}},
		{name: "NaN slow-down", c: with(func(c *PacingConfig) { c.SlowDown = math.NaN() }), want: []string{"slow_down:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkErrors(t, tc.c.Validate(), tc.want)
		})
	}
}

// linearServer is a server whose latency rises with load: slope per
// operation per second on top of 1 ms. With a slope of 20 µs the latency is
// 5 ms at 200/s and 10 ms at 450/s.
func linearServer(slope time.Duration) func(rate float64) time.Duration {
	return func(rate float64) time.Duration {
		return time.Millisecond + time.Duration(rate*float64(slope))
	}
}

// rateFor inverts linearServer: the rate at which the latency is d.
func rateFor(slope, d time.Duration) float64 {
	return float64(d-time.Millisecond) / float64(slope)
}

// TestPacingConvergence iterates the controller against simulated servers
// and checks that the rate settles where the latency sits between the
// thresholds, and never leaves [Min, Max] on the way.
func TestPacingConvergence(t *testing.T) {
	t.Parallel()

	const (
		iterations = 200
		µs         = time.Microsecond
	)

	for _, tc := range []struct {
		name    string
		config  func(*PacingConfig)
		latency func(i int, rate float64) time.Duration
		settled int     // iterations after which the rate must be in band
		lo, hi  float64 // the band: lo ≤ rate < hi
	}{
		{
			name:    "rising from the start rate",
			latency: func(_ int, r float64) time.Duration { return linearServer(20 * µs)(r) },
			settled: 40, // 10 × 1.1³² > 200
			lo:      200, hi: 450,
		},
		{
			name:    "overloaded start comes down",
			config:  func(c *PacingConfig) { c.Start = 1000 },
			latency: func(_ int, r float64) time.Duration { return linearServer(20 * µs)(r) },
			settled: 5,
			lo:      200, hi: 450,
		},
		{
			name: "server slows down mid-run",
			latency: func(i int, r float64) time.Duration {
				if i < 100 {
					return linearServer(20 * µs)(r)
				}

				return linearServer(60 * µs)(r)
			},
			settled: 110,
			lo:      rateFor(60*µs, 5*time.Millisecond), hi: rateFor(60*µs, 10*time.Millisecond),
		},
		{
			name:    "capped at max",
			config:  func(c *PacingConfig) { c.Max = 150 },
			latency: func(_ int, r float64) time.Duration { return linearServer(20 * µs)(r) },
			settled: 40,
			lo:      150, hi: 150.000001,
		},
		{
			name:    "floored at min",
			latency: func(int, float64) time.Duration { return 50 * time.Millisecond },
			settled: 10,
			lo:      1, hi: 1.000001,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			c := testPacing()
			if tc.config != nil {
				tc.config(&c)
			}

			rate := c.Start

			for i := range iterations {
				rate = c.Next(rate, tc.latency(i, rate), 100)

				if rate < c.Min || rate > c.Max {
					t.Fatalf("iteration %d: rate %v outside [%v, %v]", i, rate, c.Min, c.Max)
				}

				if i >= tc.settled && (rate < tc.lo || rate >= tc.hi) {
					t.Fatalf("iteration %d: rate %v outside the band [%v, %v)", i, rate, tc.lo, tc.hi)
				}
			}
		})
	}
}

// TestPacingConvergenceNoise adds seeded noise of ±20% to the simulated
// latency: the rate still stays in a band around the thresholds' rates most
// of the time, and within [Min, Max] always.
func TestPacingConvergenceNoise(t *testing.T) {
	t.Parallel()

	const (
		iterations = 200
		settled    = 50
		slope      = 20 * time.Microsecond
	)

	server := linearServer(slope)

	// The widened band: rates whose latency is within the thresholds
	// stretched by the noise.
	lo := rateFor(slope, time.Duration(float64(5*time.Millisecond)*0.8))
	hi := rateFor(slope, time.Duration(float64(10*time.Millisecond)*1.2))

	for _, seed := range []uint64{1, 2, 3, 42, 1234} {
		c := testPacing()
		rng := rand.New(rand.NewPCG(seed, seed))
		rate := c.Start
		inBand := 0

		for i := range iterations {
			noise := 1 + (rng.Float64()*2-1)*0.2
			rate = c.Next(rate, time.Duration(float64(server(rate))*noise), 100)

			if rate < c.Min || rate > c.Max {
				t.Fatalf("seed %d, iteration %d: rate %v outside [%v, %v]", seed, i, rate, c.Min, c.Max)
			}

			if i >= settled && rate >= lo && rate < hi {
				inBand++
			}
		}

		if share := float64(inBand) / (iterations - settled); share < 0.9 {
			t.Errorf("seed %d: the rate was in [%v, %v) only %.0f%% of the time after settling", seed, lo, hi, share*100)
		}
	}
}
