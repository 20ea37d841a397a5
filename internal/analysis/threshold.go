// Package analysis turns results into answers: verdicts, findings,
// thresholds, regression gates and the comparison block that ends a study,
// each as a typed model that the terminal, Markdown and HTML render.
package analysis

import (
	"fmt"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
	"github.com/mongobench/mongobench/internal/stats/threshold"
)

// CheckThresholds evaluates the workload's thresholds on a run's result,
// one outcome per condition in the workload's order. A rule without a
// phase is checked on the main phase (see result.Result.MainPhase). A value
// the run cannot give (a latency of an operation that never succeeded, a
// phase that did not run) fails its threshold: a gate that cannot see must
// not let a run pass.
func CheckThresholds(res *result.Result, rules []workload.ThresholdRule) []result.ThresholdOutcome {
	out := make([]result.ThresholdOutcome, 0, len(rules))

	for _, r := range rules {
		out = append(out, checkRule(res, r))
	}

	return out
}

// ThresholdsFailed counts the outcomes that did not pass.
func ThresholdsFailed(outcomes []result.ThresholdOutcome) int {
	n := 0

	for _, o := range outcomes {
		if !o.Passed {
			n++
		}
	}

	return n
}

func checkRule(res *result.Result, r workload.ThresholdRule) result.ThresholdOutcome {
	c := r.Condition
	o := result.ThresholdOutcome{
		Operation: r.Operation, Condition: c.String(), Metric: c.Metric.String(), Limit: c.Limit,
	}

	label := r.Operation
	if r.Phase != "" {
		label += "@" + r.Phase
	}

	ph := phaseNamed(res, r.Phase)
	if ph == nil {
		o.Phase = r.Phase
		o.Text = fmt.Sprintf("✗ %s %s (no phase %q in the results)", label, o.Condition, phaseLabel(r.Phase))

		return o
	}

	o.Phase = ph.Name

	ops := ph.Operations
	if r.Operation != workload.AllOperations {
		ops = nil

		for _, op := range ph.Operations {
			if op.Name == r.Operation {
				ops = append(ops, op)
			}
		}
	}

	v, why := Measure(ops, ph.DurationS, c.Metric)
	if why != "" {
		o.Text = fmt.Sprintf("✗ %s %s (%s)", label, o.Condition, why)
		return o
	}

	o.Measured, o.Measurable, o.Passed = v, true, c.Holds(v)

	mark := "✗"
	if o.Passed {
		mark = "✓"
	}

	o.Text = fmt.Sprintf("%s %s %s (%s = %s)", mark, label, o.Condition, o.Metric, c.Metric.Format(v))

	return o
}

func phaseLabel(name string) string {
	if name == "" {
		return result.PhaseRun
	}

	return name
}

// phaseNamed is the last phase called name, or the main phase for "".
func phaseNamed(res *result.Result, name string) *result.Phase {
	if name == "" {
		return res.MainPhase()
	}

	for i := len(res.Phases) - 1; i >= 0; i-- {
		if res.Phases[i].Name == name {
			return &res.Phases[i]
		}
	}

	return nil
}

// Measure computes metric m over ops taken together during seconds: the
// latency metrics from their merged histograms, throughput as their
// successes per second, the error rate as the percentage of their
// operations that failed. When there is no value, it says why instead.
func Measure(ops []result.Operation, seconds float64, m threshold.Metric) (v float64, why string) {
	var ok, bad int64

	for _, op := range ops {
		ok += op.Count
		for _, n := range op.Errors {
			bad += n
		}
	}

	switch {
	case len(ops) == 0:
		return 0, "no such operation in the phase"
	case m.Kind == threshold.Throughput:
		if seconds <= 0 {
			return 0, "the phase has no measured duration"
		}

		return float64(ok) / seconds, ""
	case m.Kind == threshold.ErrorRate:
		if ok+bad == 0 {
			return 0, "no operation ran"
		}

		return 100 * float64(bad) / float64(ok+bad), ""
	case ok == 0:
		return 0, "no successful operation to take a latency from"
	}

	h, err := mergedHistogram(ops)
	if err != nil {
		return 0, err.Error()
	}

	switch m.Kind {
	case threshold.Mean:
		return h.Mean(), ""
	case threshold.Max:
		return float64(h.Max()), ""
	default:
		return float64(h.ValueAtQuantile(m.Percent)), ""
	}
}

// mergedHistogram decodes and merges the operations' latency histograms.
func mergedHistogram(ops []result.Operation) (*metrics.Histogram, error) {
	total := metrics.NewHistogram()

	for _, op := range ops {
		if op.Count == 0 || op.Histogram == "" {
			continue
		}

		h, err := metrics.DecodeHistogram(op.Histogram)
		if err != nil {
			return nil, fmt.Errorf("operation %s: %w", op.Name, err)
		}

		total.Merge(h)
	}

	return total, nil
}
