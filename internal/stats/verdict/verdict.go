// Package verdict answers "which is faster, and by how much" with no more
// and no less than the data support. Every comparison of a variant with a
// reference (declared, or the first variant; never the best of the same
// data) ends in one of three kinds:
//
//   - Difference: the variant differs from the reference, by a ratio whose
//     95% confidence interval excludes 1 and whose estimate is at least the
//     minimum effect ("2.10× slower, 95% CI 1.90×–2.30×");
//   - NoDifference: no difference was detected at this precision, the
//     interval contains 1 ("no significant difference; 95% CI
//     0.97×–1.04×"), or the change is smaller than the minimum effect
//     ("no meaningful difference (within ±5%; 95% CI 1.01×–1.03×)"); and
//   - Inconclusive: there are too few values for a 95% interval at all
//     ("inconclusive: 3 rounds, at least 6 needed").
//
// The verdict follows from the interval and the minimum effect alone, so the
// words, the interval and the Kind can never disagree.
//
// # Method
//
// Ratios are computed on the logarithms of the values, so that "2× slower"
// and "2× faster" are symmetric and a ratio and its reciprocal have the same
// interval, inverted.
//
// Paired samples (Paired: interleaved trial rounds, where every variant ran
// once per round under the same conditions) are compared round by round: the
// estimate is the median of the per-round ratios value/reference, and its
// interval is the distribution-free confidence interval of a median from
// order statistics (the interval that inverts the sign test). It assumes only
// that rounds are independent; drift common to a round (a noisy neighbour, a
// warming cache) cancels in the ratio. With k the largest integer such that
// P(Binomial(n, ½) < k) ≤ α/2, the interval is [r₍k₎, r₍n+1−k₎] of the n sorted
// ratios; k ≥ 1 needs n ≥ 6 at α = 0.05 (½⁶·2 = 0.031), so fewer than 6 rounds
// are inconclusive.
//
// Unpaired samples (Unpaired: e.g. the intervals of two separate runs, where
// the k-th interval of one has nothing to do with the k-th of the other) are
// compared with the Mann-Whitney U test in its estimation form: the estimate
// is the Hodges-Lehmann ratio (the median of all pairwise ratios y/x), and the
// interval is the Moses interval — the ratios θ for which the U test does not
// tell y from θ·x apart at α — which is [d₍k₎, d₍mn+1−k₎] of the m·n sorted
// pairwise log ratios, k from the exact null distribution of U (normal
// approximation beyond 50 values a side). It assumes the two distributions
// differ by a scale factor. k ≥ 1 needs 4 values a side at α = 0.05
// (2/C(8,4) = 0.029).
//
// The median of each variant's own values gets the same order-statistic
// interval as the paired ratios (6 values at least).
//
// # Values that are not measurements
//
// Values must be finite and non-negative. NaN, ±Inf and negative values are
// dropped as if they had not been recorded: they count in no N, median or
// ratio, and a variant left without any value is omitted from the verdicts.
// Zero is a real measurement (an interval with no completed operation has
// zero throughput) and is kept: a positive value against a zero gives an
// infinite ratio ("∞× slower"), and a paired round where both are zero says
// nothing and is dropped (in unpaired samples such pairs are ties).
//
// # Non-finite results
//
// Lo, Hi, RatioLo and RatioHi are ±Inf when there are too few values for an
// interval, and Ratio is NaN when two variants share no round. Encode
// verdicts with care: encoding/json rejects NaN and ±Inf.
package verdict

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
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

// Kind is what a comparison found. Reports colour cells by it and
// regression gates act on Difference only.
type Kind int

const (
	// Inconclusive means there are too few values for a confidence
	// interval: the data say nothing either way. It is the zero Kind, so
	// that a Kind nobody set never claims anything.
	Inconclusive Kind = iota
	// NoDifference means the confidence interval of the ratio contains 1:
	// no difference was detected at this precision (which is not proof that
	// there is none; the interval says how large one could still be).
	NoDifference
	// Difference means the confidence interval of the ratio excludes 1.
	Difference
	// Reference marks the variant the others are compared with (the best,
	// or the baseline): it is not itself a comparison.
	Reference
)

var kindNames = [...]string{"inconclusive", "no-difference", "difference", "reference"}

// String returns "inconclusive", "no-difference", "difference" or
// "reference".
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}

	return kindNames[k]
}

// MarshalText encodes the Kind as its String, so results files hold words.
func (k Kind) MarshalText() ([]byte, error) {
	if k < 0 || int(k) >= len(kindNames) {
		return nil, fmt.Errorf("verdict: invalid kind %d", int(k))
	}

	return []byte(kindNames[k]), nil
}

