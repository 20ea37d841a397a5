package result

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"time"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// Check verifies that the result is internally consistent and returns every
// problem found (nil if none). It recomputes everything derivable from the
// histograms and counters, so it catches hand-edited or corrupted files:
//
//   - schema version, status and result kind are known values (KindMatrix
//     exactly when the result has a matrix), a single run's target kind
//     is a name (the registry of target kinds is the launcher's, not the
//     contract's), and the target URI carries no password;
//   - a matrix's trials name its targets, variants and rounds, and each
//     trial's result passes Check itself;
//   - every histogram decodes, holds exactly Count values, and the latency
//     summary equals the one recomputed from it (so percentiles are
//     monotone);
//   - ops_per_sec matches the count and the period;
//   - intervals are ordered and contiguous, span the phase, and list the
//     phase's operations in the same order;
//   - per operation, count, docs, clamped and errors equal the sums over
//     the intervals, and the phase histogram equals the merged interval
//     histograms;
//   - a measured unit (an iteration or a composite operation) names steps
//     that are operations of its phase, which ran at least as often as it
//     and failed at least as often (see checkUnits);
//   - the workload's compare_on names an operation of some phase;
//   - the top-level operations equal the main phase's.
func (r *Result) Check() []error {
	var c checker
	if r.SchemaVersion != SchemaVersion {
		c.addf("schema_version is %d, want %d", r.SchemaVersion, SchemaVersion)
	}
	switch r.Status {
	case StatusCompleted, StatusInterrupted, StatusAborted, StatusIncomplete:
	default:
		c.addf("status %q is not one of %q, %q, %q, %q", r.Status, StatusCompleted, StatusInterrupted, StatusAborted, StatusIncomplete)
	}
	c.checkKind(r)
	if r.Matrix != nil {
		c.checkMatrix(r.Matrix)
	}
	if redact.URI(r.Target.URI) != r.Target.URI {
		c.addf("target uri is not redacted")
	}
	if r.DurationS < 0 || r.Concurrency < 0 {
		c.addf("negative duration_s %v or concurrency %d", r.DurationS, r.Concurrency)
	}

	seen := map[string]bool{}
	for i := range r.Phases {
		p := &r.Phases[i]
		where := fmt.Sprintf("phase %d (%s)", i, p.Name)
		if seen[p.Name] && p.Name == PhaseRun {
			c.addf("%s: more than one %q phase", where, PhaseRun)
		}
		seen[p.Name] = true
		c.checkPhase(where, p)
	}

	c.checkCompareOn(r)

	var want []Operation
	if m := r.MainPhase(); m != nil {
		want = m.Operations
	}
	if len(want) != 0 || len(r.Operations) != 0 {
		if !reflect.DeepEqual(normalizeOps(r.Operations), normalizeOps(want)) {
			c.addf("top-level operations differ from those of the main phase")
		}
	}
	return c.errs
}

// normalizeOps treats nil and empty error maps alike, since JSON null and {}
// mean the same thing here.
func normalizeOps(ops []Operation) []Operation {
	out := make([]Operation, len(ops))
	for i, op := range ops {
		if op.Errors == nil {
			op.Errors = map[string]int64{}
		}
		out[i] = op
	}
	return out
}

// checker accumulates problems.
type checker struct {
	errs []error
}

func (c *checker) addf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// opSums accumulates one operation's interval values for comparison with
// the phase totals.
type opSums struct {
	count, docs, clamped int64
	errors               map[string]int64
	hist                 *metrics.Histogram // nil once a histogram failed to decode
}

