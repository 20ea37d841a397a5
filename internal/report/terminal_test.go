package report

import (
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/base/golden"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// The terminal renderers' golden files. After an intended change, rewrite
// them with go test ./internal/report -run Terminal -args -update (which
// fails, so that the diff is reviewed) and review git diff. The text is
// what run, merge, compare and finish print, byte for byte: the cli's
// tests check parts of it against real runs.

// TestTerminalSummary renders the summary and comparison blocks of a real
// quickstart run and of the fixture with every part a summary shows (a
// load phase and a warm-up left out, an open-loop phase with its schedule,
// service times and decode cost, growth blocks cut short, a paced
// background job, errors).
func TestTerminalSummary(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct{ golden, path string }{
		{"testdata/full.summary.golden", fullJSON},
		{"testdata/quickstart.summary.golden", quickstartJSON},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			t.Parallel()

			res := readInputs(t, tc.path)[0]

			var b strings.Builder
			WriteSummary(&b, res, "")
			WriteBlocks(&b, res)
			golden.Check(t, tc.golden, []byte(b.String()))

			if md := BlocksMarkdown(res); strings.Contains(b.String(), "Comparison") != (md != "") {
				t.Errorf("the terminal and the Markdown disagree on whether there is a comparison block:\n%s", md)
			}
		})
	}
}

// TestTerminalSummaryNothingMeasured: a run whose every phase is a load or
// a warm-up says so instead of printing an empty table.
func TestTerminalSummaryNothingMeasured(t *testing.T) {
	t.Parallel()

	res := &result.Result{
		Workload: result.Workload{Name: "w"},
		Target:   result.Target{ServerVersion: "7.0"},
		Phases: []result.Phase{
			{Name: "load:items", Model: "load", Operations: []result.Operation{{Name: "load_items", Count: 5}}},
			{Name: "load", Operations: []result.Operation{{Name: "insert", Count: 5}}}, // an old file: no model
			{Name: "warm", Excluded: true, Operations: []result.Operation{{Name: "get", Count: 5}}},
		},
	}

	var b strings.Builder
	WriteSummary(&b, res, " through node-mongoose (mongoose 8.24.10)")

	if want := "\nw on 7.0 through node-mongoose (mongoose 8.24.10)\nNo operation was measured.\n"; b.String() != want {
		t.Errorf("summary = %q, want %q", b.String(), want)
	}
}

// matrixFixture is a comparison of three variants on one target that
// measured, and a second target that failed with a note.
func matrixFixture() *result.Result {
	return &result.Result{
		SchemaVersion: result.SchemaVersion,
		Workload:      result.Workload{Name: "cleanup"},
		Status:        result.StatusCompleted,
		Matrix: &result.Matrix{
			Targets: []result.MatrixTarget{
				{Name: "embedded", Kind: "embedded", Notes: []string{"server runs in the same process as the client"}},
				{Name: "remote", Kind: "uri", Error: "server selection timed out after 5s"},
			},
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
					{Variant: "truncate", Median: 950, Ratio: 1.02, Kind: verdict.NoDifference, Text: "no significant difference; 95% CI 0.97×–1.04×"},
				},
			}, {
				Target: "embedded", Operation: "clean", Metric: "p50",
				Variants: []result.CellVerdict{
					{Variant: "delete_many", Median: 1000, Best: true, Ratio: 1, Kind: verdict.Reference, Text: "lowest"},
					{Variant: "drop_recreate", Median: 2000, Ratio: 2, Kind: verdict.Inconclusive, Text: "inconclusive: 5 rounds, at least 6 needed"},
				},
			}},
		},
	}
}