// UnmarshalText decodes a Kind written by MarshalText.
func (k *Kind) UnmarshalText(b []byte) error {
	i := slices.Index(kindNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("verdict: unknown kind %q (want one of %s)", b, strings.Join(kindNames[:], ", "))
	}

	*k = Kind(i)

	return nil
}

// Design says how the samples of two variants relate.
type Design int

const (
	// Paired samples with the same Round were measured together
	// (interleaved trial rounds); ratios are taken round by round.
	Paired Design = iota
	// Unpaired samples are independent of each other across variants (the
	// intervals of separate runs); Round is ignored.
	Unpaired
)

// DefaultAlpha is the significance level used when Options.Alpha is outside
// (0, 1). Confidence intervals are at level 1−α: 95% by default.
const DefaultAlpha = 0.05

// Options configure a comparison. The zero value is paired rounds at
// α = 0.05.
type Options struct {
	// Alpha is the significance level, DefaultAlpha if outside (0, 1).
	Alpha float64
	// Design says whether samples are paired by Round.
	Design Design
	// Unit names one sample in texts ("round" when empty; "run" for
	// separate runs).
	Unit string
	// MinEffect is the smallest relative change that counts as a
	// difference (0.05: ±5%). A change the interval establishes but whose
	// estimate is smaller is reported as "no meaningful difference", never
	// as a difference. Zero means DefaultMinEffect; a negative value turns
	// the minimum off.
	MinEffect float64
	// Reference names the variant the others are compared with in
	// Compare; empty means the first variant in the samples' order. It is
	// never chosen by looking at the values: picking the best as the
	// reference and then testing the others against it inflates the error
	// rate (the best of several equal variants is best by chance).
	Reference string
}

// DefaultMinEffect is the minimum effect size when Options.MinEffect is
// zero: a difference smaller than 5% is "no meaningful difference". Five
// percent is about what a p50 moves between identical runs on a quiet
// machine, and the smallest change most performance questions care about.
const DefaultMinEffect = 0.05

// ParseMinEffect parses a minimum effect size written as a percentage
// ("5%", "2.5%", "0%") into Options.MinEffect: "0%" turns the minimum off
// (a negative MinEffect).
func ParseMinEffect(s string) (float64, error) {
	t := strings.TrimSpace(s)

	num, ok := strings.CutSuffix(t, "%")
	if !ok {
		return 0, fmt.Errorf("minimum effect %q: want a percentage such as 5%%", s)
	}

	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f >= 100 {
		return 0, fmt.Errorf("minimum effect %q: want a percentage from 0%% to below 100%%", s)
	}

	if f == 0 {
		return -1, nil
	}

	return f / 100, nil
}

func (o Options) norm() Options {
	if !(o.Alpha > 0 && o.Alpha < 1) {
		o.Alpha = DefaultAlpha
	}

	if o.Unit == "" {
		o.Unit = "round"
	}

	if o.MinEffect == 0 || math.IsNaN(o.MinEffect) {
		o.MinEffect = DefaultMinEffect
	}

	return o
}

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
	// median, and Lo and Hi bound its confidence interval (±Inf when N is
	// below MinSamples(Paired, α)).
	N              int
	Median, Lo, Hi float64

	// Best marks the variant with the best median.
	Best bool

	// Kind is what the comparison found; Reference for the reference.
	Kind Kind

	// Ratio is how many times worse the variant is than the reference:
	// value/reference for LowerIsBetter, reference/value for
	// HigherIsBetter, estimated as described in the package comment. Above
	// 1 is worse, below 1 better. RatioLo and RatioHi bound its confidence
	// interval (±Inf when Inconclusive). The reference itself has 1, 1, 1.
	// Ratio is NaN when paired variants share no round.
	Ratio, RatioLo, RatioHi float64

	// P is the two-sided p-value of the test the interval inverts (sign
	// test when paired, Mann-Whitney U when unpaired); 1 for the
	// reference. Kind follows the interval, which agrees with P ≤ α up to
	// ties.
	P float64

	// Used is the number of samples the comparison rested on (paired
	// rounds, or the smaller side when unpaired); Needed is the least
	// number for an interval at this α or, for a "no significant
	// difference" wider than the minimum effect, a rough number that
	// would resolve it.
	Used, Needed int

	// Negligible marks a NoDifference whose interval lies within the
	// minimum effect, or that is established but smaller than it.
	Negligible bool

	// Text is the verdict for people: "reference" (Compare's reference),
	// "baseline" (CompareTo); "2.10× slower, 95% CI
	// 1.90×–2.30×" (with LowerIsBetter "higher", and "faster"/"lower" when
	// better than the reference); "no significant difference; 95% CI
	// 0.97×–1.04×", where the interval is of value/reference, the metric's
	// own ratio; "inconclusive: 3 rounds, at least 6 needed".
	Text string
}

