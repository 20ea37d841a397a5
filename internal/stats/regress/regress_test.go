package regress

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestTQuantileTable checks the t quantiles against a printed table of
// Student's t (two-sided 95%: the 0.975 quantile).
func TestTQuantileTable(t *testing.T) {
	for _, c := range []struct{ df, want float64 }{
		{1, 12.706}, {2, 4.303}, {5, 2.571}, {8, 2.306}, {30, 2.042}, {1e6, 1.960},
	} {
		if got := TQuantile(0.975, c.df); math.Abs(got-c.want) > 0.001 {
			t.Errorf("t(0.975, %g) = %.4f, want %.3f", c.df, got, c.want)
		}

		if got := TQuantile(0.025, c.df); math.Abs(got+c.want) > 0.001 {
			t.Errorf("t(0.025, %g) = %.4f, want %.3f", c.df, got, -c.want)
		}
	}
}

// TestLineExact recovers the slope and intercept of points on a line,
// with a zero-width interval.
func TestLineExact(t *testing.T) {
	x := []float64{1000, 2000, 3000, 4000, 5000}
	y := make([]float64, len(x))

	for i := range x {
		y[i] = 250 + 0.41*x[i]
	}

	f, err := Line(x, y, 0.05)
	if err != nil {
		t.Fatal(err)
	}

	if math.Abs(f.Slope-0.41) > 1e-9 || math.Abs(f.Intercept-250) > 1e-6 {
		t.Errorf("slope %g intercept %g, want 0.41 and 250", f.Slope, f.Intercept)
	}

	if f.Hi-f.Lo > 1e-9 || f.Trend() != Grows {
		t.Errorf("interval %g–%g, trend %v", f.Lo, f.Hi, f.Trend())
	}
}

// TestLineCoverage fits many noisy series of a known slope (10 points, as
// a default growth run has blocks): the 95% interval must hold the true
// slope in about 95% of them, and on flat series (slope 0) call about 5%
// of them growing or shrinking. The series are seeded, so the counts are
// fixed; the bounds are those of a binomial proportion of 0.95 at
// 4 standard errors, which a correct interval meets and an interval of the
// wrong width (a normal quantile in place of t's: about 91%) does not.
func TestLineCoverage(t *testing.T) {
	const runs = 4000

	rng := rand.New(rand.NewPCG(1, 2))
	x := []float64{1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000}
	y := make([]float64, len(x))

	for _, slope := range []float64{0, 0.41} {
		covered, notFlat := 0, 0

		for range runs {
			for i := range x {
				y[i] = 5000 + slope*x[i] + 300*rng.NormFloat64()
			}

			f, err := Line(x, y, 0.05)
			if err != nil {
				t.Fatal(err)
			}

			if f.Lo <= slope && slope <= f.Hi {
				covered++
			}

			if f.Trend() != Flat {
				notFlat++
			}
		}

		rate := float64(covered) / runs
		se := math.Sqrt(0.95 * 0.05 / runs)

		if math.Abs(rate-0.95) > 4*se {
			t.Errorf("slope %g: the interval held it in %d of %d fits (%.3f), want 0.95 ± %.3f", slope, covered, runs, rate, 4*se)
		}

		if slope == 0 && math.Abs(float64(notFlat)/runs-0.05) > 4*se {
			t.Errorf("flat series: %d of %d called growing or shrinking, want about 5%%", notFlat, runs)
		}
	}
}

// TestLinePlantedGrowth finds a planted slope in noise, and says flat for
// the same noise without it.
func TestLinePlantedGrowth(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := []float64{1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000}
	noise := make([]float64, len(x))

	for i := range noise {
		noise[i] = 100 * rng.NormFloat64()
	}

	grown, flat := make([]float64, len(x)), make([]float64, len(x))
	for i := range x {
		grown[i] = 2000 + 0.5*x[i] + noise[i]
		flat[i] = 2000 + noise[i]
	}

	g, err := Line(x, grown, 0.05)
	if err != nil {
		t.Fatal(err)
	}

	if g.Trend() != Grows || g.Lo > 0.5 || g.Hi < 0.5 {
		t.Errorf("planted slope 0.5: fitted %g (%g–%g), trend %v", g.Slope, g.Lo, g.Hi, g.Trend())
	}

	f, err := Line(x, flat, 0.05)
	if err != nil {
		t.Fatal(err)
	}

	if f.Slope != g.Slope-0.5 && math.Abs(f.Slope-(g.Slope-0.5)) > 1e-9 {
		t.Errorf("flat slope %g, want the grown one less 0.5 (%g)", f.Slope, g.Slope-0.5)
	}
}

