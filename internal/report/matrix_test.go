package report

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/verdict"
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
	// The page's tables are the analysis model's (analysis.MatrixTables,
	// which the terminal and Markdown print), each verdict cell coloured
	// by its kind: the reference green, a difference red, no significant
	// difference plain, inconclusive muted.
	for _, want := range []string{
		`id="matrix"`, "<caption>clean — throughput (ops/s)</caption>", "<caption>clean — p50 (latency)</caption>",
		`<td class="text ok-text">966.0 — fastest</td>`,
		`<td class="text bad">3.8 — 254× slower, 95% CI 241×–262×</td>`,
		`<td class="text">950.0 — no significant difference; 95% CI 0.97×–1.04×</td>`,
		`<td class="text muted">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}

	tables := analysis.MatrixTables(res.Matrix)
	if len(tables) == 0 {
		t.Fatal("no tables in the model")
	}

	for _, tb := range tables {
		for _, row := range tb.TextRows() {
			for _, cell := range row {
				if !strings.Contains(page, ">"+html.EscapeString(cell)+"</td>") {
					t.Errorf("table %q: cell %q not on the page", tb.Title, cell)
				}
			}
		}
	}
}