// Compare compares every variant with the reference: Options.Reference,
// or the first variant in the samples' order. The reference comes first,
// then the others ranked best median first (ties in the order they first
// appear). Best marks the variant with the best median. Variants without a
// usable value are omitted; if the reference has none, the others are
// returned uncompared (see CompareTo).
//
// The reference is never the best of the same data: choosing it by its
// values and then testing the others against it would make "difference"
// more likely than α in an A/A experiment.
func Compare(samples []Sample, dir Direction, opts Options) []Verdict {
	opts = opts.norm()

	ref := opts.Reference
	if !slices.ContainsFunc(samples, func(s Sample) bool { return s.Variant == ref && usable(s.Value) }) {
		// No reference named, or one this comparison does not have (a
		// target's name among variants): the first variant.
		ref = ""

		for _, s := range samples {
			if usable(s.Value) {
				ref = s.Variant
				break
			}
		}
	}

	out := CompareTo(samples, ref, dir, opts)
	if len(out) < 2 {
		return out
	}

	rest := out
	if out[0].Variant == ref {
		rest = out[1:]
	}

	slices.SortStableFunc(rest, func(a, b Verdict) int {
		if dir == LowerIsBetter {
			return cmp.Compare(a.Median, b.Median)
		}

		return cmp.Compare(b.Median, a.Median)
	})

	if out[0].Kind == Reference {
		out[0].Text = "reference"
	}

	return out
}

// CompareTo compares every variant with the baseline variant, baseline
// first and the others in the order they first appear in samples. Best marks
// the variant with the best median. If the baseline has no usable value, the
// others are returned uncompared: Inconclusive, with NaN ratios and P and a
// Text that says so.
func CompareTo(samples []Sample, baseline string, dir Direction, opts Options) []Verdict {
	opts = opts.norm()
	vs := collect(samples, opts)

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
		verd := compareWith(base, base, dir, opts)
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
				Kind: Inconclusive, Ratio: nan, RatioLo: nan, RatioHi: nan, P: nan,
				Text: fmt.Sprintf("not compared: baseline %q has no values", baseline),
			}
		} else {
			verd = compareWith(v, base, dir, opts)
		}

		out = append(out, verd)
	}

	for i := range out {
		out[i].Best = out[i].Variant == vs[bestIdx].name
	}

	return out
}

// MinSamples is the least number of samples that give a confidence interval
// at level 1−alpha: paired rounds, or values on each side when unpaired (6
// and 4 at α = 0.05). Fewer make every comparison Inconclusive.
func MinSamples(d Design, alpha float64) int {
	alpha = Options{Alpha: alpha}.norm().Alpha

	for n := 1; ; n++ {
		var k int
		if d == Unpaired {
			k = uCritical(n, n, alpha)
		} else {
			k = signCritical(n, alpha)
		}

		if k >= 1 {
			return n
		}
	}
}

// variant is one variant's usable values.
type variant struct {
	name   string
	values []float64         // in input order
	byRnd  map[int][]float64 // values per round
	order  []int             // rounds in first-appearance order
	rounds map[int]float64   // median value per round, for pairing
	median float64           // median of values
	lo, hi float64           // its confidence interval
}

// collect groups the usable samples by variant, in order of first
// appearance, and summarises each.
func collect(samples []Sample, opts Options) []*variant {
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

	for _, v := range vs {
		v.rounds = make(map[int]float64, len(v.byRnd))
		for r, xs := range v.byRnd {
			v.rounds[r] = Median(xs)
		}

		sorted := slices.Sorted(slices.Values(v.values))
		v.median = Median(sorted)
		v.lo, v.hi = medianCI(sorted, opts.Alpha)
	}

	return vs
}

// usable reports whether x is a measurement: finite and non-negative.
func usable(x float64) bool {
	return !math.IsNaN(x) && !math.IsInf(x, 0) && x >= 0
}

// Median returns the median of xs (not modified); NaN when xs is empty.
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)

	n := len(s)
	if n == 0 {
		return math.NaN()
	}

	if n%2 == 1 {
		return s[n/2]
	}

	a, b := s[n/2-1], s[n/2]
	if math.IsInf(a, 0) && math.IsInf(b, 0) && a != b {
		return math.NaN()
	}

	return (a + b) / 2
}

