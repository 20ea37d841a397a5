package merge

import (
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// part is one shard's run of a phase.
type part struct {
	file  string
	phase *result.Phase
}

// bucket is one interval of the merged phase: the sum of the shards'
// intervals that fall in it.
type bucket struct {
	ops []metrics.OpStats
	end time.Time // the latest end of the shards' intervals in it
}

// maxIntervals bounds the merged grid, so that shards started days apart
// are refused rather than filling memory with empty intervals.
const maxIntervals = 1_000_000

// mergePhase merges the phase named name of every shard that ran it.
//
// The shards' intervals are laid on one grid: it starts at the earliest
// shard's start of the phase (with --start-at, the common instant) and
// has the run's interval as its step. Each shard interval goes to the
// grid cell its midpoint falls in, so a shard whose ticks came a few
// milliseconds late still adds to the same cell as the others, and a
// shard's short last interval (a phase cut off by max_operations) to the
// cell after its last full one. A merged interval spans its grid cell; the
// last one ends with the latest shard.
func mergePhase(name string, interval time.Duration, shards []Input) (result.Phase, error) {
	var parts []part

	for _, in := range shards {
		for i := range in.Result.Phases {
			if in.Result.Phases[i].Name == name {
				parts = append(parts, part{file: in.Name, phase: &in.Result.Phases[i]})
				break
			}
		}
	}

	// A shard that stopped before measuring the phase has neither
	// intervals nor operations: it adds nothing.
	if measured := slices.DeleteFunc(slices.Clone(parts), func(pt part) bool { return len(pt.phase.Intervals) == 0 }); len(measured) > 0 {
		parts = measured
	}

	ref := parts[0]
	names := opNames(ref.phase)

	var origin time.Time

	for _, pt := range parts {
		if got := opNames(pt.phase); !slices.Equal(got, names) {
			return result.Phase{}, refuse("%s: phase %q measures operations %v, but %s's measures %v", pt.file, name, got, ref.file, names)
		}

		if len(pt.phase.Blocks) > 0 {
			return result.Phase{}, refuse("%s: phase %q is a blocks phase: its growth blocks cannot be merged", pt.file, name)
		}

		// A phase without intervals (a shard stopped before measuring)
		// has no start to align.
		if len(pt.phase.Intervals) > 0 && (origin.IsZero() || pt.phase.StartedAt.Before(origin)) {
			origin = pt.phase.StartedAt
		}
	}

	step := gridStep(parts, interval)

	var buckets []*bucket

	for _, pt := range parts {
		for j := range pt.phase.Intervals {
			iv := &pt.phase.Intervals[j]
			mid := iv.Start.Add(iv.End.Sub(iv.Start) / 2)
			k := max(int(mid.Sub(origin)/step), 0)
			if k >= maxIntervals {
				return result.Phase{}, refuse("%s: phase %q has an interval %s after the first shard's start: not a shard of the same run",
					pt.file, name, mid.Sub(origin).Round(time.Second))
			}

			for len(buckets) <= k {
				buckets = append(buckets, newBucket(ref.phase))
			}

			b := buckets[k]
			if err := b.add(iv.Operations); err != nil {
				return result.Phase{}, refuse("%s: phase %q, interval ending %s: %v", pt.file, name, iv.End.Format(time.RFC3339Nano), err)
			}

			if iv.End.After(b.end) {
				b.end = iv.End
			}
		}
	}

	p, err := result.NewPhase(name, seconds(ref.phase.WarmupS), intervals(origin, step, buckets))
	if err != nil {
		return result.Phase{}, fmt.Errorf("phase %q: %w", name, err)
	}

	p.Model, p.Excluded = ref.phase.Model, ref.phase.Excluded

	if err := addPhaseExtras(&p, parts); err != nil {
		return result.Phase{}, err
	}

	return p, nil
}

// gridStep is the length of the merged phase's intervals: run.interval, or,
// when a shard's phase was longer than a results file keeps interval by
// interval (runlog.MaxIntervals), the length of its merged points — a whole
// number of intervals — so that every cell of the grid gets each shard's
// point and none is left empty between them. A shard's last point may be
// shorter and does not count.
func gridStep(parts []part, interval time.Duration) time.Duration {
	group := 1

	for _, pt := range parts {
		ivs := pt.phase.Intervals
		for j := 0; j+1 < len(ivs); j++ {
			n := int((ivs[j].End.Sub(ivs[j].Start) + interval/2) / interval)
			group = max(group, n)
		}
	}

	return time.Duration(group) * interval
}

func opNames(p *result.Phase) []string {
	names := make([]string, len(p.Operations))
	for i, o := range p.Operations {
		names[i] = o.Name
	}

	return names
}

// newBucket returns an empty interval with the phase's operations.
func newBucket(p *result.Phase) *bucket {
	b := &bucket{ops: make([]metrics.OpStats, len(p.Operations))}
	for i, o := range p.Operations {
		b.ops[i] = metrics.OpStats{Name: o.Name, Errors: map[string]int64{}, Hist: metrics.NewHistogram(), Unit: o.Unit, Steps: o.Steps}
	}

	return b
}

// add adds one shard interval's operations, histograms included.
func (b *bucket) add(ops []result.Operation) error {
	if len(ops) != len(b.ops) {
		return fmt.Errorf("%d operations, the phase has %d", len(ops), len(b.ops))
	}

	for i, o := range ops {
		t := &b.ops[i]
		if o.Name != t.Name {
			return fmt.Errorf("operation %q where the phase has %q", o.Name, t.Name)
		}

		if err := result.AddOperation(t, o); err != nil {
			return fmt.Errorf("operation %q: %w", o.Name, err)
		}
	}

	return nil
}

// intervals yields the merged intervals on the grid from origin.
func intervals(origin time.Time, step time.Duration, buckets []*bucket) iter.Seq2[metrics.Interval, error] {
	return func(yield func(metrics.Interval, error) bool) {
		for k, b := range buckets {
			start := origin.Add(time.Duration(k) * step)
			end := start.Add(step)

			if k == len(buckets)-1 {
				end = b.end
				if end.Before(start) {
					end = start
				}
			}

			if !yield(metrics.Interval{Start: start, End: end, Ops: b.ops}, nil) {
				return
			}
		}
	}
}

// addPhaseExtras merges what a phase records besides its operations: decode
// modes, service times, schedule, planned points and background jobs.
func addPhaseExtras(p *result.Phase, parts []part) error {
	ref := parts[0].phase

	for i := range p.Operations {
		o := &p.Operations[i]
		o.SetDecode(ref.Operations[i].Decode)

		if err := mergeService(o, i, parts); err != nil {
			return err
		}
	}

	p.Schedule = mergeSchedules(parts, func(p *result.Phase) *result.Schedule { return p.Schedule })
	p.Targets = mergeTargets(parts)

	for j, bg := range ref.Background {
		out := result.Background{Operation: bg.Operation}
		for _, pt := range parts {
			if j < len(pt.phase.Background) {
				out.Rate += pt.phase.Background[j].Rate
			}
		}

		out.Schedule = mergeSchedules(parts, func(p *result.Phase) *result.Schedule {
			if j < len(p.Background) {
				return p.Background[j].Schedule
			}

			return nil
		})
		p.Background = append(p.Background, out)
	}

	return nil
}

// mergeService adds the shards' service-time histograms of operation i.
func mergeService(o *result.Operation, i int, parts []part) error {
	h := metrics.NewHistogram()
	found := false

	for _, pt := range parts {
		enc := pt.phase.Operations[i].ServiceHistogram
		if enc == "" {
			continue
		}

		found = true

		if err := result.AddHistogram(h, enc); err != nil {
			return refuse("%s: phase %q, operation %q: service times: %v", pt.file, pt.phase.Name, o.Name, err)
		}
	}

	if !found || h.TotalCount() == 0 {
		return nil
	}

	var err error

	o.ServiceLatencyUS, o.ServiceHistogram, err = result.ServiceTimes(h)

	return err
}

// mergeSchedules sums the shards' schedules (result.AddSchedule).
func mergeSchedules(parts []part, of func(*result.Phase) *result.Schedule) *result.Schedule {
	var out *result.Schedule

	for _, pt := range parts {
		out = result.AddSchedule(out, of(pt.phase))
	}

	return out
}

// mergeTargets adds the shards' planned rates and concurrency point by
// point; shards of one run plan the same points, so a shard with other
// points leaves the plan out rather than mixing them.
func mergeTargets(parts []part) []result.PlanPoint {
	ref := parts[0].phase.Targets
	out := slices.Clone(ref)

	for i := range out {
		out[i].Rate, out[i].Concurrency = 0, 0
	}

	for _, pt := range parts {
		if len(pt.phase.Targets) != len(ref) {
			return nil
		}

		for i, t := range pt.phase.Targets {
			out[i].Rate += t.Rate
			out[i].Concurrency += t.Concurrency
		}
	}

	return out
}
