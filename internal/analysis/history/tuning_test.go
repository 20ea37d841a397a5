package history

import (
	"fmt"
	"math"
	"math/rand/v2"
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

// BenchmarkPrecisionRecall prints the detector's precision and recall at
// the defaults over simulated series (docs/history.md, "Precision and
// recall"): for each planted shift (none, 10% to 50%) and each number of
// runs after it (5, 10), 100 series of 30 runs with 5% noise per run. A
// change point within one run of the shift is a true one; any other is
// false. Run it with scripts/history-detection, or
//
//	go test -run '^$' -bench PrecisionRecall -benchtime 1x -v ./internal/analysis/history/
func BenchmarkPrecisionRecall(b *testing.B) {
	const series, n = 100, 30

	for range b.N {
		for _, shift := range []float64{0, 0.10, 0.20, 0.30, 0.50} {
			for _, after := range []int{5, 10} {
				at := n - after
				rng := rand.New(rand.NewPCG(uint64(at), math.Float64bits(shift)))

				var found, trueCPs, falseCPs int

				for k := range series {
					cps := Detect(noisy(rng, n, at, 1+shift, 0.05), Options{Seed: uint64(k)})
					hit := false

					for _, c := range cps {
						if shift > 0 && c.Index >= at-1 && c.Index <= at+1 && !hit {
							hit = true
							trueCPs++
						} else {
							falseCPs++
						}
					}

					if hit {
						found++
					}
				}

				_, flo, fhi := vd.Proportion(falseCPs, series*n, 0.05)
				line := fmt.Sprintf("shift %2.0f%%, %2d runs after: %d false change points in %d runs (%.2f per 100 runs, 95%% CI %.2f–%.2f)",
					100*shift, after, falseCPs, series*n, 100*float64(falseCPs)/float64(series*n), 100*flo, 100*fhi)

				if shift > 0 {
					r, rlo, rhi := vd.Proportion(found, series, 0.05)
					line += fmt.Sprintf("; recall %d/%d, %.0f%% (95%% CI %.0f%%–%.0f%%)", found, series, 100*r, 100*rlo, 100*rhi)

					if trueCPs+falseCPs > 0 {
						p, plo, phi := vd.Proportion(trueCPs, trueCPs+falseCPs, 0.05)
						line += fmt.Sprintf("; precision %d/%d, %.0f%% (95%% CI %.0f%%–%.0f%%)",
							trueCPs, trueCPs+falseCPs, 100*p, 100*plo, 100*phi)
					}
				}

				b.Log(line)
			}
		}
	}
}
