package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mongobench/mongobench/internal/base/units"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/threshold"
	vd "github.com/mongobench/mongobench/internal/stats/verdict"
)

// CompareMetric is a metric compared by `mongobench compare`.
type CompareMetric struct {
	Name string
	Dir  vd.Direction
	// Latency metrics have no value in an interval without a success.
	Latency bool
	Get     func(o *result.Operation) float64
}

// CompareMetrics are the metrics `mongobench compare` compares, in the
// order of its tables' rows.
var CompareMetrics = []CompareMetric{
	{"throughput", vd.HigherIsBetter, false, func(o *result.Operation) float64 { return o.OpsPerSec }},
	{"mean", vd.LowerIsBetter, true, func(o *result.Operation) float64 { return o.LatencyUS.Mean }},
	{"p50", vd.LowerIsBetter, true, func(o *result.Operation) float64 { return o.LatencyUS.P50 }},
	{"p90", vd.LowerIsBetter, true, func(o *result.Operation) float64 { return o.LatencyUS.P90 }},
	{"p99", vd.LowerIsBetter, true, func(o *result.Operation) float64 { return o.LatencyUS.P99 }},
}

func compareMetricNamed(name string) (CompareMetric, bool) {
	for _, m := range CompareMetrics {
		if m.Name == name {
			return m, true
		}
	}

	return CompareMetric{}, false
}

// Gate is one parsed --fail-if expression.
type Gate struct {
	Expr      string
	Metric    CompareMetric
	Up        bool    // "+": fail on an increase; "-": on a decrease
	Pct       float64 // threshold in percent, ≥ 0
	Operation string  // "" for every operation
}

// ParseGate parses a --fail-if expression in the grammar of package
// threshold: [OPERATION:]METRIC followed by a signed percentage, with METRIC
// any percentile, mean, max, throughput or error_rate ("get:p99.9 +10%",
// "throughput -5%", or the older "p50 +5% get").
func ParseGate(expr string) (Gate, error) {
	c, err := threshold.ParseChange(expr)
	if err != nil {
		return Gate{}, fmt.Errorf("bad --fail-if %q: %w", expr, err)
	}

	return Gate{Expr: strings.TrimSpace(expr), Metric: gateMetric(c.Metric), Up: c.Up, Pct: c.Percent, Operation: c.Operation}, nil
}

// gateMetric is the compare metric of m: one of the table's own, or one
// computed per interval from the interval's histogram and counts.
func gateMetric(m threshold.Metric) CompareMetric {
	if cm, ok := compareMetricNamed(m.String()); ok {
		return cm
	}

	dir := vd.LowerIsBetter
	if !m.HigherIsWorse() {
		dir = vd.HigherIsBetter
	}

	return CompareMetric{Name: m.String(), Dir: dir, Latency: m.Latency(), Get: func(o *result.Operation) float64 {
		v, ok := MetricValue(*o, 0, m)
		if !ok {
			return math.NaN() // no value: left out of the samples
		}

		return v
	}}
}

// AddGateRows adds to each operation the rows of gated metrics the table
// does not show by default (p99.9, max, error_rate, ...), so that the gate
// judges, and the reader sees, the same verdict.
func AddGateRows(files []*File, ops []CompareOp, gates []Gate, j Judging) []CompareOp {
	for i := range ops {
		for _, g := range gates {
			if g.Operation != "" && g.Operation != ops[i].Name {
				continue
			}

			have := false
			for _, r := range ops[i].Rows {
				have = have || r.Metric.Name == g.Metric.Name
			}

			if !have {
				ops[i].Rows = append(ops[i].Rows, compareMetricRow(files, ops[i].Name, g.Metric, j))
			}
		}
	}

	return ops
}

// CheckOperations returns an error for the first gate that names an
// operation none of ops has.
func CheckOperations(gates []Gate, ops []CompareOp) error {
	known := map[string]bool{}
	for _, op := range ops {
		known[op.Name] = true
	}

	for _, g := range gates {
		if g.Operation != "" && !known[g.Operation] {
			return fmt.Errorf("bad --fail-if %q: no operation %q in the files' main phases (they have %s)",
				g.Expr, g.Operation, strings.Join(OpNames(ops), ", "))
		}
	}

	return nil
}

