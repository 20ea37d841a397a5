package cli

import (
	"io"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/result"
	"github.com/mongobench/mongobench/internal/threshold"
	"github.com/mongobench/mongobench/internal/workload"
)

// printComparisonBlock prints the comparison block that ends a study: the
// variants (and targets) ranked on the study's figure, each with its
// verdict and confidence interval.
func printComparisonBlock(w io.Writer, spec *workload.Spec, res *result.Result) {
	analysis.MatrixBlock(res.Matrix, studyFigure(spec)).WriteText(w)
}

// printRunBlock prints the comparison block of a single run whose workload
// names its figure (run.compare_by or run.compare_cost): per phase, its
// operations ranked on it. Without them a run's operations are different
// requests, not contenders, and no block is printed.
func printRunBlock(w io.Writer, spec *workload.Spec, res *result.Result) {
	if spec.Run.CompareBy == "" && !spec.Run.CompareCost {
		return
	}

	analysis.RunBlock(res, studyFigure(spec)).WriteText(w)
}

// studyFigure is the figure a study's question is about: the operation (or
// sequence iteration) of run.compare_on, else the first operation; the
// metric of run.compare_by (p50 by default, or the latency per returned
// document); with run.compare_cost, each line's cost over the best.
func studyFigure(spec *workload.Spec) analysis.Figure {
	f := analysis.DefaultFigure
	f.Operation = spec.Run.CompareOn
	f.Cost = spec.Run.CompareCost

	switch by := spec.Run.CompareBy; by {
	case "":
	case workload.PerDocFigure:
		f.PerDoc = true
	default:
		if m, err := threshold.ParseMetric(by); err == nil { // validated with the workload
			f.Metric = m
		}
	}

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
func comparisonBlockMarkdown(spec *workload.Spec, res *result.Result) string {
	md := analysis.MatrixBlock(res.Matrix, studyFigure(spec)).Markdown()
	if md == "" {
		return ""
	}

	return "\n" + md
}
