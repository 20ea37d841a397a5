package capacity

import (
	"encoding/json"
	"math"
	"testing"
)

// The test server's closed-loop law, N/(N+1) per ms, is the USL with
// σ = 0.5 and κ = 0: no peak, which the results file must hold as 0 rather
// than the +Inf that JSON cannot carry.
func TestFitUSLOfTheTestServersLaw(t *testing.T) {
	var points [][2]float64
	for _, n := range []float64{1, 2, 4, 8, 16} {
		points = append(points, [2]float64{n, 1000 * n / (n + 1)})
	}

	f, err := FitUSL(points)
	if err != nil {
		t.Fatal(err)
	}

	if math.Abs(f.Sigma-0.5) > 0.01 || math.Abs(f.Kappa) > 1e-4 || math.Abs(f.Lambda-500) > 5 {
		t.Errorf("λ %.2f σ %.4f κ %.6f, want 500, 0.5, 0", f.Lambda, f.Sigma, f.Kappa)
	}

	if f.PeakN != 0 || f.PeakX != 0 {
		t.Errorf("peak %.1f at %.1f, want none (0) for κ = 0", f.PeakX, f.PeakN)
	}

	if _, err := json.Marshal(f); err != nil {
		t.Errorf("the fit does not marshal: %v", err)
	}
}

func TestFitUSLRefusesUnusablePoints(t *testing.T) {
	if _, err := FitUSL([][2]float64{{1, 0}, {2, 10}, {4, 20}, {8, 30}}); err == nil {
		t.Error("a zero throughput was fitted")
	}
}
