package analysis

import (
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/metrics"
	"github.com/mongobench/mongobench/internal/stats/threshold"
)

// MetricValue is metric m of one operation's measurements over seconds (a
// phase or an interval; 0 to use the operation's own ops/s): latencies from
// the stored summary when it has that percentile, else from the histogram;
// throughput; the error rate in percent. It reports false when there is no
// value: no success to take a latency from, no operation for an error rate.
func MetricValue(o result.Operation, seconds float64, m threshold.Metric) (float64, bool) {
	switch {
	case m.Kind == threshold.Throughput:
		if seconds <= 0 {
			return o.OpsPerSec, true
		}

		return float64(o.Count) / seconds, true
	case m.Kind == threshold.ErrorRate:
		v, why := Measure([]result.Operation{o}, seconds, m)
		return v, why == ""
	case o.Count == 0:
		return 0, false
	}

	if v, ok := storedLatency(o.LatencyUS, m); ok {
		return v, true
	}

	h, err := metrics.DecodeHistogram(o.Histogram)
	if err != nil {
		return 0, false
	}

	return float64(h.ValueAtQuantile(m.Percent)), true
}

// storedLatency reads a metric the results file summarises already, so
// that the usual figures need no histogram decoding.
func storedLatency(l result.Latency, m threshold.Metric) (float64, bool) {
	switch m.Kind {
	case threshold.Mean:
		return l.Mean, true
	case threshold.Max:
		return l.Max, true
	case threshold.Percentile:
		switch m.Percent {
		case 50:
			return l.P50, true
		case 90:
			return l.P90, true
		case 95:
			return l.P95, true
		case 99:
			return l.P99, true
		case 99.9:
			return l.P999, true
		}
	}

	return 0, false
}