// TestLineRefuses says why no interval can be had.
func TestLineRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		x, y  []float64
		alpha float64
		want  error
	}{
		{"two points", []float64{1, 2}, []float64{1, 2}, 0.05, ErrTooFew},
		{"same x", []float64{5, 5, 5}, []float64{1, 2, 3}, 0.05, ErrSameX},
		{"lengths", []float64{1, 2, 3}, []float64{1, 2}, 0.05, ErrMismatch},
		{"alpha", []float64{1, 2, 3}, []float64{1, 2, 3}, 1, ErrBadAlpha},
		{"NaN", []float64{1, 2, 3}, []float64{1, math.NaN(), 3}, 0.05, ErrNotFinite},
	} {
		if _, err := Line(c.x, c.y, c.alpha); !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
	}
}

// ar1 fills y with 5000 + slope·x plus AR(1) noise of lag-1 correlation
// rho and innovation spread 300, started from its stationary spread.
func ar1(rng *rand.Rand, x, y []float64, slope, rho float64) {
	e := rng.NormFloat64() / math.Sqrt(1-rho*rho)
	for i := range y {
		e = rho*e + rng.NormFloat64()
		y[i] = 5000 + slope*x[i] + 300*e
	}
}

// TestSerialLineCoverage fits seeded series of 8 and 10 points (a growth
// run's blocks) with a known slope. On independent noise SerialLine's 95%
// interval must hold the slope at least 95% of the time (it is built to
// be conservative there, about 97%) and no more than 98.5%, or it would
// be too wide to find growth. On AR(1) noise of lag-1 correlation 0.3 (a
// drift neighbouring blocks share) it must still hold it in at least 91%
// of fits, where Line's interval, which assumes independence, holds it in
// about 88% (and the test checks that Line falls short there, so the
// bound discriminates). Bounds are 4 binomial standard errors wide.
func TestSerialLineCoverage(t *testing.T) {
	const runs = 4000

	se := math.Sqrt(0.95 * 0.05 / runs)

	for _, n := range []int{8, 10} {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(1000 * (i + 1))
		}

		y := make([]float64, n)

		for _, c := range []struct {
			rho, lo, hi, lineHi float64
		}{
			{0, 0.95 - 4*se, 0.985, 1},
			{0.3, 0.91, 1, 0.91},
		} {
			rng := rand.New(rand.NewPCG(uint64(n), 7))
			serial, line := 0, 0

			for range runs {
				ar1(rng, x, y, 0.41, c.rho)

				f, err := SerialLine(x, y, 0.05)
				if err != nil {
					t.Fatal(err)
				}

				if f.Lo <= 0.41 && 0.41 <= f.Hi {
					serial++
				}

				if f.NEff < MinPoints || f.NEff > float64(n) {
					t.Fatalf("n_eff %g outside [%d, %d]", f.NEff, MinPoints, n)
				}

				l, err := Line(x, y, 0.05)
				if err != nil {
					t.Fatal(err)
				}

				if l.Lo <= 0.41 && 0.41 <= l.Hi {
					line++
				}
			}

			rate, lineRate := float64(serial)/runs, float64(line)/runs
			t.Logf("%d points, rho %g: SerialLine held the slope in %.3f of fits, Line in %.3f", n, c.rho, rate, lineRate)
			if rate < c.lo || rate > c.hi {
				t.Errorf("%d points, rho %g: SerialLine held the slope in %d of %d fits (%.3f), want %.3f–%.3f", n, c.rho, serial, runs, rate, c.lo, c.hi)
			}

			if lineRate >= c.lineHi {
				t.Errorf("%d points, rho %g: Line held the slope in %.3f of fits, want under %.3f (else this case tells nothing)", n, c.rho, lineRate, c.lineHi)
			}
		}
	}
}

