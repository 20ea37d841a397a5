package history

import (
	"testing"

	vd "github.com/mongobench/mongobench/internal/stats/verdict"
)

// BenchmarkTuning prints the table the defaults were chosen from
// (docs/history.md, "Tuning"): for each minimum segment size and
// significance level, the share of 30-run series without a change that get
// a change point, and the share of series with a 10% or 20% step, 5 or 10
// runs before the end, where it is found within one run. Noise is 5% per
// run. Run it with
//
//	go test -run '^$' -bench Tuning -benchtime 1x ./internal/analysis/history/
//
// It is a benchmark so that it runs only when asked: it takes seconds.
func BenchmarkTuning(b *testing.B) {
	for range b.N {
		for _, ms := range []int{3, 4, 5} {
			for _, alpha := range []float64{0.01, 0.05} {
				o := Options{MinSize: ms, Alpha: alpha}
				k, _ := rates(500, 30, 30, 1, 0.05, o)
				p, lo, hi := vd.Proportion(k, 500, 0.05)
				b.Logf("min size %d, alpha %.2f: no change, change point in %d/500 series, %.1f%% (95%% CI %.1f%%–%.1f%%)",
					ms, alpha, k, 100*p, 100*lo, 100*hi)

				for _, step := range []float64{1.1, 1.2} {
					for _, after := range []int{5, 10} {
						_, f := rates(300, 30, 30-after, step, 0.05, o)
						p, lo, hi := vd.Proportion(f, 300, 0.05)
						b.Logf("    %.0f%% step, %d runs after it: found %d/300, %.0f%% (95%% CI %.0f%%–%.0f%%)",
							100*(step-1), after, f, 100*p, 100*lo, 100*hi)
					}
				}
			}
		}
	}
}
