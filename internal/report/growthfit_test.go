package report

import (
	"math"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

// TestGrowthPanelDrawsFit checks that an operation's latency-vs-size panel
// carries the fitted line of each percentile, through the complete blocks
// only: a block cut short, whatever its latency, bends no line, and the
// note quotes the verdicts.
func TestGrowthPanelDrawsFit(t *testing.T) {
	var blocks []result.Block

	for j := range 5 {
		v := 1000 + 500*float64(j) // 0.5 µs per document: 500 µs per 1,000
		blocks = append(blocks, result.Block{
			Index: j, Complete: j < 4, DurationS: 1,
			Collection: result.CollectionSize{Name: "notices", Documents: int64(1000 * (j + 1))},
			Operations: []result.Operation{{Name: "get", Count: 100, LatencyUS: result.Latency{P50: v, P95: 2 * v, P99: 3 * v}}},
		})
	}

	blocks[4].Operations[0].LatencyUS = result.Latency{P50: 1e7, P95: 1e7, P99: 1e7}

	v := newBlocksView("r1", blocks, colors{})
	if len(v.Charts) != 1 {
		t.Fatalf("%d panels, want one for get", len(v.Charts))
	}

	c := v.Charts[0]
	fits := map[string][]*float64{}

	for _, s := range c.Series {
		if strings.HasSuffix(s.Label, " fit") {
			fits[s.Label] = s.Values
		}
	}

	for label, k := range map[string]float64{"get p50 fit": 1, "get p95 fit": 2, "get p99 fit": 3} {
		vals := fits[label]
		if len(vals) != 5 {
			t.Fatalf("%s: %d values, want one per block", label, len(vals))
		}

		for j, p := range vals {
			if want := k * (1000 + 500*float64(j)); p == nil || math.Abs(*p-want) > 1e-6 {
				t.Errorf("%s at block %d: %v, want %g (the line through the complete blocks)", label, j+1, p, want)
			}
		}
	}

	if !strings.Contains(c.Note, "get p50 grows 0.50 ms per 1,000 notices") {
		t.Errorf("note %q does not quote the fit", c.Note)
	}
}
