package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mongobench/mongobench/internal/units"

	"github.com/mongobench/mongobench/internal/atomicfile"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/result"
	vd "github.com/mongobench/mongobench/internal/verdict"
)

// compareAlpha is the significance level of `mongobench compare`.
const compareAlpha = vd.DefaultAlpha

// compareOptions compare the intervals of separate runs: independent
// samples, called intervals in verdicts.
var compareOptions = vd.Options{Alpha: compareAlpha, Design: vd.Unpaired, Unit: "interval"}

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

// compareMetric is a metric compared by `mongobench compare`.
type compareMetric struct {
	name string
	dir  vd.Direction
	// latency metrics have no value in an interval without a success.
	latency bool
	get     func(o *result.Operation) float64
}

var compareMetrics = []compareMetric{
	{"throughput", vd.HigherIsBetter, false, func(o *result.Operation) float64 { return o.OpsPerSec }},
	{"mean", vd.LowerIsBetter, true, func(o *result.Operation) float64 { return o.LatencyUS.Mean }},
	{"p50", vd.LowerIsBetter, true, func(o *result.Operation) float64 { return o.LatencyUS.P50 }},
	{"p90", vd.LowerIsBetter, true, func(o *result.Operation) float64 { return o.LatencyUS.P90 }},
	{"p99", vd.LowerIsBetter, true, func(o *result.Operation) float64 { return o.LatencyUS.P99 }},
}

func compareMetricNamed(name string) (compareMetric, bool) {
	for _, m := range compareMetrics {
		if m.name == name {
			return m, true
		}
	}

	return compareMetric{}, false
}

// compareGate is one parsed --fail-if expression.
type compareGate struct {
	expr      string
	metric    compareMetric
	up        bool    // "+": fail on an increase; "-": on a decrease
	pct       float64 // threshold in percent, ≥ 0
	operation string  // "" for every operation
}

// parseCompareGate parses a --fail-if expression such as "p99 +10%",
// "get:p99.9 +10%" or "throughput -5% find_by_id" (see parseFailIf).
func parseCompareGate(expr string) (compareGate, error) {
	return parseFailIf(expr)
}

// compareFile is one results file being compared.
type compareFile struct {
	label string // A, B, … (A is the baseline)
	path  string
	res   *result.Result
	phase *result.Phase
}

// compareLabel is the short name of the i'th file: A to Z, then F27, F28 and so on.
func compareLabel(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}

	return "F" + strconv.Itoa(i+1)
}

// compareCell is one metric of one operation in one file.
type compareCell struct {
	median  float64
	verdict *vd.Verdict // nil for the baseline and when absent
	text    string      // the verdict column
}

// compareRow is one metric of one operation, across the files.
type compareRow struct {
	metric compareMetric
	cells  []compareCell // one per file
}

// compareOp is the comparison of one operation.
type compareOp struct {
	name string
	rows []compareRow
}

