package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/base/atomicfile"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// printComparisonBlock prints the comparison block that ends a study: the
// variants (and targets) ranked on the study's figure, each with its
// verdict and confidence interval. The figure is the one the results
// record (analysis.StudyFigure), so that `mongobench report` shows the
// same block from the file.
func printComparisonBlock(w io.Writer, _ *workload.Spec, res *result.Result) {
	for _, b := range analysis.Blocks(res) {
		b.WriteText(w)
	}
}

// printRunBlock prints the comparison blocks of a single run: with growth
// blocks, each operation's figure per block against the first block's
// (how it grows with the collection); when the workload names its figure
// (run.compare_by or run.compare_cost), the operations of each phase that
// runs a sequence ranked on it. A run's other operations are different
// requests, not contenders, and are not ranked.
func printRunBlock(w io.Writer, _ *workload.Spec, res *result.Result) {
	for _, b := range analysis.Blocks(res) {
		b.WriteText(w)
	}
}

// blocksMarkdown is the comparison blocks of the results as Markdown
// sections, from the same model as the terminal's; empty when nothing is
// compared.
func blocksMarkdown(res *result.Result) string {
	var s strings.Builder

	for _, b := range analysis.Blocks(res) {
		s.WriteString("\n" + b.Markdown())
	}

	return s.String()
}

// printFilesBlock prints the comparison block of compare's files: each
// file (or matrix cell) ranked on the first operation's median latency,
// from its intervals.
func printFilesBlock(w io.Writer, files []*analysis.File, j analysis.Judging) {
	fig := analysis.DefaultFigure
	fig.Judging = j
	analysis.FilesBlock(files, fig).WriteText(w)
}

// comparisonBlockMarkdown is the comparison block as a Markdown section,
// for the end of a matrix's Markdown file; empty when nothing is compared.
func comparisonBlockMarkdown(_ *workload.Spec, res *result.Result) string {
	return blocksMarkdown(res)
}

// writeRunMarkdown writes a single run's comparison blocks as Markdown to
// path (--markdown; nothing when path is empty), atomically.
func writeRunMarkdown(st *State, path string, spec *workload.Spec, res *result.Result) error {
	if path == "" {
		return nil
	}

	md := "# " + spec.Name + "\n" + blocksMarkdown(res)
	if err := atomicfile.WriteBytes(path, []byte(md)); err != nil {
		return failed("writing %s: %v", path, err)
	}

	fmt.Fprintf(st.Stderr, "Markdown written to %s\n", path)

	return nil
}
