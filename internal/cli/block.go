package cli

import (
	"io"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/result"
)

// printComparisonBlock prints the comparison block that ends a study: the
// variants (and targets) ranked on the study's figure, each with its
// verdict and confidence interval.
func printComparisonBlock(w io.Writer, res *result.Result) {
	analysis.MatrixBlock(res.Matrix, studyFigure(res)).WriteText(w)
}

// studyFigure is the figure a study's question is about: the median latency
// of the operation (or sequence iteration) its run.compare_on names, else of
// its first operation.
func studyFigure(res *result.Result) analysis.Figure {
	f := analysis.DefaultFigure
	f.Operation = res.Workload.CompareOn

	return f
}

// printFilesBlock prints the comparison block of compare's files: each
// file (or matrix cell) ranked on the first operation's median latency,
// from its intervals.
func printFilesBlock(w io.Writer, files []*analysis.File) {
	names := make([]string, 0, len(files))
	phases := make([]*result.Phase, 0, len(files))

	for _, cf := range files {
		names = append(names, cf.Label)
		phases = append(phases, cf.Phase)
	}

	analysis.FilesBlock(names, phases, analysis.DefaultFigure).WriteText(w)
}

// comparisonBlockMarkdown is the comparison block as a Markdown section,
// for the end of a matrix's Markdown file; empty when nothing is compared.
func comparisonBlockMarkdown(res *result.Result) string {
	md := analysis.MatrixBlock(res.Matrix, studyFigure(res)).Markdown()
	if md == "" {
		return ""
	}

	return "\n" + md
}