func runCompare(st *State, paths []string, f *compareFlags) error {
	gates := make([]compareGate, 0, len(f.failIf))

	for _, expr := range f.failIf {
		g, err := parseCompareGate(expr)
		if err != nil {
			return badInput("%v", err)
		}

		gates = append(gates, g)
	}

	ctx, stop := interruptContext(st)
	defer stop()

	files, err := readCompareFiles(ctx, st, paths)
	if err != nil {
		return err
	}

	ops := addGateRows(files, compareOperations(files), gates)

	known := map[string]bool{}
	for _, op := range ops {
		known[op.name] = true
	}

	for _, g := range gates {
		if g.operation != "" && !known[g.operation] {
			return badInput("bad --fail-if %q: no operation %q in the files' main phases (they have %s)",
				g.expr, g.operation, strings.Join(compareOpNames(ops), ", "))
		}
	}

	checks, failures := checkCompareGates(files, ops, gates)

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
func readCompareFiles(ctx context.Context, st *State, paths []string) ([]*compareFile, error) {
	files := make([]*compareFile, 0, len(paths))
	bad := 0

	for _, path := range paths {
		res, err := result.Read(ctx, path)
		if ctx.Err() != nil {
			return nil, failed("interrupted while reading %s", path)
		}

		if err == nil && res.Kind() == result.KindMatrix {
			var cells []*compareFile

			if cells, err = matrixCells(path, res, func(i int) string { return compareLabel(len(files) + i) }); err == nil {
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

		files = append(files, &compareFile{label: compareLabel(len(files)), path: path, res: res, phase: res.MainPhase()})
	}

	if bad > 0 {
		return nil, badInput("%d of %d results files could not be read; nothing compared", bad, len(paths))
	}

	for _, cf := range files {
		if errs := cf.res.Check(); len(errs) > 0 {
			fmt.Fprintf(st.Stderr, "Warning: %s (%s) is inconsistent (%d problems), compared anyway; first: %v\n",
				cf.label, cf.path, len(errs), errs[0])
		}

		if cf.res.Status != result.StatusCompleted {
			fmt.Fprintf(st.Stderr, "Warning: %s (%s) is from a run that was %s\n", cf.label, cf.path, cf.res.Status)
		}

		if name, base := cf.res.Workload.Name, files[0].res.Workload.Name; name != base {
			fmt.Fprintf(st.Stderr, "Warning: %s (%s) ran workload %q, the baseline %q\n", cf.label, cf.path, name, base)
		}
	}

	return files, nil
}

// compareOperations compares every operation of the files' main phases, in
// the order they first appear.
func compareOperations(files []*compareFile) []compareOp {
	var names []string

	seen := map[string]bool{}

	for _, cf := range files {
		for _, o := range cf.phase.Operations {
			if !seen[o.Name] {
				seen[o.Name] = true
				names = append(names, o.Name)
			}
		}
	}

	out := make([]compareOp, 0, len(names))

	for _, name := range names {
		op := compareOp{name: name}

		for _, m := range compareMetrics {
			op.rows = append(op.rows, compareMetricRow(files, name, m))
		}

		out = append(out, op)
	}

	return out
}

// compareSamples are a file's samples of one operation's metric: one per
// interval of the main phase (compared unpaired: the k-th interval of one
// run has nothing to do with the k-th of another). Latency metrics skip
// intervals without a successful operation, which measured no latency.
func compareSamples(cf *compareFile, op string, m compareMetric) []vd.Sample {
	var out []vd.Sample

	for i := range cf.phase.Intervals {
		iv := &cf.phase.Intervals[i]

		for j := range iv.Operations {
			o := &iv.Operations[j]
			if o.Name != op || (m.latency && o.Count == 0) {
				continue
			}

			out = append(out, vd.Sample{Variant: cf.label, Round: i, Value: m.get(o)})
		}
	}

	return out
}

func compareMetricRow(files []*compareFile, op string, m compareMetric) compareRow {
	var samples []vd.Sample
	for _, cf := range files {
		samples = append(samples, compareSamples(cf, op, m)...)
	}

	byLabel := map[string]vd.Verdict{}
	for _, v := range vd.CompareTo(samples, files[0].label, m.dir, compareOptions) {
		byLabel[v.Variant] = v
	}

	row := compareRow{metric: m, cells: make([]compareCell, len(files))}
	_, haveBase := byLabel[files[0].label]

	for i, cf := range files {
		v, ok := byLabel[cf.label]

		switch {
		case !ok:
			row.cells[i] = compareCell{median: math.NaN(), text: "no data"}
		case i == 0:
			row.cells[i] = compareCell{median: v.Median}
		case !haveBase:
			row.cells[i] = compareCell{median: v.Median, text: "no baseline data"}
		default:
			row.cells[i] = compareCell{median: v.Median, verdict: &v, text: v.Text}
		}
	}

	return row
}

func compareOpNames(ops []compareOp) []string {
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.name
	}

	return names
}

// compareValue formats a metric's value: ops/s, or a latency in µs.
func compareValue(m compareMetric, v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case m.name == "error_rate":
		return fmt.Sprintf("%.3g%%", v)
	case !m.latency && v >= 100:
		return fmt.Sprintf("%.0f ops/s", v)
	case !m.latency:
		return fmt.Sprintf("%.3g ops/s", v)
	default:
		return units.Micros(v)
	}
}

// compareHeader is the column header of an operation's table.
func compareHeader(files []*compareFile) []string {
	h := []string{"metric", files[0].label + " (baseline)"}
	for _, cf := range files[1:] {
		h = append(h, cf.label, cf.label+" vs "+files[0].label)
	}

	return h
}

// compareNumberColumn reports whether column i of a table holds values
// (right-aligned) rather than words: the baseline and every other file's
// value, not the metric or verdict columns.
func compareNumberColumn(i int) bool {
	return i == 1 || (i >= 2 && i%2 == 0)
}

// compareTableRows are the rows of an operation's table.
func compareTableRows(files []*compareFile, op compareOp) [][]string {
	var rows [][]string

	for _, r := range op.rows {
		row := []string{r.metric.name, compareValue(r.metric, r.cells[0].median)}
		for i := 1; i < len(files); i++ {
			row = append(row, compareValue(r.metric, r.cells[i].median), r.cells[i].text)
		}

		rows = append(rows, row)
	}

	return rows
}

// compareNote explains how the numbers were formed.
func compareNote(files []*compareFile) string {
	return fmt.Sprintf(`Values are medians over the intervals of each file's main phase. Verdicts compare
each file's intervals with %s's: the ratio (Hodges-Lehmann) with its %g%%
confidence interval from the Mann-Whitney U test; a difference when the interval
excludes 1, inconclusive below %d intervals a side. Intervals within a run are
not independent, so confidence intervals are optimistic (too narrow): repeat
runs before trusting a small difference.`, files[0].label, 100*(1-compareAlpha), vd.MinSamples(vd.Unpaired, compareAlpha))
}

func compareLegend(cf *compareFile, baseline bool) string {
	s := fmt.Sprintf("%s  %s  (workload %q, phase %q, %d intervals, started %s)",
		cf.label, cf.path, cf.res.Workload.Name, cf.phase.Name, len(cf.phase.Intervals),
		cf.res.StartedAt.UTC().Format("2006-01-02 15:04:05Z"))
	if baseline {
		s += "  baseline"
	}

	return s
}

// writeCompareText prints the comparison as plain-text tables.
func writeCompareText(w io.Writer, files []*compareFile, ops []compareOp) {
	fmt.Fprintln(w, "Results files:")

	for i, cf := range files {
		fmt.Fprintf(w, "  %s\n", compareLegend(cf, i == 0))
	}

	for _, op := range ops {
		fmt.Fprintf(w, "\n%s\n", op.name)

		header := compareHeader(files)
		rows := compareTableRows(files, op)
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

				if compareNumberColumn(i) {
					b.WriteString(strings.Repeat(" ", pad) + c)
				} else {
					b.WriteString(c + strings.Repeat(" ", pad))
				}

				b.WriteString(" ")
			}

			fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		}
	}

	fmt.Fprintf(w, "\n%s\n", compareNote(files))
}

