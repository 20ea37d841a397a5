package report

import (
	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
)

// crossTarget marks verdicts that compare targets (one variant on several
// targets) rather than variants; it matches the CLI's results.
const crossTarget = analysis.CrossTarget

// newMatrixView lays out a comparison run: its tables (analysis.MatrixTables,
// per operation and metric: variants × targets, each cell the median over
// trials with the verdict against the best, which states its interval in
// both directions) and its comparison block (analysis.Blocks), the same
// model the terminal and Markdown print.
func newMatrixView(r *result.Result) *matrixView {
	if r == nil || r.Matrix == nil || len(r.Matrix.Verdicts) == 0 {
		return nil
	}

	v := &matrixView{Blocks: newBlockViews(r)}

	for _, t := range analysis.MatrixTables(r.Matrix) {
		v.Tables = append(v.Tables, newTableView(t))
	}

	return v
}
