package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/result"
	"github.com/mongobench/mongobench/internal/verdict"
)

func TestMatrixSection(t *testing.T) {
	t.Parallel()

	res := &result.Result{
		SchemaVersion: result.SchemaVersion,
		Workload:      result.Workload{Name: "cleanup"},
		Status:        result.StatusCompleted,
		Matrix: &result.Matrix{
			Targets:  []result.MatrixTarget{{Name: "embedded", Kind: "embedded"}},
			Variants: []string{"delete_many", "drop_recreate", "truncate"},
			Rounds:   5,
			Verdicts: []result.MatrixVerdict{{
				Target: "embedded", Operation: "clean", Metric: "throughput",
				Variants: []result.CellVerdict{
					{Variant: "delete_many", Median: 966, Best: true, Ratio: 1, Kind: verdict.Reference, Text: "fastest"},
					{
						Variant: "drop_recreate", Median: 3.8, Ratio: 254, RatioLo: 241, RatioHi: 262, Kind: verdict.Difference,
						Text: "254× slower, 95% CI 241×–262×",
					},
					{
						Variant: "truncate", Median: 950, Ratio: 1.02, Kind: verdict.NoDifference,
						Text: "no significant difference; 95% CI 0.97×–1.04×",
					},
				},
			}, {
				Target: "embedded", Operation: "clean", Metric: "p50",
				Variants: []result.CellVerdict{
					{Variant: "delete_many", Median: 1000, Best: true, Ratio: 1, Kind: verdict.Reference, Text: "lowest"},
					{
						Variant: "drop_recreate", Median: 2000, Ratio: 2, Kind: verdict.Inconclusive,
						Text: "inconclusive: 5 rounds, at least 6 needed",
					},
				},
			}},
		},
	}

	var b bytes.Buffer
	if err := (Options{}).Render(&b, []*result.Result{res}); err != nil {
		t.Fatal(err)
	}

	page := b.String()
	// Each cell's class follows its kind: the reference in green, a
	// difference in red, no significant difference plain, inconclusive
	// muted.
	for _, want := range []string{
		`id="matrix"`, "clean · throughput · embedded", "drop_recreate",
		`<td class="num ok-text">966.0 ops/s <span class="verdict">fastest</span></td>`,
		`<td class="num bad">3.8 ops/s <span class="verdict">254× slower, 95% CI 241×–262×</span></td>`,
		`<td class="num">950.0 ops/s <span class="verdict">no significant difference; 95% CI 0.97×–1.04×</span></td>`,
		`<span class="verdict">inconclusive: 5 rounds, at least 6 needed</span>`,
		`<td class="num muted">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
