package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/analysis/history"
	"github.com/mongobench/mongobench/internal/base/atomicfile"
	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/report"
	"github.com/mongobench/mongobench/internal/stats/threshold"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// ExitRegression is the exit code of history --fail-on-regression when the
// newest runs start a significant change for the worse. It differs from
// compare's 1 and a threshold's 99 so that CI can tell "the history found
// a regression" from a broken run or a failed gate of one run.
const ExitRegression = 3

// historyFlags are the options of `mongobench history`.
type historyFlags struct {
	json         string
	html         string
	failOn       []string
	alpha        float64
	permutations int
	minSize      int
	recent       int
	seed         uint64
	store        string
	storeDB      string
}

func newHistoryCommand(st *State) *cobra.Command {
	var f historyFlags

	c := &cobra.Command{
		Use:   "history [PATH... | --store URI]",
		Short: "Find the runs where performance changed in a series of results files",
		Long: `history reads results files (files, or directories of them; results/ by
default) and groups the runs into series: the same workload with the same
parameters and concurrency, on the same kind of target, through the same client
stack. In each series, in the order the runs started, every operation has one
point per run for throughput, mean, p50, p90, p95, p99, p99.9 and error rate,
the whole main phase's value (latencies from its merged histogram).

Each metric's points are searched for change points with E-Divisive means and
a permutation test (docs/history.md): a change point is the first run of a new
level that has held for at least --min-size runs. Each is printed with its run
(file and run --label), the levels before and after (medians), their ratio with
its 95% confidence interval, and the test's p-value. A table per series then
shows each operation's latest level against the previous one, and the last
line says whether anything changed within the newest --recent runs.

--html FILE writes a page drawing each series (p50, p95, p99 and throughput
over the runs, change points marked, each level's spread shaded).

--fail-on-regression 'EXPR' (the grammar of compare --fail-if: [OPERATION:]METRIC
+N% or -N%) exits with code 3 when the selected metric's last change point is
in the direction EXPR names, by more than N%, and starts within the newest
--recent runs; it says which run it starts at and what the previous level was.
'max_rate -N%' does so for the maximum sustainable rate of capacity results,
which make series of their own (one per workload and objectives).

--store URI reads the runs from a history store shared in a MongoDB database
instead of files ('mongobench history import --store URI PATH...' fills it;
docs/history.md, "Shared store").

Exit codes: 0 no regression found; 3 a --fail-on-regression condition
failed; 2 bad input (a flag, a file named that is not a results file); 1
interrupted.`,
		Example: `  mongobench history
  mongobench history results/nightly/ --json history.json --html history.html
  mongobench history results/ --fail-on-regression 'p99 +10%' --fail-on-regression 'throughput -10%'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHistory(cmd, st, args, &f)
		},
	}

	fl := c.Flags()
	fl.StringVar(&f.json, "json", "", "also write the series and change points as JSON to this file (- for standard output; the table then goes to standard error)")
	fl.StringVar(&f.html, "html", "", "also write an HTML page drawing each series over its runs, with its change points, to this file")
	fl.StringArrayVar(&f.failOn, "fail-on-regression", nil,
		"exit 3 when the newest runs start a significant change beyond EXPR ([OPERATION:]METRIC +N% or -N%, as compare --fail-if; max_rate -N% for capacity results), repeatable")
	fl.Float64Var(&f.alpha, "alpha", history.DefaultAlpha, "significance level of the permutation test")
	fl.IntVar(&f.permutations, "permutations", history.DefaultPermutations, "shuffles of the permutation test")
	fl.IntVar(&f.minSize, "min-size", history.DefaultMinSize, "fewest runs on each side of a change point (at least 2)")
	fl.IntVar(&f.recent, "recent", 0, "a regression fails only when it starts within the newest N runs (default twice --min-size)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the permutation test's shuffles")
	fl.StringVar(&f.store, "store", "", "read the runs from the history store in this MongoDB database (see history import) instead of files")
	fl.StringVar(&f.storeDB, "store-db", "", "the store's database, when the --store URI names none (default mongobench_history)")
	c.AddCommand(newHistoryImportCommand(st))

	return c
}

func runHistory(cmd *cobra.Command, st *State, args []string, f *historyFlags) error {
	ctx, stop := interruptContext(st)
	defer stop()

	switch {
	case !(f.alpha > 0 && f.alpha < 1):
		return badInput("--alpha %v: want a level between 0 and 1, e.g. 0.05", f.alpha)
	case f.permutations < 19:
		return badInput("--permutations %d: want at least 19 (fewer cannot reach p = 0.05)", f.permutations)
	case f.minSize < 2:
		return badInput("--min-size %d: want at least 2", f.minSize)
	case cmd.Flags().Changed("recent") && f.recent < 1:
		return badInput("--recent %d: want at least 1", f.recent)
	}

	if f.recent == 0 {
		f.recent = 2 * f.minSize
	}

	var (
		gates []history.Gate
		extra []threshold.Metric
	)

	for _, expr := range f.failOn {
		g, err := history.ParseGate(expr)
		if err != nil {
			return badInput("bad --fail-on-regression %q: %v", expr, err)
		}

		gates = append(gates, g)

		if !g.Capacity {
			extra = append(extra, g.Metric)
		}
	}

	src, closeSrc, err := historySource(ctx, args, f.store, f.storeDB)
	if err != nil {
		return err
	}

	defer closeSrc()

	runs, skipped, err := history.Load(ctx, src)

	switch {
	case ctx.Err() != nil:
		return failed("interrupted while reading results files")
	case err != nil && f.store != "":
		return failed("%s", redact.Error(err, f.store))
	case err != nil:
		return badInput("%v", err)
	}

	opts := history.Options{Alpha: f.alpha, Permutations: f.permutations, MinSize: f.minSize, Seed: f.seed}
	series := history.Build(runs, extra, opts)

	table := st.Stdout
	if f.json == "-" { // standard output is the JSON's
		table = st.Stderr
	}

	printHistory(table, series, skipped, f.alpha, f.minSize)
	report.WriteHistoryTables(table, series, f.alpha, f.recent)

	if f.json != "" {
		if err := writeHistoryJSON(st, f.json, series, skipped, opts); err != nil {
			return err
		}
	}

	if f.html != "" {
		if err := (report.HistoryOptions{Alpha: f.alpha, MinSize: f.minSize}).WriteFile(f.html, series); err != nil {
			return failed("writing --html: %v", err)
		}
	}

	failedAny := false

	for i, g := range gates {
		regs, err := history.Regressions(series, g, f.recent)
		if errors.Is(err, history.ErrNoSuchMetric) {
			return badInput("--fail-on-regression %q: %v", f.failOn[i], err)
		}

		for _, r := range regs {
			failedAny = true
			c := r.Change
			m := r.Metric.Threshold()
			fmt.Fprintf(st.Stderr, "Regression (--fail-on-regression %q): %s %s:%s changed at %s: %s, previously %s (%s, p = %.3f)\n",
				f.failOn[i], r.Series.Workload, r.Metric.Operation, r.Metric.Metric, runName(series, r),
				m.Format(c.After), m.Format(c.Before), ratioText(c, f.alpha), c.P)
		}
	}

	if failedAny {
		return &exitError{code: ExitRegression}
	}

	return nil
}

// runName is the run a regression starts at, with its label.
func runName(series []history.Series, r history.Regression) string {
	for _, s := range series {
		if s.Key == r.Series {
			return s.Runs[r.Change.Run].Name()
		}
	}

	return r.Change.File
}

// ratioText is "×1.52, 95% CI 1.48×–1.56×".
func ratioText(c history.Change, alpha float64) string {
	if math.IsNaN(c.Ratio) {
		return "ratio n/a"
	}

	return fmt.Sprintf("×%s, %.0f%% CI %s", strings.TrimSuffix(verdict.FormatRatio(c.Ratio), "×"), 100*(1-alpha),
		verdict.FormatInterval(c.RatioLo, c.RatioHi))
}

// printHistory prints each series and its metrics' change points.
func printHistory(w io.Writer, series []history.Series, skipped []history.Skipped, alpha float64, minSize int) {
	if len(series) == 0 {
		fmt.Fprintln(w, "No runs to make a history of.")
	}

	for i, s := range series {
		if i > 0 {
			fmt.Fprintln(w)
		}

		first, last := s.Runs[0], s.Runs[len(s.Runs)-1]
		fmt.Fprintf(w, "%s: %d runs, %s … %s\n", s.Key, len(s.Runs), first.Name(), last.Name())

		quiet := 0

		for _, mt := range s.Metrics {
			printCapacityRuns(w, s, mt)

			if len(mt.Changes) == 0 {
				quiet++
				continue
			}

			m := mt.Threshold()
			fmt.Fprintf(w, "  %s %s:\n", mt.Operation, mt.Metric)

			for _, c := range mt.Changes {
				dir := "better"
				if c.Worse {
					dir = "worse"
				}

				fmt.Fprintf(w, "    from run %d, %s: %s → %s, %s, p = %.3f, %s\n",
					c.Run+1, s.Runs[c.Run].Name(), m.Format(c.Before), m.Format(c.After), ratioText(c, alpha), c.P, dir)
			}
		}

		if len(s.Runs) < 2*minSize {
			fmt.Fprintf(w, "  too few runs to find a change point: %d, at least %d needed (--min-size %d a side)\n",
				len(s.Runs), 2*minSize, minSize)

			continue
		}

		if quiet == len(s.Metrics) {
			fmt.Fprintf(w, "  no change point in %d metrics\n", quiet)
		} else if quiet > 0 {
			fmt.Fprintf(w, "  no change point in the other %d metrics\n", quiet)
		}
	}

	for _, sk := range skipped {
		fmt.Fprintf(w, "Skipped %s: %s\n", sk.File, sk.Reason)
	}
}

// printCapacityRuns lists a capacity series' maximum sustainable rate run
// by run with its interval: a search is a long measurement, so a history
// of them is short enough to show whole.
func printCapacityRuns(w io.Writer, s history.Series, mt history.Metric) {
	if mt.Metric != history.MaxRate {
		return
	}

	fmt.Fprintf(w, "  max sustainable rate (%s) per run:\n", strings.Join(capacitySLO(s), " and "))

	for i, v := range mt.Values {
		switch lo, hi := float64(mt.Low[i]), float64(mt.High[i]); {
		case math.IsNaN(float64(v)):
			fmt.Fprintf(w, "    %d. %s: none (no rate confirmed, or the client was the limit)\n", i+1, s.Runs[i].Name())
		case math.IsNaN(lo) || math.IsNaN(hi):
			fmt.Fprintf(w, "    %d. %s: %.1f ops/s\n", i+1, s.Runs[i].Name(), float64(v))
		default:
			fmt.Fprintf(w, "    %d. %s: %.1f ops/s (95%% CI %.1f–%.1f)\n", i+1, s.Runs[i].Name(), float64(v), lo, hi)
		}
	}
}

// capacitySLO is the objectives a capacity series searched against (the
// same for every run: they are part of its key).
func capacitySLO(s history.Series) []string {
	if len(s.Runs) == 0 {
		return nil
	}

	return s.Runs[0].SLO
}

// historyJSON is the document --json writes.
type historyJSON struct {
	Alpha        float64           `json:"alpha"`
	Permutations int               `json:"permutations"`
	MinSize      int               `json:"min_size"`
	Seed         uint64            `json:"seed"`
	Series       []history.Series  `json:"series"`
	Skipped      []history.Skipped `json:"skipped"`
}

func writeHistoryJSON(st *State, path string, series []history.Series, skipped []history.Skipped, o history.Options) error {
	doc := historyJSON{
		Alpha: o.Alpha, Permutations: o.Permutations, MinSize: o.MinSize, Seed: o.Seed,
		Series: series, Skipped: skipped,
	}
	if doc.Series == nil {
		doc.Series = []history.Series{}
	}

	if doc.Skipped == nil {
		doc.Skipped = []history.Skipped{}
	}

	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return failed("writing --json: %v", err)
	}

	data = append(data, '\n')

	if path == "-" {
		_, err = st.Stdout.Write(data)
	} else {
		err = atomicfile.WriteBytes(path, data)
	}

	if err != nil {
		return failed("writing --json %s: %v", path, err)
	}

	return nil
}

// ciCommit is the commit id the CI system gives the job in its
// environment (GitHub Actions, GitLab CI, Buildkite, CircleCI, Jenkins'
// Git plugin, Travis CI), or "" outside CI. Only a hexadecimal value is
// taken, so that nothing but a commit id is ever written to the file.
func ciCommit(getenv func(string) string) string {
	for _, name := range []string{"GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT", "CIRCLE_SHA1", "GIT_COMMIT", "TRAVIS_COMMIT"} {
		v := strings.TrimSpace(getenv(name))
		if len(v) >= 7 && len(v) <= 64 && strings.Trim(strings.ToLower(v), "0123456789abcdef") == "" {
			return strings.ToLower(v)
		}
	}

	return ""
}

// checkLabel refuses a --label that would garble a line of output.
func checkLabel(label string) error {
	if len(label) > 200 {
		return badInput("--label: %d bytes; want at most 200", len(label))
	}

	if strings.ContainsFunc(label, unicode.IsControl) {
		return badInput("--label %q: control characters are not allowed", label)
	}

	return nil
}
