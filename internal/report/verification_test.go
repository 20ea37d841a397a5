package report

import (
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

// TestWriteVerification checks the terminal's write verification table of
// a run with a verify phase: 2 batches of 500 acknowledged, 990 found, 10
// lost; and that a run without one prints nothing.
func TestWriteVerification(t *testing.T) {
	res := &result.Result{
		Workload: result.Workload{Spec: map[string]any{"operations": []any{
			map[string]any{"name": "insert", "op": "insertMany", "collection": "locations"},
			map[string]any{"name": "present", "op": "find", "collection": "locations"},
		}}},
		Phases: []result.Phase{
			{Name: "run", Operations: []result.Operation{{Name: "insert", Count: 2, Docs: 1000}}},
			{Name: result.VerifyPhase, Operations: []result.Operation{{Name: "present", Count: 1, Docs: 990}}},
		},
	}

	var b strings.Builder
	WriteVerification(&b, res)

	out := b.String()
	if !strings.Contains(out, "Write verification") {
		t.Fatalf("no heading:\n%s", out)
	}

	fields := strings.Fields(strings.Split(strings.TrimSpace(out), "\n")[2])
	if strings.Join(fields, " ") != "- - locations 1 1000 990 10" {
		t.Errorf("row = %q, want - - locations 1 1000 990 10\n%s", fields, out)
	}

	res.Phases = res.Phases[:1]
	b.Reset()
	WriteVerification(&b, res)

	if b.Len() != 0 {
		t.Errorf("a run without a verify phase printed:\n%s", b.String())
	}
}