// compareMarkdown renders the comparison as Markdown.
func compareMarkdown(files []*compareFile, ops []compareOp, checks []string) string {
	var b strings.Builder

	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

	b.WriteString("# mongobench compare\n\n")

	for i, cf := range files {
		fmt.Fprintf(&b, "- %s\n", cell(strings.ReplaceAll(compareLegend(cf, i == 0), "  ", " ")))
	}

	for _, op := range ops {
		fmt.Fprintf(&b, "\n## %s\n\n", cell(op.name))

		header := compareHeader(files)
		b.WriteString("|")

		for _, h := range header {
			b.WriteString(" " + cell(h) + " |")
		}

		b.WriteString("\n|")

		for i := range header {
			if compareNumberColumn(i) {
				b.WriteString(" ---: |")
			} else {
				b.WriteString(" --- |")
			}
		}

		b.WriteString("\n")

		for _, r := range compareTableRows(files, op) {
			b.WriteString("|")

			for _, c := range r {
				b.WriteString(" " + cell(c) + " |")
			}

			b.WriteString("\n")
		}
	}

	b.WriteString("\n" + strings.ReplaceAll(compareNote(files), "\n", " ") + "\n")

	if len(checks) > 0 {
		b.WriteString("\n## Checks\n\n")

		for _, c := range checks {
			fmt.Fprintf(&b, "- `%s`\n", strings.ReplaceAll(c, "`", "'"))
		}
	}

	return b.String()
}

// writeCompareMarkdown writes the Markdown comparison to path atomically.
func writeCompareMarkdown(path string, files []*compareFile, ops []compareOp, checks []string) error {
	return atomicfile.WriteBytes(path, []byte(compareMarkdown(files, ops, checks)))
}

// checkCompareGates evaluates the --fail-if expressions. It returns a line
// per failure, per comparison too weak to judge and per passed expression,
// and the number of failures.
func checkCompareGates(files []*compareFile, ops []compareOp, gates []compareGate) (lines []string, failures int) {
	for _, g := range gates {
		fails := 0

		for _, op := range ops {
			if g.operation != "" && op.name != g.operation {
				continue
			}

			var row *compareRow

			for i := range op.rows {
				if op.rows[i].metric.name == g.metric.name {
					row = &op.rows[i]
				}
			}

			for i := 1; row != nil && i < len(files); i++ {
				c := row.cells[i]
				if c.verdict == nil {
					continue
				}

				v := c.verdict
				if v.Kind == vd.Inconclusive {
					lines = append(lines, fmt.Sprintf("Warning: --fail-if %q: %s, %s vs %s: %s; not judged",
						g.expr, op.name, files[i].label, files[0].label, v.Text))

					continue
				}

				// The relative change of the metric's own value: Ratio is
				// worse/baseline, so value/baseline is Ratio for latencies
				// and 1/Ratio for throughput.
				rel := v.Ratio
				if g.metric.dir == vd.HigherIsBetter {
					rel = 1 / v.Ratio
				}

				change := 100 * (rel - 1)
				significant := v.Kind == vd.Difference
				exceeds := (g.up && change > g.pct) || (!g.up && change < -g.pct)

				if !significant || !exceeds || math.IsNaN(change) {
					continue
				}

				fails++

				lines = append(lines, fmt.Sprintf("FAIL --fail-if %q: %s: %s (%s) %s %s → %s: %+.1f%%, %s (%s)",
					g.expr, op.name, files[i].label, files[i].path, g.metric.name,
					compareValue(g.metric, row.cells[0].median), compareValue(g.metric, c.median),
					change, v.Text, compareP(v.P)))
			}
		}

		if fails == 0 {
			lines = append(lines, fmt.Sprintf("ok   --fail-if %q", g.expr))
		}

		failures += fails
	}

	return lines, failures
}

// compareP formats a p-value: "p=0.012", "p<0.001".
func compareP(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}

	return "p=" + strconv.FormatFloat(p, 'f', 3, 64)
}
