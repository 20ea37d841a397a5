//go:build acceptance

package capacity_test

import (
	"math"
	"testing"

	"github.com/mongobench/mongobench/internal/lab/capacity"
	"github.com/mongobench/mongobench/internal/results/result"
)

// fitForTest is the command's own fit.
var fitForTest = capacity.FitUSL

// checkFit wants the sweep's fit to find the test server's law: σ = 0.5
// (each worker's latency grows by half a base latency per other worker)
// within 0.35–0.65, and no coherency cost, κ ≈ 0.
func checkFit(t *testing.T, c *result.Capacity) {
	t.Helper()

	for _, s := range c.Sweep {
		t.Logf("workers %d: %.1f ops/s (analytic %.1f)", s.Workers, s.AchievedRate, 1000*float64(s.Workers)/float64(s.Workers+1))
	}

	f := c.Fit
	if f == nil {
		t.Fatal("no fit")
	}

	t.Logf("fit: λ %.1f σ %.3f %v κ %.5f %v R² %.3f supported %v %s", f.Lambda, f.Sigma, f.SigmaCI, f.Kappa, f.KappaCI, f.R2, f.Supported, f.Reason)

	if f.Sigma < 0.35 || f.Sigma > 0.65 {
		t.Errorf("σ = %.3f, want 0.35–0.65 (0.5 analytically)", f.Sigma)
	}

	// κ ≈ 0: its coherency delay at 16 workers, κ·16·15, is under a tenth
	// of the contention's, σ·15.
	if math.Abs(f.Kappa)*16*15 > 0.1*f.Sigma*15 {
		t.Errorf("κ = %.5f, want ≈ 0", f.Kappa)
	}
}
