package cli

import (
	"fmt"

	"github.com/mongobench/mongobench/internal/base/atomicfile"
	"github.com/mongobench/mongobench/internal/report"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// compareFlags are the options of `mongobench compare`.
type compareFlags struct {
	failIf    []string
	markdown  string
	minEffect string
	strict    bool
}

func newCompareCommand(st *State) *cobra.Command {
	var f compareFlags

	c := &cobra.Command{
		Use:   "compare BASELINE.json RESULTS.json...",
		Short: "Compare results files with a baseline, optionally as a CI regression gate",
		Long: `compare reads results files written by run and compares each side with the
first, the baseline: per operation of the main phase, throughput (ops/s) and
mean, p50, p90 and p99 latency.

A side is one results file, or several runs of the same workload: a directory
(every results file in it) or a comma-separated list of files. Each run is one
sample, its value the whole main phase's (percentiles from its merged
histogram); a side's value is the median over its runs. A results file of
variants or several targets (a matrix) contributes one side per cell, target ×
variant, whose runs are the cell's trials; given alone, it compares its cells
with its first one.

The verdict compares each side's runs with the baseline's as independent
samples: the ratio (Hodges-Lehmann estimate) with its 95% confidence interval
from the Mann-Whitney U test. It is one of "1.30× higher, 95% CI 1.28×–1.32×"
(the interval excludes 1 and the change is at least the minimum effect),
"no meaningful difference (within ±5%; ...)" (smaller than the minimum
effect), "no significant difference; 95% CI 0.97×–1.04×" (the interval
contains 1), or "inconclusive: 1 run a side, at least 4 a side needed". A run
is one observation of the machine's state: the drift between two runs (a busy
neighbour, a warm cache) shows in none of its intervals, so one run a side
cannot establish a change; repeat each side 4 times or more.

--fail-if turns compare into a regression gate. EXPR is [OPERATION:]METRIC
followed by a signed percentage, with METRIC any percentile (p50, p99.9,
p99.99, ...), mean, max, throughput or error_rate: "p99 +10%" fails when some
side's p99 of some operation is more than 10% above the baseline's (the point
estimate) and the verdict is a difference (the 95% interval excludes no
change, and the change is at least the minimum effect); "throughput -5%" when
throughput dropped by more than 5%; "get:p99.9 +10%" looks only at get (the
older "p50 +5% get" also works). A comparison that cannot be judged (too few
runs) does not fail the gate unless --strict is given; it is said on standard
error. Metrics the tables do not show by default get a row of their own. It can
be given several times.

The output ends with the comparison block: the sides ranked on the first
operation's p50 against the baseline, each "N× slower (95% CI ...)", "no
significant difference (95% CI ...)" or "inconclusive: ...".

Exit codes: 0 no --fail-if condition failed; 1 one did (or, with --strict,
one could not be judged); 2 bad expression or a results file that cannot be
read or compared.`,
		Example: `  mongobench compare results/before.json results/after.json
  mongobench compare results/main/ results/pr/ --fail-if 'p99 +10%' --fail-if 'throughput -5%'
  mongobench compare main1.json,main2.json,main3.json,main4.json pr1.json,pr2.json,pr3.json,pr4.json
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
	fl.StringVar(&f.minEffect, "min-effect", "", "smallest change called a difference, e.g. '5%' (the default) or '0%' for none")
	fl.BoolVar(&f.strict, "strict", false, "with --fail-if, fail (exit 1) when a comparison cannot be judged (too few runs a side)")

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

	var judging analysis.Judging

	if f.minEffect != "" {
		e, err := verdict.ParseMinEffect(f.minEffect)
		if err != nil {
			return badInput("bad --min-effect: %v", err)
		}

		judging.MinEffect = e
	}

	if f.strict && len(gates) == 0 {
		return badInput("--strict goes with --fail-if")
	}

	ctx, stop := interruptContext(st)
	defer stop()

	o := newOutputs(st, paths...)
	defer o.release()

	if err := o.add("--markdown", f.markdown); err != nil {
		return err
	}

	sides, err := analysis.ReadSides(ctx, paths)
	if err != nil {
		return failed("%v", err)
	}

	printUnread(st, sides.Unread)
	printUnread(st, sides.Refused)

	if err := sides.Complete(); err != nil {
		return badInput("%v", err)
	}

	err = sides.Check()
	printWarnings(st, sides.Warnings)

	if err != nil {
		return badInput("%v", err)
	}

	files := sides.Files

	ops := analysis.AddGateRows(files, analysis.CompareOperations(files, judging), gates, judging)

	if err := analysis.CheckOperations(gates, ops); err != nil {
		return badInput("%v", err)
	}

	checks, failures, unjudged := analysis.CheckGates(files, ops, gates)

	report.WriteCompare(st.Stdout, files, ops)
	report.WriteFilesBlock(st.Stdout, files, judging)
	report.WriteCapacityCompare(st.Stdout, files)

	if f.markdown != "" {
		if err := atomicfile.WriteBytes(f.markdown, []byte(report.CompareMarkdown(files, ops, checks))); err != nil {
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

	if f.strict && unjudged > 0 {
		return failed("%d --fail-if check(s) could not be judged (--strict)", unjudged)
	}

	return nil
}
