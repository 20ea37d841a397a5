package verdict

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestReferenceNotChosenByOutcome runs A/A experiments: four variants drawn
// from one distribution, compared in six paired rounds. With the first
// variant as the reference, the share of "difference" verdicts stays at the
// sign test's level (2·½⁶ = 3.1%); picking the best of the same data as the
// reference (the old rule) roughly triples it, since the best of four equal
// variants is best by chance.
func TestReferenceNotChosenByOutcome(t *testing.T) {
	const experiments = 3000

	diffs, verdicts := 0, 0

	for seed := range uint64(experiments) {
		rng := rand.New(rand.NewPCG(seed, 7))

		var s []Sample

		for r := range 6 {
			common := math.Exp(0.3 * rng.NormFloat64()) // the machine's state in this round
			for _, name := range []string{"a", "b", "c", "d"} {
				s = append(s, Sample{name, r, 1000 * common * math.Exp(0.05*rng.NormFloat64())})
			}
		}

		for _, v := range Compare(s, LowerIsBetter, Options{MinEffect: -1}) {
			if v.Kind == Reference {
				if v.Variant != "a" {
					t.Fatalf("reference %q, want the first variant", v.Variant)
				}

				continue
			}

			verdicts++

			if v.Kind == Difference {
				diffs++
			}
		}
	}

	rate := float64(diffs) / float64(verdicts)
	// 3.1% expected; the binomial standard error over 9000 verdicts is
	// 0.18 points, so 4.5% is more than seven of them away.
	if rate > 0.045 {
		t.Errorf("A/A difference rate %.2f%% (%d of %d), want ≤ 3.1%% + noise", 100*rate, diffs, verdicts)
	}
}

// TestMinimumEffect: a change the interval establishes but smaller than the
// minimum effect is "no meaningful difference", never a difference; an
// interval inside the band says so too; a change beyond it is a
// difference.
func TestMinimumEffect(t *testing.T) {
	series := func(ratio float64) []Sample {
		var s []Sample
		for r := range 8 {
			base := 1000 + 10*float64(r)
			s = append(s, Sample{"a", r, base}, Sample{"b", r, base * ratio * (1 + 0.001*float64(r%3))})
		}

		return s
	}

	b := byName(t, CompareTo(series(1.02), "a", LowerIsBetter, Options{}), "b")
	if b.Kind != NoDifference || !b.Negligible || !strings.HasPrefix(b.Text, "no meaningful difference (within ±5%; 95% CI 1.02×") {
		t.Errorf("2%% established: %+v", b)
	}

	if b.RatioLo <= 1 {
		t.Errorf("2%% established: the interval should exclude 1: %+v", b)
	}

	b = byName(t, CompareTo(series(1.02), "a", LowerIsBetter, Options{MinEffect: -1}), "b")
	if b.Kind != Difference {
		t.Errorf("2%% without a minimum effect: %+v", b)
	}

	b = byName(t, CompareTo(series(1.02), "a", LowerIsBetter, Options{MinEffect: 0.01}), "b")
	if b.Kind != Difference || b.Text != "1.02× higher, 95% CI 1.02×–1.02×" {
		t.Errorf("2%% against a 1%% minimum: %+v", b)
	}

	b = byName(t, CompareTo(series(1.3), "a", LowerIsBetter, Options{}), "b")
	if b.Kind != Difference || b.Negligible {
		t.Errorf("30%%: %+v", b)
	}

	b = byName(t, CompareTo(series(1/1.3), "a", HigherIsBetter, Options{}), "b")
	if b.Kind != Difference || !strings.HasPrefix(b.Text, "1.30× slower") {
		t.Errorf("30%% less throughput: %+v", b)
	}
}

// TestResolvingRounds: an undecided comparison wider than the minimum effect
// says roughly how many rounds would resolve it.
func TestResolvingRounds(t *testing.T) {
	var s []Sample

	noise := []float64{1.3, 0.8, 1.1, 0.9, 1.25, 0.85}
	for r, f := range noise {
		s = append(s, Sample{"a", r, 100}, Sample{"b", r, 100 * f})
	}

	b := byName(t, CompareTo(s, "a", LowerIsBetter, Options{}), "b")
	if b.Kind != NoDifference || b.Negligible || !strings.Contains(b.Text, " rounds would resolve ±5%") {
		t.Fatalf("%+v", b)
	}

	if b.Needed <= 6 {
		t.Errorf("needed %d rounds, want more than the 6 it had", b.Needed)
	}
}

// TestOneRunASide: runs are the unit of separate results; one a side is
// inconclusive, and the text says how many would do (compare's note says
// why).
func TestOneRunASide(t *testing.T) {
	s := []Sample{{"a", 0, 100}, {"b", 0, 500}}

	b := byName(t, CompareTo(s, "a", LowerIsBetter, Options{Design: Unpaired, Unit: "run"}), "b")
	if b.Kind != Inconclusive || b.Text != "inconclusive: 1 run a side, at least 4 a side needed" {
		t.Errorf("%+v", b)
	}
}

// TestProportion checks the Wilson interval against values computed by
// hand from its formula (z = 1.95996).
func TestProportion(t *testing.T) {
	for _, tc := range []struct {
		k, n      int
		p, lo, hi float64
	}{
		{0, 20, 0, 0, 0.1611},
		{3, 60, 0.05, 0.0171, 0.1370},
		{20, 20, 1, 0.8389, 1},
		{15, 20, 0.75, 0.5313, 0.8881},
	} {
		p, lo, hi := Proportion(tc.k, tc.n, 0.05)
		if math.Abs(p-tc.p) > 1e-9 || math.Abs(lo-tc.lo) > 5e-4 || math.Abs(hi-tc.hi) > 5e-4 {
			t.Errorf("%d of %d: %.4f [%.4f, %.4f], want %.4f [%.4f, %.4f]", tc.k, tc.n, p, lo, hi, tc.p, tc.lo, tc.hi)
		}
	}
}
