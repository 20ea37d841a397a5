// Package threshold is the grammar of performance conditions shared by the
// workload file (thresholds: "p99 < 20ms") and the regression gate of
// compare (--fail-if "get:p99.9 +10%"): which metrics exist, how they are
// written, in which units their limits are given and how measured values
// are shown. It parses text into typed values and knows nothing of results
// files, so that both the workload validator and the analysis package can
// import it without a cycle; evaluation lives in package analysis.
package threshold

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mongobench/mongobench/internal/base/units"
)

// Kind is the kind of a metric.
type Kind int

const (
	// Percentile is a latency percentile, "p50" to "p99.999".
	Percentile Kind = iota
	// Mean is the mean latency.
	Mean
	// Max is the highest latency.
	Max
	// Throughput is successful operations per second.
	Throughput
	// ErrorRate is the share of operations that failed, in percent.
	ErrorRate
)

// Metric is one measurable figure of an operation.
type Metric struct {
	Kind Kind
	// Percent is the percentile of a Percentile metric, in (0, 100]: 99.9
	// for "p99.9".
	Percent float64
}

// MetricNames lists the metric forms for messages.
const MetricNames = "pNN (any percentile, e.g. p50, p99.9), mean, max, throughput, error_rate"

// ParseMetric reads a metric name: "p50", "p99.99", "mean", "max",
// "throughput" or "error_rate" (case-insensitive).
func ParseMetric(s string) (Metric, error) {
	name := strings.ToLower(strings.TrimSpace(s))

	switch name {
	case "mean":
		return Metric{Kind: Mean}, nil
	case "max":
		return Metric{Kind: Max}, nil
	case "throughput":
		return Metric{Kind: Throughput}, nil
	case "error_rate":
		return Metric{Kind: ErrorRate}, nil
	}

	if rest, ok := strings.CutPrefix(name, "p"); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
		p, err := strconv.ParseFloat(rest, 64)
		if err != nil || !(p > 0 && p <= 100) {
			return Metric{}, fmt.Errorf("bad percentile %q: want p followed by a number above 0 and at most 100, e.g. p99.9", strings.TrimSpace(s))
		}

		return Metric{Kind: Percentile, Percent: p}, nil
	}

	return Metric{}, fmt.Errorf("unknown metric %q: want one of %s", strings.TrimSpace(s), MetricNames)
}

// String is the metric's name as written: "p99.9", "mean", "throughput".
func (m Metric) String() string {
	switch m.Kind {
	case Percentile:
		return "p" + strconv.FormatFloat(m.Percent, 'f', -1, 64)
	case Mean:
		return "mean"
	case Max:
		return "max"
	case Throughput:
		return "throughput"
	case ErrorRate:
		return "error_rate"
	}

	return fmt.Sprintf("Metric(%d)", int(m.Kind))
}

// Latency reports whether the metric is a latency in microseconds.
func (m Metric) Latency() bool {
	return m.Kind == Percentile || m.Kind == Mean || m.Kind == Max
}

// HigherIsWorse reports whether a larger value is worse: true for
// latencies and the error rate, false for throughput.
func (m Metric) HigherIsWorse() bool { return m.Kind != Throughput }

// Format shows a measured value of the metric as the summary tables do:
// latencies (microseconds) as "850µs", "12.30ms" or "1.25s", throughput as
// "312.4/s", the error rate as "0.05%".
func (m Metric) Format(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case m.Latency():
		return units.Micros(v)
	case m.Kind == Throughput:
		return strconv.FormatFloat(v, 'f', 1, 64) + "/s"
	default:
		return strconv.FormatFloat(round3(v), 'f', -1, 64) + "%"
	}
}

// formatLimit shows a condition's limit as written, in the largest unit
// that keeps it at or above 1: "20ms", "1.5s", "12.345ms", "500/s", "0.1%".
func (m Metric) formatLimit(v float64) string {
	exact := func(x float64) string {
		// Nine decimals undo the float error of a unit conversion
		// (0.1 ms is 100.00000000000001 µs) and keep what was written.
		if x < 1e9 {
			x = math.Round(x*1e9) / 1e9
		}

		return strconv.FormatFloat(x, 'f', -1, 64)
	}

	switch {
	case m.Latency() && v >= 1e6:
		return exact(v/1e6) + "s"
	case m.Latency() && v >= 1e3:
		return exact(v/1e3) + "ms"
	case m.Latency():
		return exact(v) + "µs"
	case m.Kind == Throughput:
		return exact(v) + "/s"
	default:
		return exact(v) + "%"
	}
}

// FormatLatency shows microseconds with at most three significant digits
// in the largest unit that keeps the value at or above 1: "850µs", "12.3ms",
// "1.25s", "20ms"; for limits, sums and costs, where the tables' fixed
// decimals would mislead.
func FormatLatency(us float64) string {
	switch {
	case us < 1000:
		return strconv.FormatFloat(round3(us), 'f', -1, 64) + "µs"
	case us < 1e6:
		return strconv.FormatFloat(round3(us/1e3), 'f', -1, 64) + "ms"
	default:
		return strconv.FormatFloat(round3(us/1e6), 'f', -1, 64) + "s"
	}
}