// medianCI is the distribution-free confidence interval of the median of
// sorted, ±Inf when there are too few values.
func medianCI(sorted []float64, alpha float64) (lo, hi float64) {
	n := len(sorted)

	k := signCritical(n, alpha)
	if k < 1 {
		return math.Inf(-1), math.Inf(1)
	}

	return sorted[k-1], sorted[n-k]
}

// better reports whether median a is strictly better than b.
func better(a, b float64, dir Direction) bool {
	if dir == LowerIsBetter {
		return a < b
	}

	return a > b
}

// estimate is a log ratio log(value/reference) with its interval and the
// test's p-value, or too few samples for an interval.
type estimate struct {
	theta, lo, hi float64
	p             float64
	used, needed  int
	enough        bool
	noPairs       bool // paired variants with no round in common
}

// compareWith compares v with the reference ref.
func compareWith(v, ref *variant, dir Direction, opts Options) Verdict {
	out := Verdict{Variant: v.name, N: len(v.values), Median: v.median, Lo: v.lo, Hi: v.hi}

	if v == ref {
		out.Kind, out.Ratio, out.RatioLo, out.RatioHi, out.P = Reference, 1, 1, 1, 1
		return out
	}

	var e estimate
	if opts.Design == Unpaired {
		e = unpairedLogRatio(v.values, ref.values, opts.Alpha)
	} else {
		e = pairedLogRatio(v, ref, opts.Alpha)
	}

	if e.enough && constantEqual(v.values, ref.values) {
		// The same value everywhere (zero errors on both sides, say): no
		// change at all, whatever the logarithms of zeros make of it.
		e.theta, e.lo, e.hi = 0, 0, 0
	}

	out.P, out.Used, out.Needed = e.p, e.used, e.needed

	// Worse/reference is value/reference for latencies, the inverse for
	// throughput; in log space, a change of sign.
	sign := 1.0
	if dir == HigherIsBetter {
		sign = -1
	}

	out.Ratio = math.Exp(sign * e.theta)
	out.RatioLo, out.RatioHi = math.Exp(sign*e.lo), math.Exp(sign*e.hi)

	if sign < 0 {
		out.RatioLo, out.RatioHi = out.RatioHi, out.RatioLo
	}

	level := confidenceLabel(opts.Alpha)
	// |log ratio| below band is not meaningful; a negative MinEffect is
	// kept negative by norm (so that norm is idempotent) and means none.
	effect := max(opts.MinEffect, 0)
	band := math.Log1p(effect)

	switch {
	case e.noPairs:
		out.Kind = Inconclusive
		out.Ratio, out.RatioLo, out.RatioHi = math.NaN(), math.Inf(-1), math.Inf(1)
		out.Text = fmt.Sprintf("inconclusive: no %s with values of both", opts.Unit)
	case !e.enough:
		out.Kind = Inconclusive
		out.RatioLo, out.RatioHi = math.Inf(-1), math.Inf(1)
		out.Text = fmt.Sprintf("inconclusive: %s, at least %d%s needed", e.countText(v, ref, opts), e.needed, aSide(opts))
	case (e.lo > 0 || e.hi < 0) && math.Abs(e.theta) >= band:
		out.Kind = Difference
		out.Text = differenceText(out.Ratio, out.RatioLo, out.RatioHi, dir, level)
	case e.lo > 0 || e.hi < 0 || (effect > 0 && e.lo >= -band && e.hi <= band):
		// Established but smaller than the minimum effect (real at this
		// precision, too small to matter), or an interval inside it.
		out.Kind = NoDifference
		out.Negligible = true
		out.Text = fmt.Sprintf("no meaningful difference (within ±%s; %s CI %s)", pct(effect), level,
			intervalText(math.Exp(e.lo), math.Exp(e.hi)))
	default:
		out.Kind = NoDifference
		out.Text = fmt.Sprintf("no significant difference; %s CI %s", level,
			intervalText(math.Exp(e.lo), math.Exp(e.hi)))

		if n := resolvingSamples(e, band); n > 1000 {
			out.Needed = n
			out.Text += fmt.Sprintf("; over 1000 %ss%s would be needed to resolve ±%s", opts.Unit, aSide(opts), pct(effect))
		} else if n > 0 {
			out.Needed = n
			out.Text += fmt.Sprintf("; ~%d %ss%s would resolve ±%s", n, opts.Unit, aSide(opts), pct(effect))
		}
	}

	return out
}

// aSide is " a side" for unpaired samples, whose counts are per side.
func aSide(opts Options) string {
	if opts.Design == Unpaired {
		return " a side"
	}

	return ""
}

