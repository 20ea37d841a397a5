package analysis

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/mongobench/mongobench/internal/result"
	"github.com/mongobench/mongobench/internal/units"
	vd "github.com/mongobench/mongobench/internal/verdict"
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

var gateRe = regexp.MustCompile(`^\s*([A-Za-z0-9]+)\s*([+-])\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*%(?:\s+(\S+))?\s*$`)

// ParseGate parses a --fail-if expression such as "p99 +10%" or
// "throughput -5% find_by_id".
func ParseGate(expr string) (Gate, error) {
	var names []string
	for _, m := range CompareMetrics {
		names = append(names, m.Name)
	}

	usage := fmt.Sprintf("want METRIC +N%% or METRIC -N%%, optionally followed by an operation name, with METRIC one of %s",
		strings.Join(names, ", "))

	m := gateRe.FindStringSubmatch(expr)
	if m == nil {
		return Gate{}, fmt.Errorf("bad --fail-if %q: %s", expr, usage)
	}

	metric, ok := compareMetricNamed(strings.ToLower(m[1]))
	if !ok {
		return Gate{}, fmt.Errorf("bad --fail-if %q: unknown metric %q; %s", expr, m[1], usage)
	}

	pct, err := strconv.ParseFloat(m[3], 64)
	if err != nil || math.IsInf(pct, 0) {
		return Gate{}, fmt.Errorf("bad --fail-if %q: bad percentage %q", expr, m[3])
	}

	return Gate{Expr: strings.TrimSpace(expr), Metric: metric, Up: m[2] == "+", Pct: pct, Operation: m[4]}, nil
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
// failure, per comparison too weak to judge and per passed expression, and
// the number of failures.
func CheckGates(files []*File, ops []CompareOp, gates []Gate) (lines []string, failures int) {
	for _, g := range gates {
		fails := 0

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
					lines = append(lines, fmt.Sprintf("Warning: --fail-if %q: %s, %s vs %s: %s; not judged",
						g.Expr, op.Name, files[i].Label, files[0].Label, v.Text))

					continue
				}

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

		if fails == 0 {
			lines = append(lines, fmt.Sprintf("ok   --fail-if %q", g.Expr))
		}

		failures += fails
	}

	return lines, failures
}

// FormatValue formats a metric's value: ops/s, or a latency in µs.
func FormatValue(m CompareMetric, v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
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
