package capacity

import (
	"math"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// shardOp is one operation a shard measured: n latencies of each value
// (µs), and errors.
func shardOp(t *testing.T, name string, errs int64, values map[int64]int64) result.Operation {
	t.Helper()

	h := metrics.NewHistogram()

	var n int64

	for v, k := range values {
		for range k {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}

		n += k
	}

	enc, err := metrics.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}

	return result.Operation{Name: name, Count: n, Errors: map[string]int64{"server": errs}, Docs: n, Histogram: enc}
}

// TestMergeObservationsMergesHistograms merges two shards' steps. Shard 0
// took 1000 operations at 1 ms; shard 1 985 at 2 ms and 15 at 100 ms, so
// its own p99 (rank 990 of 1000) is 100 ms. Together, the p99 is rank 1980
// of 2000, which is among the 2 ms ones: a merge of histograms says 2 ms,
// where the largest of the shards' p99s (or their mean, 50.5 ms) would
// have failed a 10 ms objective the deployment met.
func TestMergeObservationsMergesHistograms(t *testing.T) {
	a := Observation{
		Offered: 500, DurationS: 2, ClientCPU: 0.2,
		Ops:      []result.Operation{shardOp(t, "get", 3, map[int64]int64{1000: 1000})},
		Schedule: &result.Schedule{Scheduled: 1003, Late: 4, LateForSlot: 4, MaxInFlight: 8, MaxSchedulerLagUS: 50},
	}
	b := Observation{
		Offered: 500, DurationS: 2.01, ClientCPU: 0.4,
		Ops:      []result.Operation{shardOp(t, "get", 2, map[int64]int64{2000: 985, 100_000: 15})},
		Schedule: &result.Schedule{Scheduled: 1002, Late: 1, LateForClient: 1, MaxInFlight: 8, MaxSchedulerLagUS: 70},
	}

	m, err := MergeObservations([]Observation{a, b})
	if err != nil {
		t.Fatal(err)
	}

	if len(m.Ops) != 1 {
		t.Fatalf("merged %d operations, want the one both shards ran", len(m.Ops))
	}

	op := m.Ops[0]
	if op.Count != 2000 || op.Errors["server"] != 5 || op.Docs != 2000 {
		t.Errorf("merged count %d, errors %v, docs %d; want the sums 2000, 5, 2000", op.Count, op.Errors, op.Docs)
	}

	if m.Offered != 1000 || m.DurationS != 2.01 || m.ClientCPU != 0.4 {
		t.Errorf("offered %v, duration %v, client CPU %v; want the summed shares 1000, the longest 2.01 s, the busiest 0.4", m.Offered, m.DurationS, m.ClientCPU)
	}

	if s := m.Schedule; s == nil || s.Scheduled != 2005 || s.Late != 5 || s.LateForClient != 1 || s.MaxInFlight != 16 || s.MaxSchedulerLagUS != 70 {
		t.Errorf("merged schedule %+v, want counters and slots summed, the longest lag kept", s)
	}

	st := Judge(result.CapacityStepRate, m, []SLO{mustSLO(t, "p99 < 10ms")})
	if math.Abs(st.P99US-2000)/2000 > 0.01 {
		t.Errorf("merged p99 %.0f µs, want 2000 µs (the 1980th of the 2000 latencies)", st.P99US)
	}

	if !st.Passed {
		t.Errorf("the merged step failed (%s: %s); every shard's latencies together meet p99 < 10ms", st.Cause, st.Why)
	}

	if own := Judge(result.CapacityStepRate, b, []SLO{mustSLO(t, "p99 < 10ms")}); own.Passed || math.Abs(own.P99US-100_000)/100_000 > 0.01 {
		t.Errorf("shard 1 alone: p99 %.0f µs, passed %v; want 100 ms, failed (else the test shows nothing)", own.P99US, own.Passed)
	}

	if st.AchievedRate != float64(2005)/2.01 {
		t.Errorf("achieved %v ops/s, want the operations of both shards over the longest measured time", st.AchievedRate)
	}
}

// TestJudgeShardsBlamesAnyShardsClient has one shard whose scheduler fell
// behind for want of CPU (operations never started, others late for the
// client): its share fell short, while the merged schedule, diluted by
// the other shard's punctual operations, still keeps 95% of the rate. The
// step is the client's, named by its shard.
func TestJudgeShardsBlamesAnyShardsClient(t *testing.T) {
	ok := Observation{
		Offered: 500, DurationS: 2,
		Ops:      []result.Operation{shardOp(t, "get", 0, map[int64]int64{1000: 1000})},
		Schedule: &result.Schedule{Scheduled: 1000},
	}
	starved := Observation{
		Offered: 500, DurationS: 2,
		Ops:      []result.Operation{shardOp(t, "get", 0, map[int64]int64{1000: 900})},
		Schedule: &result.Schedule{Scheduled: 1000, Pending: 100, Late: 50, LateForClient: 50},
	}
	parts := []Observation{ok, starved}
	slos := []SLO{mustSLO(t, "p99 < 10ms")}

	m, err := MergeObservations(parts)
	if err != nil {
		t.Fatal(err)
	}

	if st := Judge(result.CapacityStepRate, m, slos); !st.Passed {
		t.Fatalf("the merged observation alone failed (%s: %s); the test needs one that hides the starved shard", st.Cause, st.Why)
	}

	st := JudgeShards(result.CapacityStepRate, m, parts, slos)
	if st.Passed || st.Cause != CauseClient || !strings.HasPrefix(st.Why, "shard 1: ") {
		t.Errorf("step passed %v, cause %q, why %q; want the client's, shard 1's", st.Passed, st.Cause, st.Why)
	}

	if st := JudgeShards(result.CapacityStepRate, m, []Observation{ok, ok}, slos); !st.Passed {
		t.Errorf("two punctual shards: step failed (%s: %s)", st.Cause, st.Why)
	}
}
