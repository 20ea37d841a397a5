// Package history finds where performance changed in a series of runs: it
// groups results files into series (same workload, parameters, target and
// client stack), takes one point per run for each operation and metric, and
// looks for change points with E-Divisive means.
//
// It exists because a pairwise gate (compare BASE NEW) on a noisy machine
// either cries wolf or misses a slow drift: judged over the whole series, a
// change must hold for several runs before it is called one, and the run
// where it starts is named. It reads results only; it never talks to a
// server.
package history

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Defaults of the detector, chosen by measurement (docs/history.md, "Tuning";
// TestFalseChangeRate and TestStepDetection measure them).
const (
	// DefaultAlpha is the significance level of the permutation test: a
	// split is kept when at most this share of shuffled series splits as
	// well.
	DefaultAlpha = 0.05
	// DefaultPermutations is how many shuffles the test draws. With 199
	// the smallest p-value is 1/200, well below DefaultAlpha, and the
	// decision at 0.05 rarely changes with more.
	DefaultPermutations = 199
	// DefaultMinSize is the fewest runs on each side of a change point. A
	// change is then called only once it has held for that many runs: one
	// slow night is not a change.
	DefaultMinSize = 4
)

// Options tune Detect. The zero value means the defaults.
type Options struct {
	// Alpha is the significance level; DefaultAlpha when outside (0, 1).
	Alpha float64
	// Permutations is the number of shuffles of the permutation test;
	// DefaultPermutations when ≤ 0.
	Permutations int
	// MinSize is the least number of points in a segment; DefaultMinSize
	// when ≤ 0, and at least 2 (a segment's own spread needs two points).
	MinSize int
	// Seed seeds the shuffles, so that the same series and seed always give
	// the same change points.
	Seed uint64
}

func (o Options) norm() Options {
	if !(o.Alpha > 0 && o.Alpha < 1) {
		o.Alpha = DefaultAlpha
	}

	if o.Permutations <= 0 {
		o.Permutations = DefaultPermutations
	}

	if o.MinSize <= 0 {
		o.MinSize = DefaultMinSize
	}

	o.MinSize = max(o.MinSize, 2)

	return o
}

// ChangePoint is where a series changes: the point at Index is the first of
// the new segment.
type ChangePoint struct {
	Index int
	// Q is the divergence statistic of the split that found it (the
	// largest over the segment it split).
	Q float64
	// P is the permutation p-value: (shuffles at least as divergent + 1)
	// / (shuffles + 1).
	P float64
}

// Detect finds the change points of xs by E-Divisive means (Matteson and
// James, 2014) with exponent α = 1, as MongoDB's performance CI uses it:
// the best split of each segment is the one that maximises the scaled
// energy distance between its two sides; the best of these over all
// segments is kept when a permutation test finds it significant, and the
// search repeats on the new segments until a split is not significant.
//
// Following the common practice (MongoDB's and Hunter's implementations),
// a split divides a segment into two parts that together cover it: the end
// of the right part is the segment's end, not searched for.
//
// NaN values must not be passed in; the caller leaves out runs without a
// value. The result is sorted by Index.
func Detect(xs []float64, opts Options) []ChangePoint {
	opts = opts.norm()
	rng := rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15))

	// Segment boundaries: segment i is [bounds[i], bounds[i+1]).
	bounds := []int{0, len(xs)}

	var out []ChangePoint

	scratch := make([]float64, len(xs))

	for {
		bestSeg, bestTau, bestQ := -1, 0, math.Inf(-1)

		for s := range len(bounds) - 1 {
			tau, q, ok := BestSplit(xs[bounds[s]:bounds[s+1]], opts.MinSize)
			if ok && q > bestQ {
				bestSeg, bestTau, bestQ = s, bounds[s]+tau, q
			}
		}

		if bestSeg < 0 {
			break
		}

		p, ok := permutationP(xs, bounds, bestQ, opts, rng, scratch)
		if !ok {
			break
		}

		out = append(out, ChangePoint{Index: bestTau, Q: bestQ, P: p})
		bounds = append(bounds, bestTau)
		slices.Sort(bounds)
	}

	slices.SortFunc(out, func(a, b ChangePoint) int { return a.Index - b.Index })

	return out
}

// permutationP is the p-value of the observed statistic q: each shuffle
// permutes the points within every current segment (so that the change
// points already found stay), and counts when the largest best-split
// statistic over the shuffled segments reaches q. It reports false as soon
// as the count makes p exceed α: the decision is then known, and the rest
// of the shuffles would be wasted.
func permutationP(xs []float64, bounds []int, q float64, opts Options, rng *rand.Rand, scratch []float64) (float64, bool) {
	limit := opts.Alpha * float64(opts.Permutations+1)
	hits := 0

	for range opts.Permutations {
		copy(scratch, xs)

		top := math.Inf(-1)

		for s := range len(bounds) - 1 {
			seg := scratch[bounds[s]:bounds[s+1]]
			rng.Shuffle(len(seg), func(i, j int) { seg[i], seg[j] = seg[j], seg[i] })

			if _, sq, ok := BestSplit(seg, opts.MinSize); ok {
				top = max(top, sq)
			}
		}

		if top >= q {
			hits++
			if float64(hits+1) > limit {
				return 0, false
			}
		}
	}

	return float64(hits+1) / float64(opts.Permutations+1), true
}

// BestSplit is the split of xs that maximises the divergence statistic,
// with at least minSize points on each side: tau is the first index of the
// right side. It reports false when xs is too short to split.
//
// For sides X = xs[:τ] (m points) and Y = xs[τ:] (n points) the statistic
// is, with α = 1,
//
//	q = mn/(m+n) · ( 2/(mn) Σ|Xi−Yj| − 2/(m(m−1)) Σ_{i<k}|Xi−Xk| − 2/(n(n−1)) Σ_{j<k}|Yj−Yk| )
//
// the sample energy distance between the sides scaled by their sizes. The
// three sums are updated as τ moves, so the search costs O(len(xs)²).
func BestSplit(xs []float64, minSize int) (tau int, q float64, ok bool) {
	minSize = max(minSize, 2)
	n := len(xs)

	if n < 2*minSize {
		return 0, 0, false
	}

	// Start with the left side empty: cross = 0, left = 0, right = all pairs.
	var left, right, cross float64

	for i := range n {
		for j := i + 1; j < n; j++ {
			right += math.Abs(xs[i] - xs[j])
		}
	}

	q = math.Inf(-1)

	for t := 1; t < n; t++ {
		// Move xs[t-1] from the right side to the left.
		v := xs[t-1]

		var toLeft, toRight float64

		for i := range t - 1 {
			toLeft += math.Abs(v - xs[i])
		}

		for j := t; j < n; j++ {
			toRight += math.Abs(v - xs[j])
		}

		left += toLeft
		right -= toRight
		cross += toRight - toLeft

		if t < minSize || n-t < minSize {
			continue
		}

		if s := statistic(t, n-t, left, right, cross); s > q {
			tau, q = t, s
		}
	}

	return tau, q, true
}

// statistic is q for sides of m and n points with within-side pair sums
// left and right and cross-side sum cross (see BestSplit).
func statistic(m, n int, left, right, cross float64) float64 {
	fm, fn := float64(m), float64(n)
	e := 2*cross/(fm*fn) - 2*left/(fm*(fm-1)) - 2*right/(fn*(fn-1))

	return fm * fn / (fm + fn) * e
}
