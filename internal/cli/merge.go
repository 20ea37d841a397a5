package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/analysis"
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
any results file. The workload's thresholds are checked on the merged figures
(exit code 99 when one fails, as for run; a shard does not gate on its share).

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

			return mergeFiles(st, args, out)
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

// mergeFiles is `mongobench merge`.
func mergeFiles(st *State, paths []string, out string) error {
	ctx, stop := interruptContext(st)
	defer stop()

	o := newOutputs(st, paths...)
	defer o.release()

	if err := o.add("--out", out); err != nil {
		return err
	}

	inputs := make([]merge.Input, 0, len(paths))

	for _, path := range paths {
		res, err := readResultOrRunLog(ctx, path)
		if ctx.Err() != nil {
			return failed("interrupted while reading %s; nothing written", path)
		}

		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, path) {
				msg = path + ": " + msg
			}

			return badInput("%s", msg)
		}

		if errs := res.Check(); len(errs) > 0 {
			return badInput("%s: inconsistent results file: %v", path, errs[0])
		}

		inputs = append(inputs, merge.Input{Name: path, Result: res})
	}

	merged, err := merge.Results(inputs)

	var ie *merge.InputError
	if errors.As(err, &ie) {
		return badInput("%s", ie.Error())
	}

	if err != nil {
		return failed("merging: %v", err)
	}

	merged.Findings = analysis.Findings(merged)

	for _, in := range inputs {
		if in.Result.Shard.Index != 0 {
			continue
		}

		if merged.Thresholds, err = mergedThresholds(merged, in.Result.Thresholds); err != nil {
			return badInput("%s: %v", in.Name, err)
		}
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
	report.WriteSummary(w, merged, throughClient(merged.Client))
	printThresholds(w, merged.Thresholds)

	if err := writeResults(st, out, merged); err != nil {
		return err
	}

	resultsWritten(st, out)

	return thresholdsVerdict(merged.Thresholds)
}
