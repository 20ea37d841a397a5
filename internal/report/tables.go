package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// WriteMatrix writes, per operation and metric, a table of variants ×
// targets (analysis.MatrixTables, the model of the HTML page's tables
// too): the median over trials and the verdict against the reference,
// then the targets' errors and notes.
func WriteMatrix(w io.Writer, m *result.Matrix) {
	writeMatrix(w, m, false)
}

// MatrixMarkdown is WriteMatrix as Markdown tables.
func MatrixMarkdown(m *result.Matrix) string {
	var b strings.Builder

	writeMatrix(&b, m, true)

	return b.String()
}

func writeMatrix(w io.Writer, m *result.Matrix, markdown bool) {
	what := "the variants on the same target"
	if len(m.Variants) == 1 && len(m.Targets) > 1 {
		what = "the targets"
	}

	if len(m.Verdicts) == 0 {
		fmt.Fprintf(w, "\nNo trial measured anything: nothing to compare.\n")
	} else {
		fmt.Fprintf(w, "\nMedians over %d round(s); verdicts compare %s with the reference (the first, or\n"+
			"run.reference) by the median of per-round ratios with its distribution-free 95%% CI: a\n"+
			"difference when the CI excludes 1 and the change is at least the minimum effect (run.min_effect,\n"+
			"5%% by default), inconclusive below %d rounds.\n",
			m.Rounds, what, verdict.MinSamples(verdict.Paired, analysis.MatrixAlpha))
	}

	for _, t := range analysis.MatrixTables(m) {
		fmt.Fprintf(w, "\n%s\n", t.Title)
		writeTable(w, t.Header, t.TextRows(), markdown)
	}

	for _, t := range m.Targets {
		if t.Error != "" {
			fmt.Fprintf(w, "\nTarget %s: %s\n", t.Name, t.Error)
		}

		for _, n := range t.Notes {
			fmt.Fprintf(w, "Note (%s): %s\n", t.Name, n)
		}
	}
}

func writeTable(w io.Writer, header []string, rows [][]string, markdown bool) {
	if markdown {
		fmt.Fprintf(w, "\n| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat(" --- |", len(header)))

		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}

		return
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")

	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}

	_ = tw.Flush()
}

// WriteCompare writes compare's comparison as plain-text tables, one per
// operation (analysis.CompareTable, the model of the HTML page's tables
// too), numbers aligned right.
func WriteCompare(w io.Writer, files []*analysis.File, ops []analysis.CompareOp) {
	fmt.Fprintln(w, "Results files:")

	for i, cf := range files {
		fmt.Fprintf(w, "  %s\n", analysis.Legend(cf, i == 0))
	}

	for _, op := range ops {
		t := analysis.CompareTable(files, op)
		fmt.Fprintf(w, "\n%s\n", t.Title)

		header, rows := t.Header, t.TextRows()
		widths := make([]int, len(header))

		for _, r := range append([][]string{header}, rows...) {
			for i, c := range r {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
		}

		for _, r := range append([][]string{header}, rows...) {
			var b strings.Builder

			b.WriteString(" ")

			for i, c := range r {
				pad := widths[i] - utf8.RuneCountInString(c)

				b.WriteString(" ")

				if t.Numeric[i] {
					b.WriteString(strings.Repeat(" ", pad) + c)
				} else {
					b.WriteString(c + strings.Repeat(" ", pad))
				}

				b.WriteString(" ")
			}

			fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		}
	}

	fmt.Fprintf(w, "\n%s\n", analysis.CompareNote(files))
}

// CompareMarkdown is WriteCompare as Markdown, followed by the --fail-if
// checks' lines.
func CompareMarkdown(files []*analysis.File, ops []analysis.CompareOp, checks []string) string {
	var b strings.Builder

	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

	b.WriteString("# mongobench compare\n\n")

	for i, cf := range files {
		fmt.Fprintf(&b, "- %s\n", cell(strings.ReplaceAll(analysis.Legend(cf, i == 0), "  ", " ")))
	}

	for _, op := range ops {
		t := analysis.CompareTable(files, op)
		fmt.Fprintf(&b, "\n## %s\n\n", cell(t.Title))

		header := t.Header
		b.WriteString("|")

		for _, h := range header {
			b.WriteString(" " + cell(h) + " |")
		}

		b.WriteString("\n|")

		for i := range header {
			if t.Numeric[i] {
				b.WriteString(" ---: |")
			} else {
				b.WriteString(" --- |")
			}
		}

		b.WriteString("\n")

		for _, r := range t.TextRows() {
			b.WriteString("|")

			for _, c := range r {
				b.WriteString(" " + cell(c) + " |")
			}

			b.WriteString("\n")
		}
	}

	b.WriteString("\n" + strings.ReplaceAll(analysis.CompareNote(files), "\n", " ") + "\n")

	if len(checks) > 0 {
		b.WriteString("\n## Checks\n\n")

		for _, c := range checks {
			fmt.Fprintf(&b, "- `%s`\n", strings.ReplaceAll(c, "`", "'"))
		}
	}

	return b.String()
}
