package bench

import (
	"testing"

	"github.com/mongobench/mongobench/internal/analysis"
)

// TestTrialsJudging reads run.min_effect and run.reference back from a
// comparison's description as finish does, so that the rebuilt verdicts
// are judged as the comparison's own would have been; a workload without
// them is judged by default.
func TestTrialsJudging(t *testing.T) {
	spec := map[string]any{"name": "w", "run": map[string]any{"min_effect": "5%", "reference": "b", "concurrency": 4.0}}

	if got, want := judgingOf(spec), analysis.JudgingOf("5%", "b"); got != want {
		t.Errorf("judging %+v, want %+v", got, want)
	}

	if got, want := judgingOf(map[string]any{"name": "w"}), analysis.JudgingOf("", ""); got != want {
		t.Errorf("judging without them %+v, want %+v", got, want)
	}

	if got := judgingOf(nil); got != analysis.JudgingOf("", "") {
		t.Errorf("judging of no spec %+v", got)
	}
}
