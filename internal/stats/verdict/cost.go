package verdict

import (
	"fmt"
	"math"
	"slices"
)

// Cost is a difference: how much more of a metric a variant takes than a
// reference, in the metric's own unit (the decode cost per document is
// struct − none), where a ratio would answer a different question.
//
// Paired samples are compared round by round: the estimate is the median of
// the per-round differences value − reference, and its interval the
// distribution-free interval of that median from order statistics (the
// sign test's, as for paired ratios; 6 rounds at least at α = 0.05).
// Unpaired samples get the Hodges-Lehmann shift (the median of all pairwise
// differences) with the Moses interval of the Mann-Whitney U test (4 values
// a side at least).
type Cost struct {
	// Variant and Reference name what was compared.
	Variant, Reference string
	// Kind is Difference when the interval excludes 0, NoDifference when
	// it contains 0, and Inconclusive when there are too few samples for
	// an interval.
	Kind Kind
	// Estimate is the difference variant − reference; Lo and Hi bound its
	// confidence interval (±Inf when Inconclusive; Estimate is NaN when
	// there is no sample to compare).
	Estimate, Lo, Hi float64
	// P is the two-sided p-value of the test the interval inverts.
	P float64
	// Used is the number of paired rounds (or the smaller side unpaired);
	// Needed the least for an interval.
	Used, Needed int
	// Text says it for people, with plain numbers: "difference 1.23, 95%
	// CI 1.1–1.35", "no significant difference; 95% CI -0.12–0.2",
	// "inconclusive: 3 rounds, at least 6 needed". Renderers with units
	// build their own from the numbers.
	Text string
}

// CompareCost estimates variant name − reference from samples of both.
// Unusable values (NaN, ±Inf, negative) are dropped as everywhere in this
// package.
func CompareCost(samples []Sample, name, reference string, opts Options) Cost {
	opts = opts.norm()
	d := Cost{
		Variant: name, Reference: reference, Estimate: math.NaN(), P: math.NaN(),
		Lo: math.Inf(-1), Hi: math.Inf(1),
	}

	var v, ref *variant

	for _, x := range collect(samples, opts) {
		switch x.name {
		case name:
			v = x
		case reference:
			ref = x
		}
	}

	if v == nil || ref == nil {
		d.Needed = MinSamples(opts.Design, opts.Alpha)
		d.Text = fmt.Sprintf("inconclusive: no values of %q", map[bool]string{true: name, false: reference}[v == nil])

		return d
	}

	var enough bool

	if opts.Design == Unpaired {
		enough = d.unpaired(v.values, ref.values, opts.Alpha)
	} else {
		enough = d.paired(v, ref, opts.Alpha)
	}

	level := confidenceLabel(opts.Alpha)

	switch {
	case !enough:
		d.Kind = Inconclusive
		d.Lo, d.Hi = math.Inf(-1), math.Inf(1)
		d.Text = fmt.Sprintf("inconclusive: %s, at least %d needed", plural(d.Used, opts.Unit), d.Needed)
	case d.Lo > 0 || d.Hi < 0:
		d.Kind = Difference
		d.Text = fmt.Sprintf("difference %.3g, %s CI %.3g–%.3g", d.Estimate, level, d.Lo, d.Hi)
	default:
		d.Kind = NoDifference
		d.Text = fmt.Sprintf("no significant difference; %s CI %.3g–%.3g", level, d.Lo, d.Hi)
	}

	return d
}

// paired sets the median of the per-round differences and its interval;
// it reports whether there were enough rounds for one.
func (d *Cost) paired(v, ref *variant, alpha float64) bool {
	var diffs []float64

	for _, r := range v.order {
		if y, ok := ref.rounds[r]; ok {
			diffs = append(diffs, v.rounds[r]-y)
		}
	}

	d.Used, d.Needed = len(diffs), MinSamples(Paired, alpha)
	if len(diffs) == 0 {
		return false
	}

	slices.Sort(diffs)
	d.Estimate = Median(diffs)
	d.P = signTestP(diffs)

	k := signCritical(len(diffs), alpha)
	if k < 1 {
		return false
	}

	d.Lo, d.Hi = diffs[k-1], diffs[len(diffs)-k]

	return true
}

// unpaired sets the Hodges-Lehmann shift and its Moses interval.
func (d *Cost) unpaired(ys, xs []float64, alpha float64) bool {
	m, n := len(xs), len(ys)
	d.Used, d.Needed = min(m, n), MinSamples(Unpaired, alpha)

	x, y := slices.Sorted(slices.Values(xs)), slices.Sorted(slices.Values(ys))
	s := newShiftStat(x, y)
	mn := float64(m) * float64(n)

	null := newUNull(m, n)
	d.P = null.p(s.w(0))
	d.Estimate = (s.lowest(mn/2) + s.highest(mn/2)) / 2

	k := null.critical(alpha)
	if k < 1 {
		return false
	}

	d.Lo, d.Hi = s.lowest(mn-float64(k)), s.highest(float64(k))

	return true
}

// FormatRatio formats a ratio as the verdict texts do: "0.97×", "2.10×",
// "12.3×", "966×", "∞×"; renderers that word verdicts their own way use it
// so that the numbers read the same everywhere.
func FormatRatio(r float64) string { return formatRatio(r) }

// FormatInterval formats a ratio interval as the verdict texts do:
// "1.90×–2.30×", or "2.01× or more" when the upper bound is infinite (a
// side with zero throughput in some round): "2.01×–∞×" reads as a
// measured bound, which it is not.
func FormatInterval(lo, hi float64) string { return intervalText(lo, hi) }