func (c *checker) checkPhase(where string, p *Phase) {
	if p.DurationS < 0 || p.WarmupS < 0 {
		c.addf("%s: negative duration_s %v or warmup_s %v", where, p.DurationS, p.WarmupS)
	}
	names := map[string]bool{}
	sums := make([]opSums, len(p.Operations))
	phaseHists := make([]*metrics.Histogram, len(p.Operations))
	for i := range p.Operations {
		op := &p.Operations[i]
		if names[op.Name] {
			c.addf("%s: operation %q listed twice", where, op.Name)
		}
		names[op.Name] = true
		phaseHists[i] = c.checkOperation(fmt.Sprintf("%s: operation %s", where, op.Name), op, p.DurationS)
		sums[i] = opSums{errors: map[string]int64{}, hist: metrics.NewHistogram()}
	}

	start := p.StartedAt
	prevEnd := p.StartedAt
	for n := range p.Intervals {
		iv := &p.Intervals[n]
		ivWhere := fmt.Sprintf("%s: interval %d", where, n)
		if !iv.Start.Equal(prevEnd) {
			c.addf("%s: starts at %s, but the previous one (or the phase) ended/started at %s",
				ivWhere, iv.Start.Format(time.RFC3339Nano), prevEnd.Format(time.RFC3339Nano))
		}
		if iv.End.Before(iv.Start) {
			c.addf("%s: ends before it starts", ivWhere)
		}
		prevEnd = iv.End
		if want := iv.End.Sub(start).Seconds(); !approxEqual(iv.ElapsedS, want) {
			c.addf("%s: elapsed_s %v, but end - phase start is %v", ivWhere, iv.ElapsedS, want)
		}
		if len(iv.Operations) != len(p.Operations) {
			c.addf("%s: %d operations, the phase has %d", ivWhere, len(iv.Operations), len(p.Operations))
			continue
		}
		secs := iv.End.Sub(iv.Start).Seconds()
		for i := range iv.Operations {
			op := &iv.Operations[i]
			if op.Name != p.Operations[i].Name {
				c.addf("%s: operation %d is %q, the phase has %q", ivWhere, i, op.Name, p.Operations[i].Name)
				continue
			}
			h := c.checkOperation(fmt.Sprintf("%s: operation %s", ivWhere, op.Name), op, secs)
			s := &sums[i]
			s.count += op.Count
			s.docs += op.Docs
			s.clamped += op.Clamped
			for k, v := range op.Errors {
				s.errors[k] += v
			}
			if h == nil || s.hist == nil {
				s.hist = nil
			} else if dropped := s.hist.Merge(h); dropped != 0 {
				c.addf("%s: histogram has %d values outside mongobench's range", ivWhere, dropped)
			}
		}
	}
	if len(p.Intervals) > 0 {
		if want := prevEnd.Sub(start).Seconds(); !approxEqual(p.DurationS, want) {
			c.addf("%s: duration_s %v, but the intervals span %v s", where, p.DurationS, want)
		}
	}

	for i := range p.Operations {
		op := &p.Operations[i]
		s := &sums[i]
		opWhere := fmt.Sprintf("%s: operation %s", where, op.Name)
		if op.Count != s.count {
			c.addf("%s: count %d, but the sum of intervals is %d", opWhere, op.Count, s.count)
		}
		if op.Docs != s.docs {
			c.addf("%s: docs %d, but the sum of intervals is %d", opWhere, op.Docs, s.docs)
		}
		if op.Clamped != s.clamped {
			c.addf("%s: clamped %d, but the sum of intervals is %d", opWhere, op.Clamped, s.clamped)
		}
		if !maps.Equal(nonZero(op.Errors), nonZero(s.errors)) {
			c.addf("%s: errors %v, but the sum of intervals is %v", opWhere, op.Errors, s.errors)
		}
		if phaseHists[i] != nil && s.hist != nil && len(p.Intervals) > 0 && !phaseHists[i].Equals(s.hist) {
			c.addf("%s: histogram differs from the merged interval histograms", opWhere)
		}
	}

	c.checkUnits(where, p)
}

// nonZero drops zero counts, which carry no information.
func nonZero(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// checkOperation verifies one operation against its own histogram and
// returns the decoded histogram, or nil if it does not decode.
func (c *checker) checkOperation(where string, op *Operation, secs float64) *metrics.Histogram {
	if op.Count < 0 || op.Docs < 0 || op.Clamped < 0 || op.Clamped > op.Count {
		c.addf("%s: impossible count %d, docs %d or clamped %d", where, op.Count, op.Docs, op.Clamped)
	}
	for k, v := range op.Errors {
		if k == "" || v < 0 {
			c.addf("%s: impossible error count %q: %d", where, k, v)
		}
	}
	if want := rate(op.Count, secs); !approxEqual(op.OpsPerSec, want) {
		c.addf("%s: ops_per_sec %v, but count / seconds is %v", where, op.OpsPerSec, want)
	}
	l := op.LatencyUS
	seq := []float64{l.P50, l.P90, l.P95, l.P99, l.P999, l.Max}
	for i := 1; i < len(seq); i++ {
		if seq[i] < seq[i-1] {
			c.addf("%s: latency percentiles are not monotone (p50 <= p90 <= p95 <= p99 <= p999 <= max): %+v", where, l)
			break
		}
	}
	h, err := metrics.DecodeHistogram(op.Histogram)
	if err != nil {
		c.addf("%s: %v", where, err)
		return nil
	}
	if h.TotalCount() != op.Count {
		c.addf("%s: histogram holds %d values, but count is %d", where, h.TotalCount(), op.Count)
	}
	if got := latencyOf(metrics.Summarize(h)); !closeLatency(got, l) {
		c.addf("%s: latency_us %+v does not match its histogram, which gives %+v", where, l, got)
	}
	return h
}

// approxEqual reports whether two derived floats agree up to rounding.
func approxEqual(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// closeLatency reports whether two latency summaries agree up to rounding.
func closeLatency(a, b Latency) bool {
	return approxEqual(a.Mean, b.Mean) && approxEqual(a.P50, b.P50) && approxEqual(a.P90, b.P90) && approxEqual(a.P95, b.P95) &&
		approxEqual(a.P99, b.P99) && approxEqual(a.P999, b.P999) && approxEqual(a.Max, b.Max)
}