// FormatMinEffect says a minimum effect as verdicts do: "5%" for 0.05 and
// for 0 (the default), "0%" for a negative one (none).
func FormatMinEffect(minEffect float64) string {
	return pct(max(Options{MinEffect: minEffect}.norm().MinEffect, 0))
}

// pct formats a fraction as a percentage: 0.05 → "5%".
func pct(f float64) string {
	return strconv.FormatFloat(100*f, 'f', -1, 64) + "%"
}

// resolvingSamples estimates how many samples (rounds, or values a side)
// would shrink the interval to the minimum effect, scaling its half-width by
// √(n/n'): a rough guide for "how much more data would decide", 0 when there
// is no minimum effect or the interval is already that narrow.
func resolvingSamples(e estimate, band float64) int {
	half := (e.hi - e.lo) / 2
	if band <= 0 || e.used <= 0 || !(half > band) || math.IsInf(half, 0) {
		return 0
	}

	n := math.Ceil(float64(e.used) * (half / band) * (half / band))
	if n > 1e6 {
		n = 1e6
	}

	return max(int(n), e.used+1)
}

// constantEqual reports whether every value of a and b is one and the same.
func constantEqual(a, b []float64) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}

	x := a[0]

	return !slices.ContainsFunc(a, func(v float64) bool { return v != x }) &&
		!slices.ContainsFunc(b, func(v float64) bool { return v != x })
}

// countText says how many samples an inconclusive comparison had.
func (e estimate) countText(v, ref *variant, opts Options) string {
	if opts.Design == Unpaired && len(v.values) != len(ref.values) {
		return fmt.Sprintf("%d and %d %ss", len(ref.values), len(v.values), opts.Unit)
	}

	if opts.Design == Unpaired {
		return plural(e.used, opts.Unit) + " a side"
	}

	return plural(e.used, opts.Unit)
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}

	return fmt.Sprintf("%d %ss", n, unit)
}

// pairedLogRatio estimates log(v/ref) from the rounds both have: the median
// of the per-round log ratios with the order-statistic interval.
func pairedLogRatio(v, ref *variant, alpha float64) estimate {
	var d []float64

	shared := 0

	for _, r := range v.order {
		y, ok := ref.rounds[r]
		if !ok {
			continue
		}

		shared++

		q := math.Log(v.rounds[r]) - math.Log(y) // 0/0 gives NaN: says nothing
		if !math.IsNaN(q) {
			d = append(d, q)
		}
	}

	e := estimate{used: len(d), needed: MinSamples(Paired, alpha), theta: math.NaN(), p: math.NaN()}
	if shared == 0 {
		e.noPairs = true
		return e
	}

	if len(d) == 0 {
		return e
	}

	slices.Sort(d)
	e.theta = Median(d)
	e.p = signTestP(d)

	k := signCritical(len(d), alpha)
	if k < 1 {
		return e
	}

	e.enough = true
	e.lo, e.hi = d[k-1], d[len(d)-k]

	return e
}

// signCritical is the largest k with P(Binomial(n, ½) ≤ k−1) ≤ alpha/2, so
// that [x₍k₎, x₍n+1−k₎] covers the median with probability ≥ 1−alpha; 0
// when no such interval exists.
func signCritical(n int, alpha float64) int {
	k := 0

	for j := 0; j < n; j++ {
		if binomCDF(n, j) > alpha/2 {
			break
		}

		k = j + 1
	}

	return k
}

// binomCDF is P(Binomial(n, ½) ≤ j).
func binomCDF(n, j int) float64 {
	sum := 0.0

	lgN, _ := math.Lgamma(float64(n) + 1)

	for i := 0; i <= j && i <= n; i++ {
		a, _ := math.Lgamma(float64(i) + 1)
		b, _ := math.Lgamma(float64(n-i) + 1)
		sum += math.Exp(lgN - a - b - float64(n)*math.Ln2)
	}

	return math.Min(1, sum)
}

// signTestP is the two-sided sign test's p-value of log ratios d against 0
// (ties dropped).
func signTestP(d []float64) float64 {
	pos, neg := 0, 0

	for _, x := range d {
		switch {
		case x > 0:
			pos++
		case x < 0:
			neg++
		}
	}

	if pos+neg == 0 {
		return 1
	}

	return math.Min(1, 2*binomCDF(pos+neg, min(pos, neg)))
}

