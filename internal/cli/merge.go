package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mongobench/mongobench/internal/engine/client"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/analysis/finish"
	"github.com/mongobench/mongobench/internal/report"
	"github.com/mongobench/mongobench/internal/results/merge"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/results/runlog"
)

func newMergeCommand(st *State) *cobra.Command {
	var out string

	c := &cobra.Command{
		Use:   "merge FILE|RUNLOG... -o merged.json",
		Short: "Merge the results files of a sharded run exactly",
		Long: `merge adds up the results files of the shards of one distributed run (run
--shard I/N on several machines or processes) into one results file, as if one
client had applied the whole load: it adds the latency histograms (never
percentiles), sums counts, errors and documents, lays the shards' intervals on
one wall-clock grid (from --start-at when the shards had one), and recomputes
every percentile, mean and rate from the merged histograms. The merged file
records the shards it came from; report, report --csv and compare read it like
any results file. The merged result is finished as run finishes a run's: the
workload's thresholds are checked on the merged figures (exit code 99 when one
fails; a shard does not gate on its share), and a shard that was interrupted
or aborted, or merged errors above run.max_error_rate, exit with code 1.

Every shard 0..N-1 of the run must be given exactly once. Files of different
runs are refused with one line naming the file: another workload (spec hash),
seed scheme, shard count or start instant, a duplicate or a missing shard.

A shard's run log (NAME.runlog.jsonl) stands for its results file: a shard
that was killed before writing its results merges with the intervals it
logged, and the merged file then says which shard was incomplete.`,
		Example: `  mongobench merge results/shard-0.json results/shard-1.json results/shard-2.json -o results/merged.json`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if out == "" {
				return badInput("merge needs -o FILE (the merged results file, - for standard output)")
			}

			return runMerge(st, args, out)
		},
	}

	c.Flags().StringVarP(&out, "out", "o", "", "merged results file, - for standard output")

	return c
}

// readResultOrRunLog reads a results file, or builds the results of a run
// log (a shard killed before it wrote its results merges as far as it got,
// status incomplete).
func readResultOrRunLog(ctx context.Context, path string) (*result.Result, error) {
	if strings.HasSuffix(path, runlog.Suffix) {
		return runlog.Build(ctx, path)
	}

	return result.Read(ctx, path)
}

// runMerge is `mongobench merge`: read, merge (package merge), finish (analysis/finish), write and print.
func runMerge(st *State, paths []string, out string) error {
	ctx, stop := interruptContext(st)
	defer stop()

	o := newOutputs(st, paths...)
	defer o.release()

	if err := o.add("--out", out); err != nil {
		return err
	}

	// Strict: an inconsistent shard is refused, not merged into new
	// figures. Empty files are allowed: merge says which inputs are no
	// shards, and a shard killed early merges as far as it got.
	// One file that cannot be read is the error itself, on one line.
	files, err := result.ReadAll(ctx, paths, result.ReadOptions{AllowEmpty: true, Strict: true, Read: readResultOrRunLog})
	if err != nil {
		return failed("%v", err)
	}

	switch len(files.Errors) {
	case 0:
	case 1:
		return badInput("%v", files.Errors[0])
	default:
		printUnread(st, files.Errors)
		return badInput("%v; nothing written", files.Err())
	}

	printWarnings(st, files.Warnings)

	inputs := make([]merge.Input, 0, len(files.Files))
	for _, f := range files.Files {
		inputs = append(inputs, merge.Input{Name: f.Path, Result: f.Result})
	}

	merged, err := merge.Results(inputs)

	var ie *merge.InputError
	if errors.As(err, &ie) {
		return badInput("%s", ie.Error())
	}

	if err != nil {
		return failed("merging: %v", err)
	}

	// The rules shard 0 recorded (in the workload's order), checked on
	// the merged figures: a shard does not gate on its share, the merge
	// does.
	var opts finish.Options

	for _, in := range inputs {
		if in.Result.Shard.Index != 0 {
			continue
		}

		if opts.Rules, err = finish.RulesOf(in.Result); err != nil {
			return badInput("%s: %v", in.Name, err)
		}
	}

	fin, err := finish.Finish(merged, opts)
	if err != nil {
		return badInput("%v", err)
	}

	if merged, err = result.Sanitize(merged); err != nil {
		return failed("writing the merged results: %v", err)
	}

	if errs := merged.Check(); len(errs) > 0 {
		return failed("the merged result is inconsistent (a bug): %v", errs[0])
	}

	w := st.Stdout
	if out == stdoutPath {
		w = st.Stderr
	}

	// The table first: a write that fails (a full disk) still shows the
	// merged figures.
	fmt.Fprintf(w, "Merged %d shards of %s (%d workers in all)\n", merged.Merged.Count, merged.Workload.Name, merged.Concurrency)
	report.WriteSummary(w, merged, client.Through(merged.Client))
	printThresholds(w, merged.Thresholds)

	if err := writeResults(st, out, merged); err != nil {
		return err
	}

	resultsWritten(st, out)

	return finishedExit(st, fin)
}