// round3 rounds to three significant digits (at least one decimal kept
// below 1000), so that messages show what matters and not HDR buckets.
func round3(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}

	mag := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	if math.Abs(v) >= 1000 {
		return math.Round(v)
	}

	return math.Round(v*mag) / mag
}

// Comparator is how a measured value is compared with a limit.
type Comparator int

const (
	// Less is "<".
	Less Comparator = iota
	// LessEq is "<=".
	LessEq
	// Greater is ">".
	Greater
	// GreaterEq is ">=".
	GreaterEq
)

var comparatorText = [...]string{"<", "<=", ">", ">="}

// String is the comparator as written.
func (c Comparator) String() string {
	if c < 0 || int(c) >= len(comparatorText) {
		return fmt.Sprintf("Comparator(%d)", int(c))
	}

	return comparatorText[c]
}

// Holds reports whether measured compares with limit as c says. NaN (a
// value that could not be measured) never holds.
func (c Comparator) Holds(measured, limit float64) bool {
	switch c {
	case Less:
		return measured < limit
	case LessEq:
		return measured <= limit
	case Greater:
		return measured > limit
	case GreaterEq:
		return measured >= limit
	}

	return false
}

// Condition is one parsed threshold, "p99 < 20ms".
type Condition struct {
	Metric Metric
	Cmp    Comparator
	// Limit is in the metric's own unit: microseconds for latencies,
	// operations per second for throughput, percent for the error rate.
	Limit float64
}

// String is the condition in canonical form: "p99 < 20ms",
// "throughput > 500/s", "error_rate < 0.1%".
func (c Condition) String() string {
	return c.Metric.String() + " " + c.Cmp.String() + " " + c.Metric.formatLimit(c.Limit)
}

// Holds reports whether a measured value satisfies the condition.
func (c Condition) Holds(measured float64) bool { return c.Cmp.Holds(measured, c.Limit) }

// errSyntax explains the form of a condition.
var errSyntax = errors.New(`want METRIC OP VALUE, e.g. "p99 < 20ms", "throughput > 500", "error_rate <= 0.1%", with OP one of <, <=, >, >=`)

// Parse reads a condition: a metric, a comparator and a limit with its
// unit. Latency limits need a unit (us, µs, ms or s), the error rate a "%",
// and throughput is a plain number of operations per second (optionally
// followed by "/s").
func Parse(s string) (Condition, error) {
	text := strings.TrimSpace(s)

	i := strings.IndexAny(text, "<>")
	if i < 0 {
		return Condition{}, errSyntax
	}

	metric, err := ParseMetric(text[:i])
	if err != nil {
		return Condition{}, err
	}

	rest := text[i:]

	var cmp Comparator

	switch {
	case strings.HasPrefix(rest, "<="):
		cmp, rest = LessEq, rest[2:]
	case strings.HasPrefix(rest, ">="):
		cmp, rest = GreaterEq, rest[2:]
	case strings.HasPrefix(rest, "<"):
		cmp, rest = Less, rest[1:]
	default:
		cmp, rest = Greater, rest[1:]
	}

	limit, err := parseLimit(metric, strings.TrimSpace(rest))
	if err != nil {
		return Condition{}, err
	}

	return Condition{Metric: metric, Cmp: cmp, Limit: limit}, nil
}

// latencyUnits are the units a latency limit may be written in, in
// microseconds, longest suffix first so that "ms" is not read as "s".
var latencyUnits = []struct {
	suffix string
	us     float64
}{{"ms", 1e3}, {"us", 1}, {"µs", 1}, {"s", 1e6}}

// parseLimit reads the limit of a condition on metric m.
func parseLimit(m Metric, s string) (float64, error) {
	if s == "" {
		return 0, errSyntax
	}

	num, scale, unitErr := s, 1.0, error(nil)

	switch {
	case m.Latency():
		unitErr = fmt.Errorf("%s needs a latency unit: us, µs, ms or s (e.g. 20ms), not %q", m, s)

		for _, u := range latencyUnits {
			if n, ok := strings.CutSuffix(s, u.suffix); ok {
				num, scale, unitErr = strings.TrimSpace(n), u.us, nil
				break
			}
		}
	case m.Kind == ErrorRate:
		n, ok := strings.CutSuffix(s, "%")
		num = strings.TrimSpace(n)

		if !ok {
			unitErr = fmt.Errorf("error_rate is a percentage: write it with %%, e.g. 0.1%%, not %q", s)
		}
	default:
		if n, ok := strings.CutSuffix(s, "/s"); ok {
			num = strings.TrimSpace(n)
		}
	}

	if unitErr != nil {
		return 0, unitErr
	}

	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || strings.ContainsAny(num, "xX_") {
		return 0, fmt.Errorf("bad number %q in %q: want a non-negative decimal number", num, s)
	}

	if m.Kind == ErrorRate && v > 100 {
		return 0, fmt.Errorf("error_rate %s%% is above 100%%", num)
	}

	if math.IsInf(v*scale, 0) {
		return 0, fmt.Errorf("bad number %q in %q: too large", num, s)
	}

	return v * scale, nil
}