// unpairedLogRatio estimates log(y/x) for independent samples y (the
// variant) and x (the reference): the Hodges-Lehmann estimate with the
// Moses interval of the Mann-Whitney U test.
func unpairedLogRatio(ys, xs []float64, alpha float64) estimate {
	m, n := len(xs), len(ys)
	e := estimate{used: min(m, n), needed: MinSamples(Unpaired, alpha)}

	s := newShiftStat(logsSorted(xs), logsSorted(ys))
	mn := float64(m) * float64(n)

	null := newUNull(m, n)
	e.p = null.p(s.w(0))
	e.theta = (s.lowest(mn/2) + s.highest(mn/2)) / 2 // NaN for -Inf and +Inf

	k := null.critical(alpha)
	if k < 1 {
		return e
	}

	e.enough = true
	e.lo, e.hi = s.lowest(mn-float64(k)), s.highest(float64(k))

	return e
}

func logsSorted(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x) // 0 gives -Inf, which sorts and compares
	}

	slices.Sort(out)

	return out
}

// shiftStat evaluates the Mann-Whitney statistic of y against x shifted by
// θ (in logs: x scaled by e^θ), for inverting the test.
type shiftStat struct {
	x, y []float64

	// d lists every pairwise difference y_j − x_i, sorted, when there are
	// at most maxPairwise; zeros holds the pairs of zeros on both sides
	// (-Inf − -Inf), which are ties at every θ. With d, the bounds are
	// read off exactly; without, they are found by bisection.
	d     []float64
	zeros int
}

// maxPairwise bounds the pairwise differences listed (2 MB of them, some
// 700 values a side); beyond it the bounds are found by bisection.
const maxPairwise = 1 << 18

func newShiftStat(x, y []float64) shiftStat {
	s := shiftStat{x: x, y: y}
	if len(x)*len(y) > maxPairwise {
		return s
	}

	s.d = make([]float64, 0, len(x)*len(y))

	for _, b := range y {
		for _, a := range x {
			if math.IsInf(a, -1) && math.IsInf(b, -1) {
				s.zeros++
				continue
			}

			s.d = append(s.d, b-a) // ±Inf when one side is zero
		}
	}

	slices.Sort(s.d)

	return s
}

// w is #{(i, j): y_j − θ > x_i} + ½·#{y_j − θ = x_i}; it does not increase
// with θ. Pairs of -Inf (zero values on both sides) are ties for every θ.
func (s shiftStat) w(theta float64) float64 {
	total := 0.0

	for _, y := range s.y {
		t := y - theta
		if math.IsInf(y, -1) {
			t = y // -Inf − θ stays -Inf, never NaN
		}

		below := sort.SearchFloat64s(s.x, t) // x_i < t
		upTo := sort.Search(len(s.x), func(i int) bool { return s.x[i] > t })

		total += float64(below) + 0.5*float64(upTo-below)
	}

	return total
}

// finiteRange bounds every finite pairwise difference y_j − x_i, widened by
// one so that the statistic is constant beyond it.
func (s shiftStat) finiteRange() (lo, hi float64) {
	fx := finite(s.x)
	fy := finite(s.y)

	if len(fx) == 0 || len(fy) == 0 {
		return -1, 1
	}

	return fy[0] - fx[len(fx)-1] - 1, fy[len(fy)-1] - fx[0] + 1
}

func finite(sorted []float64) []float64 {
	i := 0
	for i < len(sorted) && math.IsInf(sorted[i], -1) {
		i++
	}

	return sorted[i:]
}

// lowest is the least θ with w(θ) ≤ target: -Inf if even far below every
// difference w is that small, +Inf if no finite θ brings it down to target.
func (s shiftStat) lowest(target float64) float64 {
	if s.d != nil {
		// w is a step function: just above a difference v it is
		// #{d > v} + ½·zeros, so the bound is the first v where that is
		// small enough.
		for i := 0; i < len(s.d); {
			j := i + 1
			for j < len(s.d) && s.d[j] == s.d[i] {
				j++
			}

			if float64(len(s.d)-j)+0.5*float64(s.zeros) <= target {
				return s.d[i]
			}

			i = j
		}

		return math.Inf(1)
	}

	return s.lowestBisect(target)
}

// highest is the greatest θ with w(θ) ≥ target, with the same conventions.
func (s shiftStat) highest(target float64) float64 {
	if s.d != nil {
		// Just below a difference v, w is #{d ≥ v} + ½·zeros.
		for j := len(s.d); j > 0; {
			i := j - 1
			for i > 0 && s.d[i-1] == s.d[j-1] {
				i--
			}

			if float64(len(s.d)-i)+0.5*float64(s.zeros) >= target {
				return s.d[j-1]
			}

			j = i
		}

		return math.Inf(-1)
	}

	return s.highestBisect(target)
}

