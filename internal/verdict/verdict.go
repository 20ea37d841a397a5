// Package verdict answers "which is faster, and by how much" honestly, in the
// style of benchmark-ips' compare!: every variant is measured in several
// trial rounds, each variant gets its median with a 95% confidence interval,
// and each is compared with the best (or with a baseline) by
//
//   - a ratio computed pair by pair within each round, so that drift common to
//     all variants of a round (a noisy neighbour, a warming cache, thermal
//     throttling) cancels out, reported as the median of the per-round ratios
//     with its 95% confidence interval; and
//   - a Mann-Whitney U test (benchmath.AssumeNothing) on the unpaired values,
//     so that a difference is only claimed when it is significant at alpha.
//     Otherwise the verdict says "same-ish".
//
// # Values that are not measurements
//
// Values must be finite and non-negative. NaN, ±Inf and negative values are
// dropped as if they had not been recorded: they count in no N, median, test
// or ratio, and a variant left without any value is omitted from the
// verdicts. Zero is a real measurement (an interval with no completed
// operation has zero throughput) and is kept. In a per-round ratio a zero
// denominator with a positive numerator gives +Inf ("∞× slower"); 0/0 says
// nothing and that round is dropped from the ratio.
//
// # Non-finite results
//
// Confidence bounds are ±Inf when there are too few values for a 95% interval
// of a median (fewer than 6): Lo, Hi, RatioLo and RatioHi can be infinite, and
// Ratio is NaN when two variants share no round. Encode verdicts with care:
// encoding/json rejects NaN and ±Inf.
package verdict

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"

	"golang.org/x/perf/benchmath"
)

// Direction says which way a metric improves.
type Direction int

const (
	// HigherIsBetter is for throughput-like metrics; verdicts say "faster"
	// and "slower".
	HigherIsBetter Direction = iota
	// LowerIsBetter is for latency-like metrics; verdicts say "lower" and
	// "higher".
	LowerIsBetter
)

// String returns "higher is better" or "lower is better".
func (d Direction) String() string {
	if d == LowerIsBetter {
		return "lower is better"
	}

	return "higher is better"
}

// DefaultAlpha is the significance level used when Compare or CompareTo is
// given an alpha outside (0, 1).
const DefaultAlpha = 0.05

// Confidence is the level of every confidence interval in a Verdict.
const Confidence = 0.95

// Sample is one measurement of one variant in one trial round. Samples of
// different variants with the same Round are paired for ratios.
type Sample struct {
	Variant string
	Round   int
	Value   float64
}

// Verdict is one variant's standing against the best variant (Compare) or
// against a baseline (CompareTo).
type Verdict struct {
	// Variant is the variant's name.
	Variant string

	// N is the number of the variant's usable values; Median is their
	// median, and Lo and Hi bound its 95% confidence interval (±Inf when
	// N is too small for one).
	N              int
	Median, Lo, Hi float64

	// Best marks the variant with the best median.
	Best bool

	// Ratio is how many times worse the variant is than the reference (the
	// best variant for Compare, the baseline for CompareTo): the median of
	// the per-round ratios worse/reference, that is value/reference for
	// LowerIsBetter and reference/value for HigherIsBetter, over the rounds
	// in which both have a value. Above 1 is worse, below 1 is better (only
	// possible in CompareTo, or against the best when pairs and medians
	// disagree). RatioLo and RatioHi bound its 95% confidence interval. The
	// reference itself has 1, 1, 1. Ratio is NaN when the two variants
	// share no round.
	Ratio, RatioLo, RatioHi float64

	// P is the two-sided Mann-Whitney U p-value of the variant's values
	// against the reference's (benchmath.AssumeNothing); 1 for the
	// reference itself.
	P float64

	// SameIsh is true when P > alpha: the variant cannot be told apart from
	// the reference. It is false for the reference itself.
	SameIsh bool

	// Text is the verdict for people: "fastest", "1.21× slower ±3%",
	// "same-ish (p=0.41)", "same-ish (too few trials: need ≥4)"; with
	// LowerIsBetter "lowest", "2.10× higher ±5%"; in CompareTo "baseline",
	// "1.3× faster ±2%", "1.80× lower ±4%".
	Text string
}

// Compare ranks the variants, best median first (ties in the order the
// variants first appear in samples), and compares each with the best. alpha
// is the significance level, DefaultAlpha if outside (0, 1). Variants
// without a usable value are omitted.
func Compare(samples []Sample, dir Direction, alpha float64) []Verdict {
	alpha = normAlpha(alpha)
	vs := collect(samples)

	if len(vs) == 0 {
		return nil
	}

	slices.SortStableFunc(vs, func(a, b *variant) int {
		if dir == LowerIsBetter {
			return cmp.Compare(a.median, b.median)
		}

		return cmp.Compare(b.median, a.median)
	})

	best := vs[0]
	out := make([]Verdict, 0, len(vs))

	for _, v := range vs {
		verd := compareWith(v, best, dir, alpha)
		verd.Best = v == best

		if v == best {
			verd.Text = bestWord(dir)
		}

		out = append(out, verd)
	}

	return out
}

