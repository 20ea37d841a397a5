package analysis

import (
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

// gateSide is a side whose runs have the given whole-phase p99s (and p50s
// a tenth of them), all at 100 ops/s.
func gateSide(label string, p99s ...float64) *File {
	f := &File{Label: label, Path: label + ".json", Res: &result.Result{}}

	for _, v := range p99s {
		f.Runs = append(f.Runs, &result.Phase{Name: "run", DurationS: 10, Operations: []result.Operation{
			{Name: "get", Count: 1000, OpsPerSec: 100, LatencyUS: result.Latency{P50: v / 10, P99: v, Mean: v / 8, P90: v / 2}},
		}})
	}

	f.Phase = f.Runs[0]

	return f
}

func gates(t *testing.T, exprs ...string) []Gate {
	t.Helper()

	var out []Gate

	for _, e := range exprs {
		g, err := ParseGate(e)
		if err != nil {
			t.Fatal(err)
		}

		out = append(out, g)
	}

	return out
}

// TestCheckGatesRule: a gate fails only when the change is a difference
// (established, beyond the minimum effect) and its point estimate is
// beyond the threshold; one run a side is not judged, and says why.
func TestCheckGatesRule(t *testing.T) {
	gs := gates(t, "p99 +10%", "throughput -5%")

	check := func(files []*File) ([]string, int, int) {
		ops := AddGateRows(files, CompareOperations(files, Judging{}), gs, Judging{})
		return CheckGates(files, ops, gs)
	}

	// 30% worse p99 over five runs a side: fails.
	lines, fails, unjudged := check([]*File{
		gateSide("A", 1000, 1010, 990, 1005, 995),
		gateSide("B", 1300, 1310, 1290, 1305, 1295),
	})
	if fails != 1 || unjudged != 0 || !strings.HasPrefix(lines[0], `FAIL --fail-if "p99 +10%": get: B`) {
		t.Errorf("30%% worse: %d failures, %d unjudged: %q", fails, unjudged, lines)
	}

	// 7% worse, established: a difference, but within the gate's 10%.
	_, fails, _ = check([]*File{
		gateSide("A", 1000, 1010, 990, 1005, 995),
		gateSide("B", 1070, 1080, 1060, 1075, 1065),
	})
	if fails != 0 {
		t.Errorf("7%% worse failed a 10%% gate")
	}

	// 30% worse in one noisy run of five: not established.
	_, fails, _ = check([]*File{
		gateSide("A", 1000, 1400, 990, 1005, 1300),
		gateSide("B", 1300, 1010, 995, 1305, 1000),
	})
	if fails != 0 {
		t.Errorf("noise failed the gate")
	}

	// One run a side: 5× worse, and still not judged.
	lines, fails, unjudged = check([]*File{gateSide("A", 1000), gateSide("B", 5000)})
	if fails != 0 || unjudged != 2 || !strings.HasPrefix(lines[0], "Note: --fail-if with 1 run a side can establish nothing") {
		t.Errorf("one run a side: %d failures, %d unjudged: %q", fails, unjudged, lines)
	}
}
