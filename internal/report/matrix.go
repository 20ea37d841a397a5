package report

import (
	"fmt"

	"github.com/mongobench/mongobench/internal/units"

	"github.com/mongobench/mongobench/internal/result"
	"github.com/mongobench/mongobench/internal/verdict"
)

// crossTarget marks verdicts that compare targets (one variant on several
// targets) rather than variants; it matches the CLI's results.
const crossTarget = "*"

// newMatrixView turns a comparison run's verdicts into the matrix table: one
// row per target, operation and metric; one column per variant (or per
// target when a single variant ran on several), each cell the median over
// trials with the verdict against the best, which states its interval in
// both directions ("4.98× slower, 95% CI 4.90×–5.05×").
func newMatrixView(m *result.Matrix) *matrixView {
	if m == nil || len(m.Verdicts) == 0 {
		return nil
	}

	cross := len(m.Variants) == 1 && len(m.Targets) > 1

	v := &matrixView{}
	if cross {
		for _, t := range m.Targets {
			v.Columns = append(v.Columns, t.Name)
		}
	} else {
		v.Columns = append(v.Columns, m.Variants...)
	}

	for _, mv := range m.Verdicts {
		if cross != (mv.Target == crossTarget) {
			continue
		}

		label := mv.Operation + " · " + mv.Metric
		if !cross {
			label += " · " + mv.Target
		}

		byName := map[string]result.CellVerdict{}
		for _, cv := range mv.Variants {
			byName[cv.Variant] = cv
		}

		row := matrixRow{Operation: label}

		for _, col := range v.Columns {
			cv, ok := byName[col]
			if !ok {
				row.Cells = append(row.Cells, matrixCell{Value: "–"})
				continue
			}

			value := fmt.Sprintf("%.1f ops/s", cv.Median)
			if mv.Metric != "throughput" {
				value = units.Micros(cv.Median)
			}

			class := "num"

			switch cv.Kind {
			case verdict.Reference:
				class = "num ok-text"
			case verdict.Difference:
				class = "num bad"
			case verdict.Inconclusive:
				class = "num muted"
			}

			row.Cells = append(row.Cells, matrixCell{Value: value, Verdict: cv.Text, Class: class})
		}

		v.Rows = append(v.Rows, row)
	}

	return v
}
