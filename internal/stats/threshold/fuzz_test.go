package threshold

import (
	"math"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary conditions to the parser: it never panics, its
// errors are one line, an accepted condition has a finite non-negative
// limit, and its canonical form parses back to the same condition.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"p99 < 20ms", "p99.9<=0.1ms", "mean > 12.345ms", "throughput >= 500/s", "error_rate < 0.1%", "max < 1e3s", "p50 < 1.5 s", "p100 <= 0us", ""} {
		f.Add(s)
	}

	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error is not one line: %q", s, err)
			}

			return
		}

		if math.IsNaN(c.Limit) || math.IsInf(c.Limit, 0) || c.Limit < 0 {
			t.Fatalf("%q: limit %v", s, c.Limit)
		}

		back, err := Parse(c.String())
		if err != nil {
			t.Fatalf("%q: canonical form %q does not parse: %v", s, c.String(), err)
		}

		if back.Metric != c.Metric || back.Cmp != c.Cmp || math.Abs(back.Limit-c.Limit) > 1e-9*math.Max(1, c.Limit) {
			t.Fatalf("%q: canonical form %q parses to %+v, not %+v", s, c.String(), back, c)
		}
	})
}
