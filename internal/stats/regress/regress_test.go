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
