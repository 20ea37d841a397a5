//go:build e2e

package capacity_test

import (
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

// fitForTest is nil until the USL statistics are merged.
var fitForTest func(points [][2]float64) (*result.USLFit, error)

func checkFit(t *testing.T, c *result.Capacity) {
	t.Helper()

	for _, s := range c.Sweep {
		t.Logf("workers %d: %.1f ops/s (analytic %.1f)", s.Workers, s.AchievedRate, 1000*float64(s.Workers)/float64(s.Workers+1))
	}
}
