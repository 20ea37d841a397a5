package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/atomicfile"
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

// printRunBlock prints the comparison blocks of a single run: with growth
// blocks, each operation's figure per block against the first block's
// (how it grows with the collection); when the workload names its figure
// (run.compare_by or run.compare_cost), the operations of each phase that
// runs a sequence ranked on it. A run's other operations are different
// requests, not contenders, and are not ranked.
func printRunBlock(w io.Writer, spec *workload.Spec, res *result.Result) {
	for _, b := range runBlocks(spec, res) {
		b.WriteText(w)
	}
}

// runBlocks are the comparison blocks of a single run (see printRunBlock).
func runBlocks(spec *workload.Spec, res *result.Result) []analysis.Block {
	fig := studyFigure(spec)

	var out []analysis.Block

	if g := analysis.GrowthBlock(res, fig); len(g.Groups) > 0 {
		out = append(out, g)
	}

	if spec.Run.CompareBy != "" || spec.Run.CompareCost {
		if b := analysis.RunBlock(res, fig); len(b.Groups) > 0 {
			out = append(out, b)
		}
	}

	return out
}

// runBlocksMarkdown is the comparison blocks of a single run as Markdown
// (--markdown), from the same model as the terminal's.
func runBlocksMarkdown(spec *workload.Spec, res *result.Result) string {
	var s strings.Builder

	fmt.Fprintf(&s, "# %s\n", spec.Name)

	for _, b := range runBlocks(spec, res) {
		s.WriteString("\n" + b.Markdown())
	}

	return s.String()
}

// hasRunBlocks reports whether a single run of spec can end with a
// comparison block, so that --markdown has something to write: it grows
// blocks, or names its figure and runs a sequence.
func hasRunBlocks(spec *workload.Spec) bool {
	phases, _ := spec.PhaseList()

	for _, p := range phases {
		if p.Blocks != nil || (len(p.Sequence) > 0 && (spec.Run.CompareBy != "" || spec.Run.CompareCost)) {
			return true
		}
	}

	return false
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

// writeRunMarkdown writes a single run's comparison blocks as Markdown to
// path (--markdown; nothing when path is empty), atomically.
func writeRunMarkdown(st *State, path string, spec *workload.Spec, res *result.Result) error {
	if path == "" {
		return nil
	}

	if err := atomicfile.WriteBytes(path, []byte(runBlocksMarkdown(spec, res))); err != nil {
		return failed("writing %s: %v", path, err)
	}

	fmt.Fprintf(st.Stderr, "Markdown written to %s\n", path)

	return nil
}
