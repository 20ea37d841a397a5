package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/analysis/finish"
	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/results/runlog"
)

// newFinishCommand is `mongobench finish`.
func newFinishCommand(st *State) *cobra.Command {
	var out string

	c := &cobra.Command{
		Use:   "finish RUNLOG.runlog.jsonl | TRIALS-DIRECTORY",
		Short: "Build a results file from a run log (e.g. of a run that was killed)",
		Long: `finish builds the results file of a run from its run log, the file a run
appends every interval to as it measures (results/NAME.runlog.jsonl next to
results/NAME.json). run builds its results file the same way when it ends;
finish is for a run that did not end: killed (kill -9, out of memory), or on a
machine that went down. The results then have status incomplete and cover the
intervals the log holds, every summary recomputed exactly from their
histograms; report and compare read them like any other.

A comparison run (variants, targets or rounds) keeps each trial's run log in a
directory beside its results file (results/NAME.trials for results/NAME.json)
as it runs, and removes it once the results file is written; finish of that
directory builds a results file of the trials that completed (the trial cut
short is left out), with the verdicts they allow.

The results are finished as run finishes them: findings, the workload's
thresholds (in the order and with the limits the run log's end records) and
the error budget, so finish exits as the run did: 99 when a threshold
failed, 1 when the run was interrupted or aborted, or its errors were above
run.max_error_rate. A run log cut short is judged on the intervals it holds
(its status incomplete is no failure by itself).

The results file goes next to the run log (NAME.json for NAME.runlog.jsonl or
NAME.trials),
replacing a file of that name, or to -o FILE; -o - writes it to standard
output. It is written atomically. An output that is the run log itself, or
that another mongobench is writing (the run still going), is refused with
exit code 2. A file that is not a run log, one written by a newer format
version, or one spliced from several (a line of another run's log, or an
interval that does not start where the previous one ended) is refused with
exit code 2, naming the file and line.`,
		Example: `  mongobench finish results/soak-20260101T000000Z.runlog.jsonl
  mongobench finish results/soak.runlog.jsonl -o soak-partial.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("out") && strings.TrimSpace(out) == "" {
				return badInput("--out is empty: give a file name, or - for standard output")
			}

			return finishRunLog(st, args[0], out)
		},
	}

	c.Flags().StringVarP(&out, "out", "o", "", "results file, - for standard output (default: next to the run log, NAME.json)")

	return c
}

// finishRunLog is `mongobench finish`.
func finishRunLog(st *State, path, out string) error {
	ctx, stop := interruptContext(st)
	defer stop()

	build, dir := runlog.Build, false
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		build, dir = bench.FinishTrials, true // a comparison's trials
	}

	if out == "" {
		out = finishPathFor(path, dir)
	}

	o := newOutputs(st, path)
	defer o.release()

	if err := o.add("--out", out); err != nil {
		return err
	}

	res, err := build(ctx, path)
	if err != nil {
		if ctx.Err() != nil {
			return failed("interrupted while reading %s; no results written", path)
		}

		return badInput("%v", err)
	}

	// Finished as run finished it: the same thresholds, verdicts and
	// exit status.
	fin, err := finish.Finish(res, finish.Options{})
	if err != nil {
		return badInput("%s: %v", path, err)
	}

	if res, err = result.Sanitize(res); err != nil {
		return failed("writing results: %v", err)
	}

	w := st.Stdout
	if out == stdoutPath {
		w = st.Stderr
	}

	printThresholds(w, res.Thresholds)

	if err := writeResults(st, out, res); err != nil {
		return err
	}

	resultsWritten(st, out)

	if res.Status != result.StatusCompleted {
		fmt.Fprintf(st.Stderr, "Status: %s: %s\n", res.Status, res.StatusReason)
	}

	return finishedExit(st, fin)
}

// finishPathFor is where finish writes the results of path without -o: a
// comparison's trials directory (dir) results/NAME.trials gives
// results/NAME.json, the results file the comparison did not write.
func finishPathFor(path string, dir bool) string {
	if dir {
		return strings.TrimSuffix(filepath.Clean(path), bench.TrialsSuffix) + ".json"
	}

	return resultsPathFor(path)
}

// resultsPathFor is the results file that goes with a run log:
// NAME.runlog.jsonl → NAME.json (any other name gets .json appended).
func resultsPathFor(runLog string) string {
	return strings.TrimSuffix(runLog, runlog.Suffix) + ".json"
}
