package capacity

import (
	"math"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/usl"
)

// fitSeed makes the bootstrap's resampling, and so the intervals, the same
// for the same sweep.
const fitSeed = 24

// FitUSL fits the Universal Scalability Law to a sweep's points (workers,
// ops/s) with package usl, in the results file's form: what has no finite
// value (no peak when κ = 0, intervals the data cannot give) is written as
// 0, which JSON can hold, and the fit says whether it is supported.
func FitUSL(points [][2]float64) (*result.USLFit, error) {
	ps := make([]usl.Point, len(points))
	for i, p := range points {
		ps[i] = usl.Point{N: p[0], X: p[1]}
	}

	f, err := usl.Estimate(ps, usl.Options{Seed: fitSeed})
	if err != nil {
		return nil, err
	}

	out := &result.USLFit{
		Lambda: finite(f.Lambda), Sigma: finite(f.Sigma), Kappa: finite(f.Kappa),
		LambdaCI: finite2(f.LambdaCI), SigmaCI: finite2(f.SigmaCI), KappaCI: finite2(f.KappaCI),
		PeakN: finite(f.PeakN), PeakX: finite(f.PeakX), R2: finite(f.R2),
		Supported: f.Supported, Reason: f.Reason, PeakReason: f.PeakReason,
	}

	if out.PeakN == 0 {
		out.PeakX = 0 // no peak: the asymptote is λ/σ, which the curve shows
	}

	return out, nil
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}

	return v
}

func finite2(v [2]float64) [2]float64 { return [2]float64{finite(v[0]), finite(v[1])} }
