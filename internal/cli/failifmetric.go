package cli

import (
	"fmt"
	"math"
	"strings"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/result"
	"github.com/mongobench/mongobench/internal/threshold"
	vd "github.com/mongobench/mongobench/internal/verdict"
)

// parseFailIf reads a --fail-if expression in the grammar of package
// threshold: any percentile, mean, max, throughput or error_rate, with an
// optional operation ("get:p99.9 +10%", or the older "p50 +5% get").
func parseFailIf(expr string) (compareGate, error) {
	c, err := threshold.ParseChange(expr)
	if err != nil {
		return compareGate{}, fmt.Errorf("bad --fail-if %q: %v", expr, err)
	}

	return compareGate{expr: strings.TrimSpace(expr), metric: gateMetric(c.Metric), up: c.Up, pct: c.Percent, operation: c.Operation}, nil
}

// gateMetric is the compare metric of m: one of the table's own, or one
// computed per interval from the interval's histogram and counts.
func gateMetric(m threshold.Metric) compareMetric {
	if cm, ok := compareMetricNamed(m.String()); ok {
		return cm
	}

	dir := vd.LowerIsBetter
	if !m.HigherIsWorse() {
		dir = vd.HigherIsBetter
	}

	return compareMetric{name: m.String(), dir: dir, latency: m.Latency(), get: func(o *result.Operation) float64 {
		v, ok := analysis.MetricValue(*o, 0, m)
		if !ok {
			return math.NaN() // no value: left out of the samples
		}

		return v
	}}
}

// addGateRows adds to each operation the rows of gated metrics the table
// does not show by default (p99.9, max, error_rate, ...), so that the gate
// judges, and the reader sees, the same verdict.
func addGateRows(files []*compareFile, ops []compareOp, gates []compareGate) []compareOp {
	for i := range ops {
		for _, g := range gates {
			if g.operation != "" && g.operation != ops[i].name {
				continue
			}

			have := false
			for _, r := range ops[i].rows {
				have = have || r.metric.name == g.metric.name
			}

			if !have {
				ops[i].rows = append(ops[i].rows, compareMetricRow(files, ops[i].name, g.metric))
			}
		}
	}

	return ops
}