// CheckGates evaluates the --fail-if expressions. It returns a line per
// failure, per comparison too weak to judge and per passed expression, the
// number of failures and the number of comparisons it could not judge.
//
// The rule: a gate fails when the change's point estimate (the
// Hodges-Lehmann ratio of the runs) is beyond the gate's percentage in the
// worse direction and the verdict is a difference (its 95% interval
// excludes no change, and the change is at least the minimum effect). With
// fewer than CompareMinRuns runs a side nothing can be established, and
// the first lines say so.
func CheckGates(files []*File, ops []CompareOp, gates []Gate) (lines []string, failures, unjudged int) {
	if len(gates) > 0 {
		fewest := len(files[0].RunPhases())
		for _, f := range files[1:] {
			fewest = min(fewest, len(f.RunPhases()))
		}

		if fewest < CompareMinRuns {
			lines = append(lines, fmt.Sprintf("Note: --fail-if with %s a side can establish nothing: a run is one observation of the machine's state, "+
				"and the drift between runs (a busy neighbour, a warm cache) cannot be told from a change in the code. "+
				"Give each side %d runs or more, as a directory or a comma-separated list of results files.",
				plural(fewest, "run"), CompareMinRuns))
		}
	}

	for _, g := range gates {
		fails, judged := 0, 0

		for _, op := range ops {
			if g.Operation != "" && op.Name != g.Operation {
				continue
			}

			var row *CompareRow

			for i := range op.Rows {
				if op.Rows[i].Metric.Name == g.Metric.Name {
					row = &op.Rows[i]
				}
			}

			for i := 1; row != nil && i < len(files); i++ {
				c := row.Cells[i]
				if c.Verdict == nil {
					continue
				}

				v := c.Verdict
				if v.Kind == vd.Inconclusive {
					unjudged++

					lines = append(lines, fmt.Sprintf("Warning: --fail-if %q: %s, %s vs %s: %s; not judged",
						g.Expr, op.Name, files[i].Label, files[0].Label, v.Text))

					continue
				}

				judged++

				// The relative change of the metric's own value: Ratio is
				// worse/baseline, so value/baseline is Ratio for latencies
				// and 1/Ratio for throughput.
				rel := v.Ratio
				if g.Metric.Dir == vd.HigherIsBetter {
					rel = 1 / v.Ratio
				}

				change := 100 * (rel - 1)
				significant := v.Kind == vd.Difference
				exceeds := (g.Up && change > g.Pct) || (!g.Up && change < -g.Pct)

				if !significant || !exceeds || math.IsNaN(change) {
					continue
				}

				fails++

				lines = append(lines, fmt.Sprintf("FAIL --fail-if %q: %s: %s (%s) %s %s → %s: %+.1f%%, %s (%s)",
					g.Expr, op.Name, files[i].Label, files[i].Path, g.Metric.Name,
					FormatValue(g.Metric, row.Cells[0].Median), FormatValue(g.Metric, c.Median),
					change, v.Text, formatP(v.P)))
			}
		}

		switch {
		case fails == 0 && judged == 0:
			lines = append(lines, fmt.Sprintf("--   --fail-if %q: not judged (nothing could be compared at 95%%)", g.Expr))
		case fails == 0:
			lines = append(lines, fmt.Sprintf("ok   --fail-if %q", g.Expr))
		}

		failures += fails
	}

	return lines, failures, unjudged
}

// plural says "1 run", "3 runs".
func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}

	return strconv.Itoa(n) + " " + unit + "s"
}

// FormatValue formats a metric's value: ops/s, or a latency in µs.
func FormatValue(m CompareMetric, v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case m.Name == "error_rate":
		return fmt.Sprintf("%.3g%%", v)
	case !m.Latency && v >= 100:
		return fmt.Sprintf("%.0f ops/s", v)
	case !m.Latency:
		return fmt.Sprintf("%.3g ops/s", v)
	default:
		return units.Micros(v)
	}
}

// formatP formats a p-value: "p=0.012", "p<0.001".
func formatP(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}

	return "p=" + strconv.FormatFloat(p, 'f', 3, 64)
}
