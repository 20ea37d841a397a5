package verdict

import (
	"math"
	"strings"
	"testing"
)

// costSamples pairs variant "struct" with "none" round by round: none's
// values drift a lot between rounds, struct is none + extra[i].
func costSamples(extra []float64) []Sample {
	var s []Sample

	for i, e := range extra {
		base := 10 * float64(i+1) * float64(i+1) // drift common to the round
		s = append(s, Sample{"none", i + 1, base}, Sample{"struct", i + 1, base + e})
	}

	return s
}

// TestCostPaired: the estimate is the median of the per-round differences,
// the interval their order statistics, and drift common to a round cancels.
func TestCostPaired(t *testing.T) {
	c := CompareCost(costSamples([]float64{3, 2.5, 3.5, 2.8, 3.1, 3.3}), "struct", "none", Options{})

	if c.Kind != Difference || c.Used != 6 || c.Needed != 6 {
		t.Fatalf("%+v, want a difference on 6 rounds", c)
	}

	// Sorted differences 2.5 2.8 3 3.1 3.3 3.5: median (3+3.1)/2, and at
	// n = 6 the 95% interval is the extremes (k = 1).
	if math.Abs(c.Estimate-3.05) > 1e-9 || math.Abs(c.Lo-2.5) > 1e-9 || math.Abs(c.Hi-3.5) > 1e-9 {
		t.Errorf("estimate %v [%v, %v], want 3.05 [2.5, 3.5]", c.Estimate, c.Lo, c.Hi)
	}

	if math.Abs(c.P-2*math.Pow(0.5, 6)) > 1e-12 {
		t.Errorf("p = %v, want the sign test's 2/64", c.P)
	}

	if c.Text != "difference 3.05, 95% CI 2.5–3.5" {
		t.Errorf("text %q", c.Text)
	}

	// With n = 9 the interval moves inward: k = 2.
	c = CompareCost(costSamples([]float64{1, 9, 2, 8, 3, 7, 4, 6, 5}), "struct", "none", Options{})
	if c.Estimate != 5 || c.Lo != 2 || c.Hi != 8 {
		t.Errorf("n = 9: %v [%v, %v], want 5 [2, 8]", c.Estimate, c.Lo, c.Hi)
	}
}

func TestCostNoDifferenceAndInconclusive(t *testing.T) {
	c := CompareCost(costSamples([]float64{-1, 2, 0.5, -0.5, 1, -2}), "struct", "none", Options{})
	if c.Kind != NoDifference || !(c.Lo < 0 && c.Hi > 0) || !strings.HasPrefix(c.Text, "no significant difference; 95% CI -2–2") {
		t.Errorf("straddling 0: %+v", c)
	}

	c = CompareCost(costSamples([]float64{3, 3, 3, 3, 3}), "struct", "none", Options{})
	if c.Kind != Inconclusive || c.Estimate != 3 || !math.IsInf(c.Lo, -1) || c.Text != "inconclusive: 5 rounds, at least 6 needed" {
		t.Errorf("5 rounds: %+v", c)
	}

	c = CompareCost(costSamples([]float64{3, 3, 3, 3, 3, 3}), "map", "none", Options{})
	if c.Kind != Inconclusive || !math.IsNaN(c.Estimate) || c.Text != `inconclusive: no values of "map"` {
		t.Errorf("unknown variant: %+v", c)
	}

	// Rounds of one variant only pair with nothing.
	c = CompareCost([]Sample{{"a", 1, 1}, {"a", 2, 1}, {"b", 3, 1}}, "a", "b", Options{})
	if c.Kind != Inconclusive || c.Used != 0 {
		t.Errorf("no shared round: %+v", c)
	}
}

// TestCostUnpaired: Hodges-Lehmann shift with the Moses interval.
func TestCostUnpaired(t *testing.T) {
	var s []Sample
	for i, x := range []float64{1, 2, 3, 4} {
		s = append(s, Sample{"ref", i, x}, Sample{"v", 100 + i, x + 10})
	}

	c := CompareCost(s, "v", "ref", Options{Design: Unpaired, Unit: "interval"})

	// Pairwise differences 10 + (x_j − x_i) range over 7…13 symmetrically;
	// at 4 a side the 95% interval is their extremes (k = 1).
	if c.Kind != Difference || c.Estimate != 10 || c.Lo != 7 || c.Hi != 13 {
		t.Errorf("%+v, want 10 [7, 13]", c)
	}

	c = CompareCost(s[:6], "v", "ref", Options{Design: Unpaired, Unit: "interval"})
	if c.Kind != Inconclusive || c.Text != "inconclusive: 3 intervals, at least 4 needed" {
		t.Errorf("3 a side: %+v", c)
	}
}