// lowestBisect is lowest by bisection on θ, for samples too large to list
// their pairwise differences.
func (s shiftStat) lowestBisect(target float64) float64 {
	a, b := s.finiteRange()

	switch {
	case s.w(a) <= target:
		return math.Inf(-1)
	case s.w(b) > target:
		return math.Inf(1)
	}

	// Invariant: w(a) > target ≥ w(b).
	for range 200 {
		mid := a + (b-a)/2
		if mid == a || mid == b {
			break
		}

		if s.w(mid) <= target {
			b = mid
		} else {
			a = mid
		}
	}

	return b
}

// highestBisect is highest by bisection on θ.
func (s shiftStat) highestBisect(target float64) float64 {
	a, b := s.finiteRange()

	switch {
	case s.w(b) >= target:
		return math.Inf(1)
	case s.w(a) < target:
		return math.Inf(-1)
	}

	// Invariant: w(a) ≥ target > w(b).
	for range 200 {
		mid := a + (b-a)/2
		if mid == a || mid == b {
			break
		}

		if s.w(mid) >= target {
			a = mid
		} else {
			b = mid
		}
	}

	return a
}

// exactU is the largest sample size a side for which U's null distribution
// is computed exactly; beyond it the normal approximation is close.
const exactU = 50

// uNull is the null distribution of the Mann-Whitney statistic U for
// samples of sizes m and n: exact up to exactU a side (cdf holds P(U ≤ u)
// for u up to len(cdf)−1, computed as far as needed), normal beyond.
type uNull struct {
	m, n  int
	exact bool
	cdf   []float64
}

func newUNull(m, n int) *uNull {
	return &uNull{m: m, n: n, exact: m > 0 && n > 0 && m <= exactU && n <= exactU}
}

// upTo makes cdf cover u (at most ⌊mn/2⌋, the centre, since U is
// symmetric). The lower tail is what intervals and p-values of differences
// need, so the table grows only as far as asked.
func (d *uNull) upTo(u int) {
	u = min(u, d.m*d.n/2)
	if u < len(d.cdf) {
		return
	}

	// Grow geometrically so that a scan asks for few recomputations.
	d.cdf = uNullCDF(d.m, d.n, min(d.m*d.n/2, max(u, 2*len(d.cdf))))
}

func (d *uNull) sigma() float64 {
	mn := float64(d.m) * float64(d.n)
	return math.Sqrt(mn * float64(d.m+d.n+1) / 12)
}

// critical is the largest k with P(U ≤ k−1) ≤ alpha/2; 0 when no interval
// exists.
func (d *uNull) critical(alpha float64) int {
	if d.m == 0 || d.n == 0 {
		return 0
	}

	if d.exact {
		for k := 0; k <= d.m*d.n/2; k++ {
			d.upTo(k)

			if d.cdf[k] > alpha/2 {
				return k
			}
		}

		return d.m*d.n/2 + 1
	}

	// P(U ≤ k−1) ≈ Φ((k − ½ − mn/2)/σ), with a continuity correction.
	mn := float64(d.m) * float64(d.n)
	z := math.Sqrt2 * math.Erfinv(1-alpha)

	return max(0, int(math.Floor(mn/2+0.5-z*d.sigma())))
}

// p is the two-sided p-value of statistic w (ties rounded towards the
// centre).
func (d *uNull) p(w float64) float64 {
	if d.m == 0 || d.n == 0 {
		return 1
	}

	mn := float64(d.m) * float64(d.n)
	tail := math.Min(w, mn-w) // the distance below the centre

	if d.exact {
		u := int(math.Floor(tail))
		if u > d.m*d.n/2 {
			return 1
		}

		d.upTo(u)

		return math.Min(1, 2*d.cdf[u])
	}

	z := (tail + 0.5 - mn/2) / d.sigma()

	return math.Min(1, math.Erfc(-z/math.Sqrt2))
}

// uCritical is uNull.critical for sizes m and n.
func uCritical(m, n int, alpha float64) int {
	return newUNull(m, n).critical(alpha)
}

