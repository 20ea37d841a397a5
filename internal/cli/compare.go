package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mongobench/mongobench/internal/atomicfile"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/result"
)

// compareFlags are the options of `mongobench compare`.
type compareFlags struct {
	failIf   []string
	markdown string
}

func newCompareCommand(st *State) *cobra.Command {
	var f compareFlags

	c := &cobra.Command{
		Use:   "compare BASELINE.json RESULTS.json...",
		Short: "Compare results files with a baseline, optionally as a CI regression gate",
		Long: `compare reads results files written by run and compares each with the first,
the baseline: per operation of the main phase, throughput (ops/s) and mean,
p50, p90 and p99 latency.

A results file of variants or several targets (a matrix) contributes one
column per cell, target × variant, in its order; its samples are the main
phase's intervals of the cell's trials, round after round. Given alone, such a
file compares its cells with its first one.

Each file contributes its main phase's per-interval values: the table shows
their medians, and the verdict compares each file's intervals with the
baseline's as two independent samples: the ratio (Hodges-Lehmann estimate)
with its 95% confidence interval from the Mann-Whitney U test. It is one of
"1.30× higher, 95% CI 1.28×–1.32×" (the interval excludes 1), "no significant
difference; 95% CI 0.97×–1.04×" (it contains 1), or "inconclusive: 3
intervals, at least 4 needed". Intervals of one run are not independent, so
the confidence intervals are optimistic (too narrow); a verdict on two single
runs says more about those runs than about the code that produced them.

--fail-if turns compare into a regression gate. EXPR is [OPERATION:]METRIC
followed by a signed percentage, with METRIC any percentile (p50, p99.9,
p99.99, ...), mean, max, throughput or error_rate: "p99 +10%" fails when some
file's p99 of some operation is more than 10% above the baseline's and the
verdict is a difference; "throughput -5%" when throughput dropped by more than
5%; "get:p99.9 +10%" looks only at get (the older "p50 +5% get" also works).
Metrics the tables do not show by default get a row of their own. It can be
given several times.

The output ends with the comparison block: the files ranked on the first
operation's p50, best first, each "N× slower (95% CI ...)", "no significant
difference (95% CI ...)" or "inconclusive: ...".

Exit codes: 0 no --fail-if condition failed; 1 one did; 2 bad expression or a
results file that cannot be read or compared.`,
		Example: `  mongobench compare results/before.json results/after.json
  mongobench compare main.json pr.json --fail-if 'p99 +10%' --fail-if 'throughput -5%'
  mongobench compare main.json pr.json --fail-if 'find_by_id:p99.9 +10%' --fail-if 'error_rate +50%'
  mongobench compare main.json pr.json --fail-if 'p50 +5% find_by_id' --markdown comparison.md`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return runCompare(st, args, &f)
		},
	}

	fl := c.Flags()
	fl.StringArrayVar(&f.failIf, "fail-if", nil, "fail (exit 1) when a significant change exceeds EXPR, e.g. 'p99 +10%', 'get:p99.9 +10%' or 'throughput -5%' (repeatable)")
	fl.StringVar(&f.markdown, "markdown", "", "also write the tables as Markdown to this file")

	return c
}

func runCompare(st *State, paths []string, f *compareFlags) error {
	gates := make([]analysis.Gate, 0, len(f.failIf))

	for _, expr := range f.failIf {
		g, err := analysis.ParseGate(expr)
		if err != nil {
			return badInput("%v", err)
		}

		gates = append(gates, g)
	}

	ctx, stop := interruptContext(st)
	defer stop()

	o := newOutputs(st, paths...)
	defer o.release()

	if err := o.add("--markdown", f.markdown); err != nil {
		return err
	}

	files, err := readCompareFiles(ctx, st, paths)
	if err != nil {
		return err
	}

	ops := analysis.AddGateRows(files, analysis.CompareOperations(files), gates)

	if err := analysis.CheckOperations(gates, ops); err != nil {
		return badInput("%v", err)
	}

	checks, failures := analysis.CheckGates(files, ops, gates)

	writeCompareText(st.Stdout, files, ops)
	printFilesBlock(st.Stdout, files)

	if f.markdown != "" {
		if err := writeCompareMarkdown(f.markdown, files, ops, checks); err != nil {
			return badInput("%v", err)
		}

		fmt.Fprintf(st.Stderr, "Markdown written to %s\n", f.markdown)
	}

	for _, line := range checks {
		fmt.Fprintln(st.Stderr, line)
	}

	if failures > 0 {
		return failed("%d --fail-if check(s) failed", failures)
	}

	return nil
}

// readCompareFiles reads every results file, printing each one that cannot
// be read or compared, and warns about files that look inconsistent or
// incomparable.
func readCompareFiles(ctx context.Context, st *State, paths []string) ([]*analysis.File, error) {
	files := make([]*analysis.File, 0, len(paths))
	bad := 0

	for _, path := range paths {
		res, err := result.Read(ctx, path)
		if ctx.Err() != nil {
			return nil, failed("interrupted while reading %s", path)
		}

		if err == nil && res.Kind() == result.KindMatrix {
			var cells []*analysis.File

			if cells, err = analysis.MatrixCells(path, res, func(i int) string { return analysis.Label(len(files) + i) }); err == nil {
				files = append(files, cells...)
				continue
			}
		}

		if err == nil && res.MainPhase() == nil {
			err = fmt.Errorf("results file %s has no phases", path)
		}

		if err == nil && len(res.MainPhase().Intervals) == 0 {
			err = fmt.Errorf("results file %s: main phase %q has no intervals", path, res.MainPhase().Name)
		}

		if err != nil {
			bad++

			msg := err.Error()
			if !strings.Contains(msg, path) {
				msg = path + ": " + msg
			}

			fmt.Fprintln(st.Stderr, msg)

			continue
		}

		files = append(files, &analysis.File{Label: analysis.Label(len(files)), Path: path, Res: res, Phase: res.MainPhase()})
	}

	if bad > 0 {
		return nil, badInput("%d of %d results files could not be read; nothing compared", bad, len(paths))
	}

	for _, cf := range files {
		if errs := cf.Res.Check(); len(errs) > 0 {
			fmt.Fprintf(st.Stderr, "Warning: %s (%s) is inconsistent (%d problems), compared anyway; first: %v\n",
				cf.Label, cf.Path, len(errs), errs[0])
		}

		if cf.Res.Status != result.StatusCompleted {
			fmt.Fprintf(st.Stderr, "Warning: %s (%s) is from a run that was %s\n", cf.Label, cf.Path, cf.Res.Status)
		}

		if name, base := cf.Res.Workload.Name, files[0].Res.Workload.Name; name != base {
			fmt.Fprintf(st.Stderr, "Warning: %s (%s) ran workload %q, the baseline %q\n", cf.Label, cf.Path, name, base)
		}
	}

	return files, nil
}

// writeCompareText prints the comparison as plain-text tables.
func writeCompareText(w io.Writer, files []*analysis.File, ops []analysis.CompareOp) {
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

// compareMarkdown renders the comparison as Markdown.
func compareMarkdown(files []*analysis.File, ops []analysis.CompareOp, checks []string) string {
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

// writeCompareMarkdown writes the Markdown comparison to path atomically.
func writeCompareMarkdown(path string, files []*analysis.File, ops []analysis.CompareOp, checks []string) error {
	return atomicfile.WriteBytes(path, []byte(compareMarkdown(files, ops, checks)))
}
