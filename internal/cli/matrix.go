package cli

import (
	"fmt"
	"os"

	"github.com/mongobench/mongobench/internal/base/atomicfile"
	"github.com/mongobench/mongobench/internal/report"

	"github.com/mongobench/mongobench/internal/analysis/finish"
	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/results/result"
)

// writeMatrixRun saves a matrix run's results, prints its tables and says
// how it ended: the results of an interrupted or failed matrix are written
// too.
func writeMatrixRun(st *State, f *runFlags, outcome *bench.Outcome, out string) error {
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
	report.WriteMatrix(tableWriter(st, f), m)
	report.WriteVerification(tableWriter(st, f), res)
	report.WriteBlocks(tableWriter(st, f), res)
	report.WriteDurability(tableWriter(st, f), res)

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
		if err := writeMarkdownAtomic(f.markdown, res); err != nil {
			return failed("writing %s: %v", f.markdown, err)
		}

		fmt.Fprintf(st.Stderr, "Markdown written to %s\n", f.markdown)
	}

	if err := writeRunReport(st, f, out, res); err != nil {
		return err
	}

	return finishedExit(st, fin)
}

// writeMarkdownAtomic writes the matrix as Markdown atomically, so that a
// reader never sees half a file.
func writeMarkdownAtomic(path string, res *result.Result) error {
	md := report.MatrixMarkdown(res.Matrix) + report.BlocksMarkdown(res) + report.DurabilityMarkdown(res)

	return atomicfile.WriteBytes(path, []byte(md))
}
