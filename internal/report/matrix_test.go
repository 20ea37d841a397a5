package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/result"
)

func TestMatrixSection(t *testing.T) {
	t.Parallel()

	res := &result.Result{
		SchemaVersion: result.SchemaVersion,
		Workload:      result.Workload{Name: "cleanup"},
		Status:        result.StatusCompleted,
		Matrix: &result.Matrix{
			Targets:  []result.MatrixTarget{{Name: "embedded", Kind: "embedded"}},
			Variants: []string{"delete_many", "drop_recreate"},
			Rounds:   5,
			Verdicts: []result.MatrixVerdict{{
				Target: "embedded", Operation: "clean", Metric: "throughput",
				Variants: []result.CellVerdict{
					{Variant: "delete_many", Median: 966, Best: true, Ratio: 1, Text: "fastest"},
					{Variant: "drop_recreate", Median: 3.8, Ratio: 254, Text: "254× slower ±4%"},
				},
			}},
		},
	}

	var b bytes.Buffer
	if err := (Options{}).Render(&b, []*result.Result{res}); err != nil {
		t.Fatal(err)
	}

	page := b.String()
	for _, want := range []string{`id="matrix"`, "clean · throughput · embedded", "966.0 ops/s", "254× slower ±4%", "drop_recreate"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