// uNullCDF returns P(U ≤ u) for u = 0 … upTo under the null hypothesis.
// The number of arrangements of m x's and n y's with U = u is the
// coefficient of q^u in the Gaussian binomial coefficient
// [m+n choose m]_q = ∏ᵢ₌₁..ₘ (1 − q^(n+i)) / (1 − q^i), built factor by
// factor: multiplying by (1 − q^a) is a shifted subtraction, dividing by
// (1 − q^i) a running sum with stride i. Coefficients of q^u only depend on
// lower powers, so the product can stop at upTo.
func uNullCDF(m, n, upTo int) []float64 {
	c := make([]float64, upTo+1)
	c[0] = 1

	for i := 1; i <= m; i++ {
		for u := upTo; u >= n+i; u-- {
			c[u] -= c[u-n-i]
		}

		for u := i; u <= upTo; u++ {
			c[u] += c[u-i]
		}
	}

	lgC, _ := math.Lgamma(float64(m+n) + 1)
	a, _ := math.Lgamma(float64(m) + 1)
	b, _ := math.Lgamma(float64(n) + 1)
	total := math.Exp(lgC - a - b)

	out := make([]float64, upTo+1)
	sum := 0.0

	for u, x := range c {
		sum += x
		out[u] = math.Min(1, sum/total)
	}

	return out
}

// confidenceLabel is the interval's level: "95%".
func confidenceLabel(alpha float64) string {
	return fmt.Sprintf("%.4g%%", 100*(1-alpha))
}

// differenceText describes a significant difference: ratio is
// worse/reference and [lo, hi] its confidence interval.
func differenceText(ratio, lo, hi float64, dir Direction, level string) string {
	worse, better := "slower", "faster"
	if dir == LowerIsBetter {
		worse, better = "higher", "lower"
	}

	word := worse
	if ratio < 1 || (ratio == 1 && hi < 1) {
		// Better than the reference: say "x× faster" with x = 1/ratio and
		// the interval inverted with it.
		word = better
		ratio, lo, hi = 1/ratio, 1/hi, 1/lo
	}

	return fmt.Sprintf("%s %s, %s CI %s", formatRatio(ratio), word, level, intervalText(lo, hi))
}

// intervalText formats a ratio interval: "1.90×–2.30×", "2.01× or more".
func intervalText(lo, hi float64) string {
	if math.IsInf(hi, 1) && !math.IsInf(lo, 0) {
		return formatRatio(lo) + " or more"
	}

	return formatRatio(lo) + "–" + formatRatio(hi)
}

// formatRatio formats a positive ratio with two decimals below 10 ("0.97×",
// "1.21×"; two significant digits below 0.1), one below 100 ("12.3×"), or as
// a whole number ("966×", "∞×").
func formatRatio(r float64) string {
	switch {
	case math.IsNaN(r):
		return "?×"
	case math.IsInf(r, 1):
		return "∞×"
	case r == 0:
		return "0×"
	case r < 0.0995:
		return fmt.Sprintf("%.2g×", r)
	case r < 9.995:
		return fmt.Sprintf("%.2f×", r)
	case r < 99.95:
		return fmt.Sprintf("%.1f×", r)
	default:
		return fmt.Sprintf("%.0f×", r)
	}
}

// Proportion is the Wilson score interval of k successes in n trials at
// level 1−alpha: the interval an error rate or a power is quoted with
// ("3 of 60, 5.0%, 95% CI 1.7%–13.7%"). It stays inside [0, 1] and is
// sensible at k = 0 and k = n, where the normal approximation is not.
func Proportion(k, n int, alpha float64) (p, lo, hi float64) {
	if n <= 0 {
		return math.NaN(), 0, 1
	}

	alpha = Options{Alpha: alpha}.norm().Alpha
	z := normalQuantile(1 - alpha/2)
	nf := float64(n)
	p = float64(k) / nf

	den := 1 + z*z/nf
	centre := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den

	return p, math.Max(0, centre-half), math.Min(1, centre+half)
}

// normalQuantile is the standard normal quantile function, by bisection of
// math.Erf (ample for interval bounds).
func normalQuantile(q float64) float64 {
	lo, hi := -10.0, 10.0
	for range 100 {
		mid := (lo + hi) / 2
		if 0.5*(1+math.Erf(mid/math.Sqrt2)) < q {
			lo = mid
		} else {
			hi = mid
		}
	}

	return (lo + hi) / 2
}

// PairedCritical is k of the paired interval at n rounds: the interval is
// the k-th smallest to the k-th largest per-round ratio, so a difference
// needs at least n−k+1 rounds on one side; 0 when n rounds give no
// interval.
func PairedCritical(n int, alpha float64) int {
	return signCritical(n, Options{Alpha: alpha}.norm().Alpha)
}

// PairedLevel is the exact false-positive rate of a paired verdict at n
// rounds, two-sided: the chance that pure noise puts n−k+1 or more of n
// rounds on one side (2·½⁶ = 3.1% at 6 rounds).
func PairedLevel(n int, alpha float64) float64 {
	k := PairedCritical(n, alpha)
	if k < 1 {
		return 0
	}

	return math.Min(1, 2*binomCDF(n, k-1))
}
