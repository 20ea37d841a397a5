package ycsbref

import (
	"math"
	"testing"
)

// TestDistributionsSum checks that each reference distribution is one:
// the ranks folded one by one plus the spread tail, and YCSB's latest with
// and without a stale eta.
func TestDistributionsSum(t *testing.T) {
	t.Parallel()

	sum := func(p []float64) float64 {
		s := 0.0
		for _, v := range p {
			s += v
		}

		return s
	}

	cases := map[string][]float64{
		"ScrambledPMF(1001, 2^16)":    ScrambledPMF(1001, 1<<16),
		"ScrambledPMF(7, 3)":          ScrambledPMF(7, 3),
		"SkewedLatestPMF(999, 999)":   SkewedLatestPMF(999, 999),
		"SkewedLatestPMF(5000, 999)":  SkewedLatestPMF(5000, 999),
		"Within(ScrambledPMF, 500)":   Within(ScrambledPMF(1001, 1<<16), 500),
		"SkewedLatestPMF(1999, 1000)": SkewedLatestPMF(1999, 1000),
	}

	for name, p := range cases {
		if s := sum(p); math.Abs(s-1) > 1e-9 {
			t.Errorf("%s sums to %.12f", name, s)
		}
	}

	// Key 0 is never drawn by YCSB's latest.
	if p := SkewedLatestPMF(1999, 999); p[0] != 0 {
		t.Errorf("SkewedLatestPMF gives key 0 probability %v", p[0])
	}
}

// TestScrambledTailIsSmall checks that folding more ranks one by one
// changes the head shares by less than a hundredth of a point: the tail
// spread evenly is exact enough for the tests' tolerances.
func TestScrambledTailIsSmall(t *testing.T) {
	t.Parallel()

	a := Within(ScrambledPMF(1001, 1<<18), 1000)
	b := Within(ScrambledPMF(1001, 1<<21), 1000)

	for _, k := range []int{1, 10, 100} {
		if d := math.Abs(HeadShare(a, k) - HeadShare(b, k)); d > 1e-4 {
			t.Errorf("top-%d share moves by %.6f between 2^18 and 2^21 exact ranks", k, d)
		}
	}
}

// TestKeyNameAndSizing checks KeyName's padding and ordering and Keys's
// arithmetic against CoreWorkload's, worked out by hand.
func TestKeyNameAndSizing(t *testing.T) {
	t.Parallel()

	if got := KeyName(42, 5, true); got != "user00042" {
		t.Errorf("KeyName(42, 5, ordered) = %s", got)
	}

	if got := KeyName(12345, 3, true); got != "user12345" {
		t.Errorf("KeyName(12345, 3, ordered) = %s", got)
	}

	// 1000 records + 10000 operations * 0.05 inserts * 2 + 1.
	if got := Keys(1000, 10000, 0.05); got != 2001 {
		t.Errorf("Keys(1000, 10000, 0.05) = %d, want 2001", got)
	}

	if got := Keys(1000, 1000, 0); got != 1001 {
		t.Errorf("Keys(1000, 1000, 0) = %d, want 1001", got)
	}
}