// TestNullR1 checks the expected lag-1 autocorrelation of a fitted line's
// residuals under independent errors: −2/n for evenly spaced x, and for
// uneven x (a block cut short leaves a gap) the mean over seeded
// simulated series, within 4 standard errors.
func TestNullR1(t *testing.T) {
	for _, n := range []int{3, 4, 8, 10, 25} {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(500 + 1000*i)
		}

		if got := nullR1(x); math.Abs(got+2/float64(n)) > 1e-12 {
			t.Errorf("n=%d evenly spaced: %g, want %g", n, got, -2/float64(n))
		}
	}

	x := []float64{100, 200, 300, 700, 800, 900, 1000, 2500}
	rng := rand.New(rand.NewPCG(9, 10))
	y := make([]float64, len(x))

	const runs = 20000

	var sum, sum2 float64

	for range runs {
		for i := range y {
			y[i] = rng.NormFloat64()
		}

		f, err := SerialLine(x, y, 0.05)
		if err != nil {
			t.Fatal(err)
		}

		sum += f.R1
		sum2 += f.R1 * f.R1
	}

	mean := sum / runs
	se := math.Sqrt((sum2/runs - mean*mean) / runs)

	if want := nullR1(x); math.Abs(mean-want) > 4*se || math.Abs(want+2/float64(len(x))) < 0.01 {
		t.Errorf("uneven x: simulated mean r1 %.4f ± %.4f, nullR1 %.4f (and it must differ from −2/n to test anything)", mean, se, want)
	}
}

// TestSerialLineCountsDrift: residuals that swing slowly (a drift shared
// by neighbouring points) make SerialLine count the points as fewer and
// widen the interval beyond Line's; residuals that alternate (no shared
// drift) leave it equal to Line's.
func TestSerialLineCountsDrift(t *testing.T) {
	x := []float64{1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000}
	drift := []float64{0, 60, 90, 60, 0, -60, -90, -60, 0, 60}
	alternate := []float64{50, -50, 50, -50, 50, -50, 50, -50, 50, -50}

	for _, c := range []struct {
		name  string
		noise []float64
		wider bool
	}{{"drift", drift, true}, {"alternating", alternate, false}} {
		y := make([]float64, len(x))
		for i := range x {
			y[i] = 2000 + 0.2*x[i] + c.noise[i]
		}

		s, err := SerialLine(x, y, 0.05)
		if err != nil {
			t.Fatal(err)
		}

		l, err := Line(x, y, 0.05)
		if err != nil {
			t.Fatal(err)
		}

		if s.Slope != l.Slope || s.Intercept != l.Intercept {
			t.Errorf("%s: SerialLine's line %g + %g·x differs from Line's %g + %g·x", c.name, s.Intercept, s.Slope, l.Intercept, l.Slope)
		}

		switch {
		case c.wider && !(s.NEff < float64(s.N) && s.Hi-s.Lo > l.Hi-l.Lo):
			t.Errorf("%s: r1 %.2f, n_eff %.2f of %d, width %g vs Line's %g; want fewer points and a wider interval", c.name, s.R1, s.NEff, s.N, s.Hi-s.Lo, l.Hi-l.Lo)
		case !c.wider && (s.NEff != float64(s.N) || s.Lo != l.Lo || s.Hi != l.Hi):
			t.Errorf("%s: r1 %.2f, n_eff %.2f of %d, interval %g–%g vs Line's %g–%g; want Line's", c.name, s.R1, s.NEff, s.N, s.Lo, s.Hi, l.Lo, l.Hi)
		}
	}
}

// TestSerialLineExactAndRefuses: points on a line give a zero-width
// interval with every point counted, and SerialLine refuses what Line
// refuses.
func TestSerialLineExactAndRefuses(t *testing.T) {
	f, err := SerialLine([]float64{1, 2, 3, 4}, []float64{3, 5, 7, 9}, 0.05)
	if err != nil || math.Abs(f.Slope-2) > 1e-12 || f.Hi-f.Lo > 1e-9 || f.NEff != 4 || f.Trend() != Grows {
		t.Errorf("exact line: %+v, %v", f, err)
	}

	if _, err := SerialLine([]float64{1, 2}, []float64{1, 2}, 0.05); !errors.Is(err, ErrTooFew) {
		t.Errorf("two points: %v, want ErrTooFew", err)
	}

	if _, err := SerialLine([]float64{5, 5, 5}, []float64{1, 2, 3}, 0.05); !errors.Is(err, ErrSameX) {
		t.Errorf("same x: %v, want ErrSameX", err)
	}
}
