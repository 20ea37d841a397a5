package capacity

import (
	"fmt"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// MergeObservations adds up the observations of the shards of one step
// into the step's: each operation's histograms are merged (so a percentile
// is the percentile of every shard's operations together, not a mean of
// the shards' percentiles), counts, documents and errors summed; the
// schedules summed by result.AddSchedule, as package merge sums a run's;
// the measured time is the longest shard's (the shards start at one
// instant and measure as long, so the summed count over it is the sum of
// their rates to within the shards' difference in length); the offered
// rate and workers are the sums of the shares; the client's CPU is the
// busiest shard's, so that a saturated client anywhere is seen (see
// JudgeShards for the other signs of a client limit).
func MergeObservations(parts []Observation) (Observation, error) {
	if len(parts) == 0 {
		return Observation{}, fmt.Errorf("no observation to merge")
	}

	if len(parts) == 1 {
		return parts[0], nil
	}

	out := Observation{}
	byName := map[string]int{}

	var stats []metrics.OpStats

	for i, p := range parts {
		out.Offered += p.Offered
		out.Workers += p.Workers
		out.DurationS = max(out.DurationS, p.DurationS)
		out.ClientCPU = max(out.ClientCPU, p.ClientCPU)
		out.Schedule = result.AddSchedule(out.Schedule, p.Schedule)

		for _, o := range p.Ops {
			k, ok := byName[o.Name]
			if !ok {
				k = len(stats)
				byName[o.Name] = k
				stats = append(stats, metrics.OpStats{Name: o.Name, Errors: map[string]int64{}, Hist: metrics.NewHistogram(), Unit: o.Unit, Steps: o.Steps})
			}

			if err := result.AddOperation(&stats[k], o); err != nil {
				return Observation{}, fmt.Errorf("shard %d, operation %q: %w", i, o.Name, err)
			}
		}
	}

	for _, s := range stats {
		op, err := result.NewOperation(s, out.DurationS)
		if err != nil {
			return Observation{}, fmt.Errorf("operation %q: %w", s.Name, err)
		}

		out.Ops = append(out.Ops, op)
	}

	return out, nil
}

// JudgeShards judges a sharded step: Judge on the merged observation,
// then each shard's own observation for the client alone. A step is
// client-limited when any shard's client was: a merged schedule dilutes
// one saturated shard's lateness among the others' punctual operations,
// and the busiest shard's CPU is only one of the signs. parts are the
// shards' observations in shard order, each with its offered share.
func JudgeShards(kind string, merged Observation, parts []Observation, slos []SLO) result.CapacityStep {
	st := Judge(kind, merged, slos)
	if st.Cause == CauseClient || len(parts) < 2 {
		return st
	}

	for i, p := range parts {
		own := Judge(kind, p, slos)
		if own.Cause != CauseClient {
			continue
		}

		st.Passed, st.Cause = false, CauseClient
		st.Why = fmt.Sprintf("shard %d: %s", i, own.Why)

		break
	}

	return st
}
