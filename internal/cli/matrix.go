package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/mongobench/mongobench/internal/base/atomicfile"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/analysis/finish"
	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// writeMatrixRun saves a matrix run's results, prints its tables and says
// how it ended: the results of an interrupted or failed matrix are written
// too.
func writeMatrixRun(st *State, base *workload.Spec, f *runFlags, outcome *bench.Outcome, out string) error {
	// Verdicts and findings come from the finisher, as finish of the
	// trials directory gives them.
	fin, err := finish.Finish(outcome.Result, finish.Options{})
	if err != nil {
		return failed("finishing the results: %v", err)
	}

	// Everything below prints or writes the sanitized copy only.
	res, err := result.Sanitize(outcome.Result)
	if err != nil {
		return failed("writing results: %v", err)
	}

	m := res.Matrix

	// The tables first: a write that fails (a full disk) still shows
	// what the run measured.
	printMatrix(tableWriter(st, f), m)
	printVerification(tableWriter(st, f), res)
	printComparisonBlock(tableWriter(st, f), base, res)

	if err := writeResultsFile(st, out, res); err != nil {
		st.setUnsaved("") // said here, once
		return keptRunLog(out, outcome.TrialLogs, err)
	}

	// The results file holds every trial: their run logs have done
	// their work.
	st.setUnsaved("")

	if outcome.TrialLogs != "" {
		if err := os.RemoveAll(outcome.TrialLogs); err != nil {
			fmt.Fprintf(st.Stderr, "Warning: removing the trials' run logs: %v\n", err)
		}
	}

	resultsWritten(st, out)

	if f.markdown != "" {
		if err := writeMarkdownAtomic(f.markdown, base, res); err != nil {
			return failed("writing %s: %v", f.markdown, err)
		}

		fmt.Fprintf(st.Stderr, "Markdown written to %s\n", f.markdown)
	}

	if err := writeRunReport(st, f, out, res); err != nil {
		return err
	}

	return finishedExit(st, fin)
}

// printMatrix writes, per operation and metric, a table of variants ×
// targets: the median over trials and the verdict against the best variant
// of the same target.
func printMatrix(w io.Writer, m *result.Matrix) {
	writeMatrix(w, m, false)
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
		printTable(w, t.Header, t.TextRows(), markdown)
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

func printTable(w io.Writer, header []string, rows [][]string, markdown bool) {
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

// writeMarkdownAtomic writes the matrix as Markdown atomically, so that a
// reader never sees half a file.
func writeMarkdownAtomic(path string, spec *workload.Spec, res *result.Result) error {
	var b strings.Builder

	writeMatrix(&b, res.Matrix, true)
	b.WriteString(comparisonBlockMarkdown(spec, res))

	return atomicfile.WriteBytes(path, []byte(b.String()))
}