// CompareTo compares every variant with the baseline variant, baseline
// first and the others in the order they first appear in samples. Best marks
// the variant with the best median. alpha is as for Compare. If the baseline
// has no usable value, the others are returned uncompared: Ratio, RatioLo,
// RatioHi and P are NaN, SameIsh is false and Text says so.
func CompareTo(samples []Sample, baseline string, dir Direction, alpha float64) []Verdict {
	alpha = normAlpha(alpha)
	vs := collect(samples)

	if len(vs) == 0 {
		return nil
	}

	bestIdx := 0

	for i, v := range vs {
		if better(v.median, vs[bestIdx].median, dir) {
			bestIdx = i
		}
	}

	var base *variant

	for _, v := range vs {
		if v.name == baseline {
			base = v
		}
	}

	out := make([]Verdict, 0, len(vs))

	if base != nil {
		verd := compareWith(base, base, dir, alpha)
		verd.Text = "baseline"
		out = append(out, verd)
	}

	for _, v := range vs {
		if v == base {
			continue
		}

		var verd Verdict

		if base == nil {
			nan := math.NaN()
			verd = Verdict{
				Variant: v.name, N: len(v.values), Median: v.median, Lo: v.lo, Hi: v.hi,
				Ratio: nan, RatioLo: nan, RatioHi: nan, P: nan,
				Text: fmt.Sprintf("not compared: baseline %q has no values", baseline),
			}
		} else {
			verd = compareWith(v, base, dir, alpha)
		}

		out = append(out, verd)
	}

	for i := range out {
		out[i].Best = out[i].Variant == vs[bestIdx].name
	}

	return out
}

// variant is one variant's usable values.
type variant struct {
	name   string
	values []float64         // in input order
	byRnd  map[int][]float64 // values per round
	order  []int             // rounds in first-appearance order
	rounds map[int]float64   // median value per round, for pairing
	median float64           // median of values
	lo, hi float64           // its 95% confidence interval
}

// collect groups the usable samples by variant, in order of first
// appearance, and summarises each.
func collect(samples []Sample) []*variant {
	var vs []*variant

	idx := map[string]*variant{}

	for _, s := range samples {
		if !usable(s.Value) {
			continue
		}

		v := idx[s.Variant]
		if v == nil {
			v = &variant{name: s.Variant, byRnd: map[int][]float64{}}
			idx[s.Variant] = v
			vs = append(vs, v)
		}

		v.values = append(v.values, s.Value)

		if _, ok := v.byRnd[s.Round]; !ok {
			v.order = append(v.order, s.Round)
		}

		v.byRnd[s.Round] = append(v.byRnd[s.Round], s.Value)
	}

	th := benchmath.DefaultThresholds

	for _, v := range vs {
		v.rounds = make(map[int]float64, len(v.byRnd))
		for r, xs := range v.byRnd {
			v.rounds[r] = median(xs)
		}

		sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(v.values), &th), Confidence)
		v.median, v.lo, v.hi = sum.Center, sum.Lo, sum.Hi
	}

	return vs
}

// usable reports whether x is a measurement: finite and non-negative.
func usable(x float64) bool {
	return !math.IsNaN(x) && !math.IsInf(x, 0) && x >= 0
}

// median returns the median of xs (not modified), which must not be empty.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)

	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}

	return (s[n/2-1] + s[n/2]) / 2
}

// better reports whether median a is strictly better than b.
func better(a, b float64, dir Direction) bool {
	if dir == LowerIsBetter {
		return a < b
	}

	return a > b
}

func normAlpha(alpha float64) float64 {
	if !(alpha > 0 && alpha < 1) {
		return DefaultAlpha
	}

	return alpha
}

// compareWith compares v with the reference ref.
func compareWith(v, ref *variant, dir Direction, alpha float64) Verdict {
	out := Verdict{Variant: v.name, N: len(v.values), Median: v.median, Lo: v.lo, Hi: v.hi}

	if v == ref {
		out.Ratio, out.RatioLo, out.RatioHi, out.P = 1, 1, 1, 1
		return out
	}

	out.Ratio, out.RatioLo, out.RatioHi = pairedRatio(v, ref, dir)

	th := benchmath.Thresholds{CompareAlpha: alpha}
	a := benchmath.NewSample(slices.Clone(ref.values), &th)
	b := benchmath.NewSample(slices.Clone(v.values), &th)
	out.P = benchmath.AssumeNothing.Compare(a, b).P
	out.SameIsh = out.P > alpha

	switch {
	case minUTestP(len(v.values), len(ref.values)) > alpha:
		out.SameIsh = true
		out.Text = fmt.Sprintf("same-ish (too few trials: need ≥%d)", neededTrials(alpha))
	case out.SameIsh:
		out.Text = fmt.Sprintf("same-ish (p=%s)", formatP(out.P))
	default:
		out.Text = ratioText(out.Ratio, out.RatioLo, out.RatioHi, dir, better(v.median, ref.median, dir))
	}

	return out
}

