package analysis

import (
	"math"
	"strings"
	"testing"
)

// FuzzParseGate feeds arbitrary --fail-if expressions to the parser:
// it must never panic, its errors are one line naming the expression, and
// an accepted gate has a known metric and a finite, non-negative
// percentage.
func FuzzParseGate(f *testing.F) {
	for _, s := range []string{"p99 +10%", "throughput -5% find_by_id", "mean +0.5%", " p50 + 3 % ", "p99 +1e400%", "p99 +.%", "p99", "", "\n", "p99 +10% a b"} {
		f.Add(s)
	}

	f.Fuzz(func(t *testing.T, expr string) {
		g, err := ParseGate(expr)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}

			return
		}

		if g.Metric.Name == "" {
			t.Fatalf("%q: accepted without a metric", expr)
		}

		if math.IsNaN(g.Pct) || math.IsInf(g.Pct, 0) || g.Pct < 0 {
			t.Fatalf("%q: accepted percentage %v", expr, g.Pct)
		}
	})
}
