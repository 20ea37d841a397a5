package threshold

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
)

// Change is one regression gate of compare --fail-if: fail when an
// operation's metric changed significantly by more than Percent in the
// direction Up says.
type Change struct {
	// Operation limits the gate to one operation; empty for every one.
	Operation string
	Metric    Metric
	// Up fails on an increase ("+10%"), otherwise on a decrease ("-5%").
	Up bool
	// Percent is the allowed change in percent, ≥ 0.
	Percent float64
}

// changeRe is "[OPERATION:]METRIC ±N%" or the older "METRIC ±N% OPERATION".
var changeRe = regexp.MustCompile(`^\s*(?:([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:\s*)?([A-Za-z][A-Za-z0-9_.]*)\s*([+-])\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*%(?:\s+(\S+))?\s*$`)

// ChangeSyntax describes the form of a --fail-if expression for messages.
const ChangeSyntax = "want [OPERATION:]METRIC +N% or -N%, e.g. 'p99 +10%', 'get:p99.9 +10%', 'throughput -5%', with METRIC one of " + MetricNames

// ParseChange reads a --fail-if expression: "p99 +10%", "get:p99.9 +10%",
// "error_rate +50%", or the older form with the operation last, "p50 +5%
// find_by_id".
func ParseChange(s string) (Change, error) {
	m := changeRe.FindStringSubmatch(s)
	if m == nil {
		return Change{}, fmt.Errorf("%s", ChangeSyntax)
	}

	if m[1] != "" && m[5] != "" {
		return Change{}, fmt.Errorf("two operations (%q and %q); name one, as OPERATION:METRIC", m[1], m[5])
	}

	metric, err := ParseMetric(m[2])
	if err != nil {
		return Change{}, err
	}

	pct, err := strconv.ParseFloat(m[4], 64)
	if err != nil || math.IsInf(pct, 0) {
		return Change{}, fmt.Errorf("bad percentage %q", m[4])
	}

	return Change{Operation: m[1] + m[5], Metric: metric, Up: m[3] == "+", Percent: pct}, nil
}
