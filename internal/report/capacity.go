package report

import (
	"fmt"
	"io"

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

			if f.PeakN > 0 {
				fmt.Fprintf(w, "USL predicted peak: %.1f ops/s at %.1f workers\n", f.PeakX, f.PeakN)
			} else {
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
	case c.MaxRate <= 0:
		return "Maximum sustainable rate: none found within the SLO"
	case c.ClientLimited:
		return fmt.Sprintf("Maximum sustainable rate: at least %.1f ops/s (the client was the limit; 95%% CI not available)", c.MaxRate)
	}

	return fmt.Sprintf("Maximum sustainable rate: %.1f ops/s (95%% CI %.1f–%.1f ops/s)", c.MaxRate, c.MaxRateCI[0], c.MaxRateCI[1])
}
