package cli

import (
	"io"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/result"
)

// printComparisonBlock prints the comparison block that ends a study: the
// variants (and targets) ranked on the study's figure, each with its
// verdict and confidence interval. The figure is the first operation's
// median latency until the workload can name one.
func printComparisonBlock(w io.Writer, m *result.Matrix) {
	analysis.MatrixBlock(m, analysis.DefaultFigure).WriteText(w)
}
