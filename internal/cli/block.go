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

// printFilesBlock prints the comparison block of compare's files: each
// file (or matrix cell) ranked on the first operation's median latency,
// from its intervals.
func printFilesBlock(w io.Writer, files []*compareFile) {
	names := make([]string, 0, len(files))
	phases := make([]*result.Phase, 0, len(files))

	for _, cf := range files {
		names = append(names, cf.label)
		phases = append(phases, cf.phase)
	}

	analysis.FilesBlock(names, phases, analysis.DefaultFigure).WriteText(w)
}

// comparisonBlockMarkdown is the comparison block as a Markdown section,
// for the end of a matrix's Markdown file; empty when nothing is compared.
func comparisonBlockMarkdown(m *result.Matrix) string {
	md := analysis.MatrixBlock(m, analysis.DefaultFigure).Markdown()
	if md == "" {
		return ""
	}

	return "\n" + md
}
