package report

import (
	"fmt"
	"io"
	"math"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/base/units"
	"github.com/mongobench/mongobench/internal/results/result"
)

// WriteCapacity prints a capacity result for the terminal: the verdict,
// the sweep and its fit, and last the maximum sustainable rate with its
// confidence interval, the line scripts and people look for.
func WriteCapacity(w io.Writer, c *result.Capacity) {
	if c == nil {
		return
	}

	fmt.Fprintf(w, "Verdict: %s\n", c.Verdict)

	if len(c.Sweep) > 0 {
		fmt.Fprintln(w, "Concurrency sweep (closed loop):")
		fmt.Fprintf(w, "  %7s  %12s  %10s  %10s\n", "workers", "ops/s", "p50", "p99")

		for _, s := range c.Sweep {
			fmt.Fprintf(w, "  %7d  %12.1f  %10s  %10s\n", s.Workers, s.AchievedRate, units.Micros(s.P50US), units.Micros(s.P99US))
		}
	}

	if f := c.Fit; f != nil {
		if f.Supported {
			fmt.Fprintf(w, "USL fit: λ %.1f ops/s [%.1f, %.1f], σ %.3f [%.3f, %.3f], κ %.5f [%.5f, %.5f], R² %.3f\n",
				f.Lambda, f.LambdaCI[0], f.LambdaCI[1], f.Sigma, f.SigmaCI[0], f.SigmaCI[1], f.Kappa, f.KappaCI[0], f.KappaCI[1], f.R2)

			switch {
			case f.PeakReason != "":
				fmt.Fprintf(w, "USL predicted peak: not located (%s); the curve holds over the workers measured\n", f.PeakReason)
			case f.PeakN > 0:
				fmt.Fprintf(w, "USL predicted peak: %.1f ops/s at %.1f workers\n", f.PeakX, f.PeakN)
			default:
				fmt.Fprintln(w, "USL predicted peak: none (κ = 0: throughput levels off at λ/σ without falling)")
			}
		} else {
			fmt.Fprintf(w, "USL fit: not supported by the data: %s\n", f.Reason)
		}
	}

	fmt.Fprintln(w, CapacityLine(c))
}

// CapacityLine is the one-line answer: the maximum sustainable rate in
// ops/s with its 95% confidence interval, or why there is none.
func CapacityLine(c *result.Capacity) string {
	switch {
	case c.Interrupted && c.MaxRate <= 0:
		return "Maximum sustainable rate: not found: the search was interrupted"
	case c.MaxRate <= 0:
		return "Maximum sustainable rate: none found within the SLO"
	case c.ClientLimited:
		return fmt.Sprintf("Maximum sustainable rate: at least %.1f ops/s (the client was the limit; 95%% CI not available)", c.MaxRate)
	}

	return fmt.Sprintf("Maximum sustainable rate: %.1f ops/s (95%% CI %.1f–%.1f ops/s)", c.MaxRate, c.MaxRateCI[0], c.MaxRateCI[1])
}

// CapacityRatio is new's capacity over base's with a 95% confidence
// interval. Each capacity's interval is read as a normal interval of its
// logarithm (half-width 1.96 standard errors); the two are independent
// runs, so the ratio's logarithm has the sum of their variances, around the
// ratio of the two rates. ok is false when either has no capacity; the
// interval is zero when either has none.
func CapacityRatio(base, next *result.Capacity) (ratio float64, ci [2]float64, ok bool) {
	if base == nil || next == nil || base.MaxRate <= 0 || next.MaxRate <= 0 {
		return 0, ci, false
	}

	ratio = next.MaxRate / base.MaxRate

	se := func(c *result.Capacity) (float64, bool) {
		lo, hi := c.MaxRateCI[0], c.MaxRateCI[1]
		if lo <= 0 || hi < lo || c.ClientLimited {
			return 0, false
		}

		return (math.Log(hi) - math.Log(lo)) / (2 * 1.959964), true
	}

	sa, okA := se(base)
	sb, okB := se(next)

	if okA && okB {
		half := 1.959964 * math.Hypot(sa, sb)
		ci = [2]float64{ratio * math.Exp(-half), ratio * math.Exp(half)}
	}

	return ratio, ci, true
}

// capacityVerdict reads a capacity ratio's interval as the comparisons do:
// "~" (no significant difference) when it holds 1.
func capacityVerdict(ci [2]float64) string {
	switch {
	case ci[0] > 1:
		return "more capacity"
	case ci[1] < 1:
		return "less capacity"
	}

	return "~ no significant difference"
}

// WriteCapacityCompare prints, for compare, each capacity result's maximum
// sustainable rate against the first side's: the capacity ratio with its
// 95% CI, what a configuration change buys in capacity. It prints nothing
// unless the first side and another are capacity results.
func WriteCapacityCompare(w io.Writer, files []*analysis.File) {
	if len(files) < 2 || files[0].Res == nil || files[0].Res.Capacity == nil {
		return
	}

	base := files[0]

	for _, f := range files[1:] {
		if f.Res == nil {
			continue
		}

		r, ci, ok := CapacityRatio(base.Res.Capacity, f.Res.Capacity)
		if !ok {
			continue
		}

		line := fmt.Sprintf("Capacity %s/%s: %.2f× (%.1f vs %.1f ops/s; no interval: one side has none, so no verdict)",
			f.Label, base.Label, r, f.Res.Capacity.MaxRate, base.Res.Capacity.MaxRate)
		if ci[1] > 0 {
			line = fmt.Sprintf("Capacity %s/%s: %.2f× (95%% CI %.2f–%.2f×; %.1f vs %.1f ops/s): %s", f.Label, base.Label, r, ci[0], ci[1],
				f.Res.Capacity.MaxRate, base.Res.Capacity.MaxRate, capacityVerdict(ci))
		}

		fmt.Fprintln(w, line)
	}
}
