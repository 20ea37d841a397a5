package history

import (
	"math"
	"math/rand/v2"
	"testing"

	vd "github.com/mongobench/mongobench/internal/stats/verdict"
)

// TestStatisticByHand checks the divergence statistic against values
// worked out by hand from the formula in Matteson and James (2014), α = 1.
func TestStatisticByHand(t *testing.T) {
	// xs = 1 2 4 8 16, minimum size 2: two splits are allowed.
	//
	// τ = 2: X = {1,2}, Y = {4,8,16}. Σ|X−Y| = 3+7+15+2+6+14 = 47,
	// Σ within X = 1, Σ within Y = 4+12+8 = 24.
	// E = 2·47/6 − 2·1/2 − 2·24/6 = 20/3; q = (2·3/5)·20/3 = 8.
	//
	// τ = 3: X = {1,2,4}, Y = {8,16}. Σ|X−Y| = 7+15+6+14+4+12 = 58,
	// Σ within X = 1+3+2 = 6, Σ within Y = 8.
	// E = 2·58/6 − 2·6/6 − 2·8/2 = 28/3; q = (3·2/5)·28/3 = 11.2.
	xs := []float64{1, 2, 4, 8, 16}

	tau, q, ok := BestSplit(xs, 2)
	if !ok || tau != 3 || math.Abs(q-11.2) > 1e-12 {
		t.Fatalf("BestSplit(%v, 2) = %d, %v, %v; want 3, 11.2, true", xs, tau, q, ok)
	}

	// 0 0 1 1 with minimum size 2 allows only τ = 2: Σ|X−Y| = 4, the
	// within sums are 0, E = 2·4/4 = 2 and q = (2·2/4)·2 = 2.
	tau, q, ok = BestSplit([]float64{0, 0, 1, 1}, 2)
	if !ok || tau != 2 || math.Abs(q-2) > 1e-12 {
		t.Fatalf("BestSplit(0 0 1 1, 2) = %d, %v, %v; want 2, 2, true", tau, q, ok)
	}

	// The losing split of 1 2 4 8 16, τ = 2, from its sums.
	if got := statistic(2, 3, 1, 24, 47); math.Abs(got-8) > 1e-12 {
		t.Fatalf("statistic for τ = 2 of %v = %v; want 8", xs, got)
	}

	if _, _, ok := BestSplit([]float64{1, 2, 3}, 2); ok {
		t.Fatal("a 3-point series split with minimum size 2")
	}
}

// TestBestSplitMatchesDirect checks the incremental sums of BestSplit
// against the statistic computed straight from its definition, for every
// split of random series.
func TestBestSplitMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))

	for range 50 {
		n := 4 + rng.IntN(30)
		xs := make([]float64, n)

		for i := range xs {
			xs[i] = rng.NormFloat64()
		}

		wantTau, wantQ := 0, math.Inf(-1)

		for tau := 2; tau <= n-2; tau++ {
			if q := direct(xs[:tau], xs[tau:]); q > wantQ {
				wantTau, wantQ = tau, q
			}
		}

		tau, q, _ := BestSplit(xs, 2)
		if tau != wantTau || math.Abs(q-wantQ) > 1e-9*math.Max(1, wantQ) {
			t.Fatalf("series %v: BestSplit = %d, %v; direct = %d, %v", xs, tau, q, wantTau, wantQ)
		}
	}
}

// direct is the statistic of sides x and y from the definition.
func direct(x, y []float64) float64 {
	m, n := float64(len(x)), float64(len(y))

	var c, a, b float64

	for _, u := range x {
		for _, v := range y {
			c += math.Abs(u - v)
		}
	}

	for i := range x {
		for k := i + 1; k < len(x); k++ {
			a += math.Abs(x[i] - x[k])
		}
	}

	for i := range y {
		for k := i + 1; k < len(y); k++ {
			b += math.Abs(y[i] - y[k])
		}
	}

	return m * n / (m + n) * (2*c/(m*n) - a/(m*(m-1)/2) - b/(n*(n-1)/2))
}

// noisy returns n points of level·(1+cv·N(0,1)) with the level multiplied
// by step from index at on.
func noisy(rng *rand.Rand, n, at int, step, cv float64) []float64 {
	xs := make([]float64, n)

	for i := range xs {
		level := 1000.0
		if i >= at {
			level *= step
		}

		xs[i] = level * (1 + cv*rng.NormFloat64())
	}

	return xs
}