// pairedRatio is the median, with its 95% confidence interval, of the
// per-round ratios worse/ref over the rounds both variants have.
func pairedRatio(v, ref *variant, dir Direction) (ratio, lo, hi float64) {
	var ratios []float64

	for _, r := range v.order {
		x, ok := v.rounds[r]
		if !ok {
			continue
		}

		y, ok := ref.rounds[r]
		if !ok {
			continue
		}

		num, den := x, y // LowerIsBetter: value / reference
		if dir == HigherIsBetter {
			num, den = y, x // reference / value
		}

		q := num / den // 0/0 is NaN, x/0 is +Inf
		if math.IsNaN(q) {
			continue
		}

		ratios = append(ratios, q)
	}

	if len(ratios) == 0 {
		nan := math.NaN()
		return nan, nan, nan
	}

	// benchmath's bounds are order statistics, which +Inf ratios do not
	// upset; its center interpolates, giving Inf-Inf = NaN, so the median
	// is taken here.
	th := benchmath.DefaultThresholds
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(ratios, &th), Confidence)

	return median(ratios), sum.Lo, sum.Hi
}

// minUTestP is the smallest two-sided p-value the exact Mann-Whitney U test
// can give for samples of sizes n1 and n2 (complete separation, no ties):
// 2 / C(n1+n2, n1), capped at 1.
func minUTestP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}

	// C(n1+n2, n1) = Γ(n1+n2+1) / (Γ(n1+1) Γ(n2+1)), in logs to stay finite.
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	logC := lg(n1+n2) - lg(n1) - lg(n2)

	return math.Min(1, 2*math.Exp(-logC))
}

// neededTrials is the smallest equal number of values per side for which
// the U test can reach significance at alpha.
func neededTrials(alpha float64) int {
	n := 1
	for minUTestP(n, n) > alpha {
		n++
	}

	return n
}

// bestWord is the Text of the best variant in Compare.
func bestWord(dir Direction) string {
	if dir == LowerIsBetter {
		return "lowest"
	}

	return "fastest"
}

// ratioText describes a significant difference: ratio is worse/reference
// and [lo, hi] its confidence interval. isBetter, from the medians, gives
// the direction when there is no ratio.
func ratioText(ratio, lo, hi float64, dir Direction, isBetter bool) string {
	worse, better := "slower", "faster"
	if dir == LowerIsBetter {
		worse, better = "higher", "lower"
	}

	if math.IsNaN(ratio) {
		word := worse
		if isBetter {
			word = better
		}

		return word + " (no ratio: no round with values of both)"
	}

	word := worse
	if ratio < 1 {
		// Better than the reference: say "x× faster" with x = 1/ratio and
		// the interval inverted with it.
		word = better
		ratio, lo, hi = 1/ratio, 1/hi, 1/lo
	}

	s := formatRatio(ratio) + " " + word

	switch {
	case math.IsInf(ratio, 1):
		return s
	case math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi):
		return s + fmt.Sprintf(" (no CI: need ≥%d rounds)", medianCINeeded())
	default:
		return s + fmt.Sprintf(" ±%.0f%%", 100*(hi-lo)/2/ratio)
	}
}

// medianCINeeded is the smallest number of values with a finite 95%
// confidence interval for their median (6).
var medianCINeeded = sync.OnceValue(func() int {
	th := benchmath.DefaultThresholds

	for n := 2; n < 100; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i)
		}

		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(xs, &th), Confidence)
		if !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) {
			return n
		}
	}

	return 100
})

// formatRatio formats a ratio ≥ 1 with three significant digits, or as a
// whole number from 100: "1.21×", "12.3×", "966×", "∞×".
func formatRatio(r float64) string {
	switch {
	case math.IsInf(r, 1):
		return "∞×"
	case r < 9.995:
		return fmt.Sprintf("%.2f×", r)
	case r < 99.95:
		return fmt.Sprintf("%.1f×", r)
	default:
		return fmt.Sprintf("%.0f×", r)
	}
}

// formatP formats a p-value with two decimals, or more when small.
func formatP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "?"
	case p >= 0.01:
		return fmt.Sprintf("%.2f", p)
	case p >= 0.001:
		return fmt.Sprintf("%.3f", p)
	default:
		return "<0.001"
	}
}
