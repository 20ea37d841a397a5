package result

import (
	"fmt"

	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// The rules by which the shares of one measurement add up: the shards of a
// distributed run merged from their results files (package merge) and the
// shards of a sharded capacity step judged together (package capacity)
// both use them, so the two cannot count differently.

// AddSchedule adds s, one share's open-loop schedule, to sum and returns
// the sum (nil when neither is set): counters and in-flight slots add up,
// as do the late operations' scheduler lag; the longest waits are the
// longest of any share; the first warning is kept.
func AddSchedule(sum, s *Schedule) *Schedule {
	if s == nil {
		return sum
	}

	if sum == nil {
		sum = &Schedule{}
	}

	sum.Scheduled += s.Scheduled
	sum.Late += s.Late
	sum.Dropped += s.Dropped
	sum.Pending += s.Pending
	sum.LateForSlot += s.LateForSlot
	sum.LateForClient += s.LateForClient
	sum.MaxInFlight += s.MaxInFlight
	sum.MaxWaitUS = max(sum.MaxWaitUS, s.MaxWaitUS)
	sum.MaxSchedulerLagUS = max(sum.MaxSchedulerLagUS, s.MaxSchedulerLagUS)
	sum.ClientLagUS += s.ClientLagUS

	if sum.Warning == "" {
		sum.Warning = s.Warning
	}

	return sum
}

// AddOperation adds o, one share of an operation, to t: its counts,
// documents and errors by kind, and its latency histogram, merged value by
// value so that a percentile of the sum is the percentile of every share's
// operations together.
func AddOperation(t *metrics.OpStats, o Operation) error {
	t.Count += o.Count
	t.Docs += o.Docs
	t.Clamped += o.Clamped

	for kind, n := range o.Errors {
		t.Errors[kind] += n
	}

	return AddHistogram(t.Hist, o.Histogram)
}

// AddHistogram adds a histogram as a results file holds it (empty:
// nothing) to h. Histograms of this version share one geometry, so none
// of their values falls outside h's range; a file's that does is refused.
func AddHistogram(h *metrics.Histogram, enc string) error {
	if enc == "" {
		return nil
	}

	from, err := metrics.DecodeHistogram(enc)
	if err != nil {
		return err
	}

	if dropped := h.Merge(from); dropped != 0 {
		return fmt.Errorf("%d latencies outside the histogram range", dropped)
	}

	return nil
}