func TestStepFoundWhereItIs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	xs := noisy(rng, 30, 18, 1.5, 0.03)

	got := Detect(xs, Options{Seed: 1})
	if len(got) != 1 || got[0].Index != 18 {
		t.Fatalf("Detect on a 50%% step at 18 = %+v; want one change point at 18", got)
	}

	if got[0].P > DefaultAlpha || got[0].P < 1.0/float64(DefaultPermutations+1) {
		t.Fatalf("p = %v; want in [1/%d, %v]", got[0].P, DefaultPermutations+1, DefaultAlpha)
	}
}

func TestTwoSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	xs := append(noisy(rng, 15, 15, 1, 0.02), noisy(rng, 15, 0, 1.3, 0.02)...)
	xs = append(xs, noisy(rng, 15, 0, 0.9, 0.02)...)

	got := Detect(xs, Options{Seed: 2})
	if len(got) != 2 || got[0].Index != 15 || got[1].Index != 30 {
		t.Fatalf("Detect on steps at 15 and 30 = %+v", got)
	}
}

func TestConstantSeriesHasNoChange(t *testing.T) {
	xs := make([]float64, 40)
	for i := range xs {
		xs[i] = 5
	}

	if got := Detect(xs, Options{}); len(got) != 0 {
		t.Fatalf("Detect on a constant series = %+v", got)
	}
}

func TestSameSeedSameAnswer(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	xs := noisy(rng, 40, 25, 1.08, 0.05)

	a, b := Detect(xs, Options{Seed: 9}), Detect(xs, Options{Seed: 9})
	if len(a) != len(b) {
		t.Fatalf("same seed: %+v then %+v", a, b)
	}

	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed: %+v then %+v", a, b)
		}
	}
}

// rates runs Detect on trials simulated series of n points, with a step of
// the given size at at (step 1: none), and counts the series with any
// change point (false) and those with one within ±1 of the step (found).
func rates(trials, n, at int, step, cv float64, opts Options) (anyCP, found int) {
	rng := rand.New(rand.NewPCG(uint64(n), math.Float64bits(step)))

	for k := range trials {
		xs := noisy(rng, n, at, step, cv)
		opts.Seed = uint64(k)
		cps := Detect(xs, opts)

		if len(cps) > 0 {
			anyCP++
		}

		for _, c := range cps {
			if c.Index >= at-1 && c.Index <= at+1 {
				found++
				break
			}
		}
	}

	return anyCP, found
}

// TestFalseChangeRate measures how often a series without a change gets a
// change point (the family-wise error the permutation test controls at
// α per series), and requires the defaults to keep it near α.
func TestFalseChangeRate(t *testing.T) {
	const trials, n = 200, 30

	k, _ := rates(trials, n, n, 1, 0.05, Options{})
	p, lo, hi := vd.Proportion(k, trials, 0.05)
	t.Logf("constant series of %d points, 5%% noise: %d/%d with a change point, %.1f%% (95%% CI %.1f%%–%.1f%%)",
		n, k, trials, 100*p, 100*lo, 100*hi)

	// α is 5%; allow for the Monte Carlo spread of 200 series.
	if lo > DefaultAlpha || p > 0.10 {
		t.Fatalf("false change points in %d/%d constant series; want about %v", k, trials, DefaultAlpha)
	}
}

// TestStepDetection measures how often a step after 20 runs, followed by
// 10 more, is found within one run of where it is, with 5% noise per run.
func TestStepDetection(t *testing.T) {
	const trials, n, at = 100, 30, 20

	for _, c := range []struct {
		step float64
		want float64 // least detection rate
	}{{1.10, 0.65}, {1.20, 0.95}} {
		_, k := rates(trials, n, at, c.step, 0.05, Options{})
		p, lo, hi := vd.Proportion(k, trials, 0.05)
		t.Logf("step of %.0f%% at run %d of %d, 5%% noise: found %d/%d, %.0f%% (95%% CI %.0f%%–%.0f%%)",
			100*(c.step-1), at, n, k, trials, 100*p, 100*lo, 100*hi)

		if p < c.want {
			t.Errorf("%.0f%% step found in %d/%d series; want at least %.0f%%", 100*(c.step-1), k, trials, 100*c.want)
		}
	}
}
