package capacity

import (
	"fmt"
	"math"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
	"github.com/mongobench/mongobench/internal/stats/threshold"
)

// SLO is one service-level condition: a threshold condition ("p99 <
// 20ms", the grammar of workload thresholds) on a selection of operations,
// all of them unless Operation names one.
type SLO struct {
	// Operation is an operation's name, or workload.AllOperations.
	Operation string
	// Condition is the parsed condition.
	Condition threshold.Condition
}

// String is the SLO as written back: "p99 < 20ms", "get:p99 < 20ms".
func (s SLO) String() string {
	if s.Operation == workload.AllOperations {
		return s.Condition.String()
	}

	return s.Operation + ":" + s.Condition.String()
}

// ParseSLO reads "[OPERATION:]CONDITION": the condition in the threshold
// grammar, on one operation (as in compare's --fail-if "get:p99 ...") or,
// without a prefix, on all of them taken together. Throughput is refused:
// the search sets it. The grammar is package workload's, which checks a
// workload's capacity section with it.
func ParseSLO(s string) (SLO, error) {
	op, c, err := workload.ParseObjective(s)
	if err != nil {
		return SLO{}, err
	}

	return SLO{Operation: op, Condition: c}, nil
}

// z95 is the normal quantile of a two-sided 95% interval.
const z95 = 1.959964

// Measure evaluates the SLO on a phase's operations over seconds: the value
// (as the workload's thresholds compute it, package analysis) and a 95%
// confidence interval — distribution-free, from the order statistics, for
// a percentile; Wilson's for the error rate; none (zeros) for the mean and
// the maximum, or when there are too few samples.
func (s SLO) Measure(ops []result.Operation, seconds float64) result.SLOValue {
	sel := ops
	if s.Operation != workload.AllOperations {
		sel = nil

		for _, o := range ops {
			if o.Name == s.Operation {
				sel = append(sel, o)
			}
		}
	}

	out := result.SLOValue{Condition: s.String()}

	v, why := analysis.Measure(sel, seconds, s.Condition.Metric)
	if why != "" {
		return out // not measurable: fails, uncertain
	}

	out.Measured = v
	out.Passed = s.Condition.Holds(v)

	var ok bool

	switch s.Condition.Metric.Kind {
	case threshold.Percentile:
		out.CI, ok = quantileCI(merged(sel), s.Condition.Metric.Percent)
	case threshold.ErrorRate:
		var good, bad int64
		for _, o := range sel {
			good += o.Count
			for _, n := range o.Errors {
				bad += n
			}
		}

		out.CI, ok = wilson(bad, good+bad)
	}

	if ok {
		lo, hi := out.CI[0], out.CI[1]
		if out.Passed {
			out.Certain = s.Condition.Holds(hi)
		} else {
			out.Certain = !s.Condition.Holds(lo)
		}
	}

	return out
}

// merged is the operations' latency histograms merged; operations whose
// histogram does not decode are left out (Measure has said so already).
func merged(ops []result.Operation) *metrics.Histogram {
	h := metrics.NewHistogram()

	for _, o := range ops {
		if o.Count == 0 || o.Histogram == "" {
			continue
		}

		if oh, err := metrics.DecodeHistogram(o.Histogram); err == nil {
			h.Merge(oh)
		}
	}

	return h
}

// quantileCI is the 95% confidence interval of the p-th percentile of the
// values in h from the order statistics: with n values, the ranks
// np ± z√(np(1−p)) bound it whatever the distribution (for independent
// samples). It is not there when those ranks fall outside the samples.
func quantileCI(h *metrics.Histogram, percent float64) ([2]float64, bool) {
	n := float64(h.TotalCount())
	p := percent / 100

	if n == 0 || p <= 0 || p >= 1 {
		return [2]float64{}, false
	}

	half := z95 * math.Sqrt(n*p*(1-p))
	lo, hi := math.Floor(n*p-half), math.Ceil(n*p+half)+1

	if lo < 1 || hi > n {
		return [2]float64{}, false
	}

	return [2]float64{
		float64(h.ValueAtQuantile(100 * lo / n)),
		float64(h.ValueAtQuantile(100 * hi / n)),
	}, true
}

// wilson is the Wilson score 95% interval of bad/n, in percent.
func wilson(bad, n int64) ([2]float64, bool) {
	if n == 0 {
		return [2]float64{}, false
	}

	nf, p := float64(n), float64(bad)/float64(n)
	z2 := z95 * z95
	centre := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / (1 + z2/nf)

	return [2]float64{100 * max(centre-half, 0), 100 * min(centre+half, 1)}, true
}

// FromThresholds takes the objectives from a workload's thresholds, for a
// search given no --slo: each upper bound on a latency or the error rate
// becomes an SLO on its operation (or all of them); the others
// (throughput floors, lower bounds) say nothing about capacity and are
// left out. It is an error when none is left.
func FromThresholds(rules []workload.ThresholdRule) ([]SLO, error) {
	var out []SLO

	for _, r := range rules {
		c := r.Condition
		if c.Metric.Kind == threshold.Throughput || c.Cmp == threshold.Greater || c.Cmp == threshold.GreaterEq {
			continue
		}

		out = append(out, SLO{Operation: r.Operation, Condition: c})
	}

	if len(out) == 0 {
		return nil, fmt.Errorf("no --slo given and the workload's thresholds hold no upper bound on a latency or the error rate to search against")
	}

	return out, nil
}
