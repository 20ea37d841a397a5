package calibrate

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/targets"
)

// TestResolvable checks the smallest resolvable difference against values
// worked out by hand. With no noise every round shows any increase, so the
// minimum effect is the floor. With rounds at ±0.1 in logs, half of them
// show an increase smaller than e^0.1−1 = 10.52% and all of them a larger
// one; the sign test at 6 rounds needs all 6, so 10.52% it is.
func TestResolvable(t *testing.T) {
	cfg := Config{Rounds: 6, Seed: 1}

	est, lo, hi := resolvable([][]float64{{0, 0, 0, 0, 0, 0}}, cfg)
	if est != 0.05 || lo != 0.05 || hi != 0.05 {
		t.Errorf("no noise: %v [%v, %v], want the 5%% floor", est, lo, hi)
	}

	noisy := [][]float64{{-0.1, 0.1, -0.1, 0.1, -0.1, 0.1}, {0.1, -0.1, 0.1, -0.1, 0.1, -0.1}}

	est, _, _ = resolvable(noisy, cfg)
	if want := math.Exp(0.1) - 1; math.Abs(est-want) > 1e-6 {
		t.Errorf("±0.1: %v, want %v", est, want)
	}

	// Nine rounds let one round of nine miss (k = 2): with a quarter of
	// the rounds at −0.3 and the rest at 0, an increase below e^0.3−1
	// shows in ¾ of the rounds, and P(at least 8 of 9 | ¾) = 0.30 < 0.8;
	// above it, in all.
	cfg.Rounds = 9
	quarter := [][]float64{{-0.3, 0, 0, 0}}

	est, _, _ = resolvable(quarter, cfg)
	if want := math.Exp(0.3) - 1; math.Abs(est-want) > 1e-6 {
		t.Errorf("a quarter at −0.3, 9 rounds: %v, want %v", est, want)
	}

	// No A/A rounds: nothing to say.
	if est, _, _ := resolvable(nil, cfg); !math.IsNaN(est) {
		t.Errorf("no rounds: %v", est)
	}
}

// TestRunShort runs a small calibration against the built-in test server
// end to end: every kind of experiment is counted, and the last line of the
// text answers with the measured rates. (The rates themselves depend on the
// machine and are what calibration measures, so they are not asserted.)
func TestRunShort(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 18 short trials")
	}

	g, err := analysis.ParseGate("p99 +10%")
	if err != nil {
		t.Fatal(err)
	}

	key, err := targets.LoadOwnerKey(filepath.Join(t.TempDir(), "owner.key"))
	if err != nil {
		t.Fatal(err)
	}

	rep, err := Run(context.Background(), Config{
		Experiments: 1, Rounds: 6, Trial: 100 * time.Millisecond, Effects: []float64{1}, RunsPerSide: 3,
		Gates: []analysis.Gate{g}, OwnerKey: key,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}

	// One A/A matrix of one operation: throughput, p50 and p99 verdicts.
	if rep.AA.N != 3 || len(rep.AAByMetric) != 3 {
		t.Errorf("A/A counted %d verdicts, %d metrics; want 3 and 3", rep.AA.N, len(rep.AAByMetric))
	}

	if len(rep.Power) != 1 || rep.Power[0].Found.N != 1 || !(rep.Power[0].Ratio > 1) {
		t.Errorf("power %+v", rep.Power)
	}

	if rep.Gate.N != 1 || math.Abs(rep.Stated-2.0/64) > 1e-12 {
		t.Errorf("gate %+v, stated %v", rep.Gate, rep.Stated)
	}

	var b strings.Builder
	rep.WriteText(&b)

	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, `On this machine: false "difference" `) ||
		!strings.Contains(last, "(stated ≤ 3.1%)") || !strings.Contains(last, "power for a 100% p50 difference") {
		t.Errorf("last line %q", last)
	}
}