// TestTerminalMatrix renders a comparison run's tables as the terminal
// and the Markdown file show them, from analysis.MatrixTables (the HTML
// page's model too), and a comparison that measured nothing.
func TestTerminalMatrix(t *testing.T) {
	t.Parallel()

	res := matrixFixture()

	var b strings.Builder
	WriteMatrix(&b, res.Matrix)
	WriteVerification(&b, res)
	WriteBlocks(&b, res)
	golden.Check(t, "testdata/matrix.txt.golden", []byte(b.String()))

	golden.Check(t, "testdata/matrix.md.golden", []byte(MatrixMarkdown(res.Matrix)+BlocksMarkdown(res)))

	// The same tables in both: every table title of the terminal is a
	// Markdown table's.
	for _, tbl := range analysis.MatrixTables(res.Matrix) {
		if !strings.Contains(MatrixMarkdown(res.Matrix), "\n"+tbl.Title+"\n\n| ") {
			t.Errorf("Markdown lacks the table %q", tbl.Title)
		}
	}

	res.Matrix.Verdicts = nil
	b.Reset()
	WriteMatrix(&b, res.Matrix)

	if want := "\nNo trial measured anything: nothing to compare.\n" +
		"Note (embedded): server runs in the same process as the client\n\n" +
		"Target remote: server selection timed out after 5s\n"; b.String() != want {
		t.Errorf("a matrix without verdicts:\n%s", b.String())
	}
}

// compareFixture is compare's sides: the quickstart run four times as the
// baseline, and four runs 1.5 times slower, each with a little spread so
// that the verdicts have intervals.
func compareFixture(t *testing.T) []*analysis.File {
	t.Helper()

	side := func(label, path string, scales ...float64) *analysis.File {
		f := &analysis.File{Label: label, Path: path}

		for _, s := range scales {
			r := readInputs(t, quickstartJSON)[0]
			p := r.MainPhase()

			for i := range p.Operations {
				scaleOp(&p.Operations[i], s)
			}

			for i := range p.Intervals {
				for j := range p.Intervals[i].Operations {
					scaleOp(&p.Intervals[i].Operations[j], s)
				}
			}

			if f.Res == nil {
				f.Res, f.Phase = r, p
			}

			f.Runs = append(f.Runs, p)
		}

		return f
	}

	return []*analysis.File{
		side("A", "results/main/", 1, 1.01, 0.99, 1.02),
		side("B", "results/pr/", 1.5, 1.52, 1.49, 1.51),
	}
}

// scaleOp makes an operation s times slower.
func scaleOp(o *result.Operation, s float64) {
	l := &o.LatencyUS
	l.Mean, l.P50, l.P90, l.P95, l.P99, l.P999, l.Max = s*l.Mean, s*l.P50, s*l.P90, s*l.P95, s*l.P99, s*l.P999, s*l.Max
	o.OpsPerSec /= s
}

// TestTerminalCompare renders compare's tables and comparison block as the
// terminal shows them, and its Markdown file with a --fail-if check.
func TestTerminalCompare(t *testing.T) {
	t.Parallel()

	files := compareFixture(t)
	ops := analysis.CompareOperations(files, analysis.Judging{})

	var b strings.Builder
	WriteCompare(&b, files, ops)
	WriteFilesBlock(&b, files, analysis.Judging{})
	golden.Check(t, "testdata/compare.txt.golden", []byte(b.String()))

	golden.Check(t, "testdata/compare.md.golden", []byte(CompareMarkdown(files, ops, []string{"FAIL `p99 +10%`: B p99 of get_error 1.50× the baseline's"})))
}

// TestLatencyCell: a latency cell is a dash only when the operation never
// completed (its latencies are zeros standing for nothing); a measured
// 0µs is a value.
func TestLatencyCell(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		count int64
		us    float64
		want  string
	}{
		{0, 0, "-"},
		{0, 1234, "-"},
		{1, 0, "0µs"},
		{3, 1234, "1.23ms"},
	} {
		if got := latencyCell(tc.count, tc.us); got != tc.want {
			t.Errorf("latencyCell(%d, %v) = %q, want %q", tc.count, tc.us, got, tc.want)
		}
	}
}
