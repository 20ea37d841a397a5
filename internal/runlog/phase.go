package runlog

import (
	"fmt"
	"time"

	"github.com/mongobench/mongobench/internal/metrics"
	"github.com/mongobench/mongobench/internal/result"
)

// phaseBuilder merges one phase's interval records, as they are read, into
// its totals, its growth blocks and its (at most MaxIntervals) interval
// points.
type phaseBuilder struct {
	start PhaseStart
	end   *PhaseEnd
	// intervals is the number of intervals logged (first pass), and group
	// how many adjacent ones make one point of the results.
	intervals, group int
	blocks           []*blockAcc

	// Second pass.
	seen       int
	ops        []metrics.OpStats // names, units and steps, from the first interval
	totals     []metrics.OpStats
	service    []*metrics.Histogram
	first      time.Time // the first interval's start
	last       time.Time // the last interval's end
	cur        *metrics.Interval
	curTarget  *result.PlanPoint
	points     []result.Interval
	targets    []result.PlanPoint
	trajectory map[int]*result.Background
}

func newPhaseBuilder(p PhaseStart) *phaseBuilder {
	return &phaseBuilder{start: p, trajectory: map[int]*result.Background{}}
}

// blockAcc is a growth block with the merge of its intervals.
type blockAcc struct {
	rec         BlockRecord
	totals      []metrics.OpStats
	first, last time.Time
}

func newBlockAcc(b BlockRecord) *blockAcc { return &blockAcc{rec: b} }

// add merges one interval record.
func (p *phaseBuilder) add(rec *intervalRecord) error {
	iv, svc, err := p.decode(rec)
	if err != nil {
		return err
	}

	if p.seen == 0 {
		p.first = iv.Start
		p.totals = emptyLike(p.ops)
		p.service = make([]*metrics.Histogram, len(p.ops))
	}

	p.seen++
	p.last = iv.End

	if err := addOps(p.totals, iv.Ops); err != nil {
		return fmt.Errorf("phase %q: %w", p.start.Name, err)
	}

	for i, h := range svc {
		if h == nil {
			continue
		}

		if p.service[i] == nil {
			p.service[i] = metrics.NewHistogram()
		}

		if dropped := p.service[i].Merge(h); dropped != 0 {
			return fmt.Errorf("phase %q: operation %q: %d service times outside the histogram range", p.start.Name, p.ops[i].Name, dropped)
		}
	}

	for _, b := range p.blocks {
		if rec.Index < b.rec.FirstInterval || rec.Index >= b.rec.EndInterval {
			continue
		}

		if b.totals == nil {
			b.totals, b.first = emptyLike(p.ops), iv.Start
		}

		b.last = iv.End

		if err := addOps(b.totals, iv.Ops); err != nil {
			return fmt.Errorf("phase %q: block %d: %w", p.start.Name, b.rec.Index, err)
		}
	}

	for _, pc := range rec.Pacing {
		bg := p.trajectory[pc.Job]
		if bg == nil {
			bg = &result.Background{Operation: pc.Operation}
			p.trajectory[pc.Job] = bg
		}

		bg.Trajectory = append(bg.Trajectory, pc.Point)
	}

	return p.addPoint(iv, rec.Target)
}

// addPoint adds an interval to the current point of the results, and
// closes the point once it holds group intervals (or the phase's last).
func (p *phaseBuilder) addPoint(iv metrics.Interval, target *result.PlanPoint) error {
	if p.cur == nil {
		p.cur = &metrics.Interval{Start: iv.Start, Ops: emptyLike(p.ops)}
	}

	p.cur.End = iv.End

	if err := addOps(p.cur.Ops, iv.Ops); err != nil {
		return fmt.Errorf("phase %q: %w", p.start.Name, err)
	}

	if target != nil {
		p.curTarget = target
	}

	if p.seen%p.group != 0 && p.seen != p.intervals {
		return nil
	}

	pt, err := result.NewInterval(*p.cur, p.first)
	if err != nil {
		return fmt.Errorf("phase %q: %w", p.start.Name, err)
	}

	p.points = append(p.points, pt)

	if p.curTarget != nil {
		p.targets = append(p.targets, *p.curTarget)
	}

	p.cur, p.curTarget = nil, nil

	return nil
}

// decode turns a record into a metrics interval and its service-time
// histograms (nil entries where there are none).
func (p *phaseBuilder) decode(rec *intervalRecord) (metrics.Interval, []*metrics.Histogram, error) {
	if p.ops == nil {
		p.ops = make([]metrics.OpStats, len(rec.Operations))
		for i, o := range rec.Operations {
			p.ops[i] = metrics.OpStats{Name: o.Name, Unit: o.Unit, Steps: o.Steps}
		}
	}

	if len(rec.Operations) != len(p.ops) {
		return metrics.Interval{}, nil, fmt.Errorf("phase %q: interval %d has %d operations, the first had %d",
			p.start.Name, rec.Index, len(rec.Operations), len(p.ops))
	}

	iv := metrics.Interval{Start: rec.Start, End: rec.End, Ops: make([]metrics.OpStats, len(rec.Operations))}
	svc := make([]*metrics.Histogram, len(rec.Operations))

	for i, o := range rec.Operations {
		if o.Name != p.ops[i].Name {
			return iv, nil, fmt.Errorf("phase %q: interval %d has operation %q where the first had %q",
				p.start.Name, rec.Index, o.Name, p.ops[i].Name)
		}

		h, err := decodeHistogram(o.Histogram)
		if err != nil {
			return iv, nil, fmt.Errorf("phase %q: interval %d, operation %q: %w", p.start.Name, rec.Index, o.Name, err)
		}

		if h.TotalCount() != o.Count {
			return iv, nil, fmt.Errorf("phase %q: interval %d, operation %q: histogram holds %d values but count is %d",
				p.start.Name, rec.Index, o.Name, h.TotalCount(), o.Count)
		}

		errs := o.Errors
		if errs == nil {
			errs = map[string]int64{}
		}

		iv.Ops[i] = metrics.OpStats{
			Name: o.Name, Count: o.Count, Errors: errs, Docs: o.Docs, Clamped: o.Clamped, Hist: h,
			Unit: p.ops[i].Unit, Steps: p.ops[i].Steps,
		}

		if o.ServiceHistogram != "" {
			if svc[i], err = decodeHistogram(o.ServiceHistogram); err != nil {
				return iv, nil, fmt.Errorf("phase %q: interval %d, operation %q: service times: %w", p.start.Name, rec.Index, o.Name, err)
			}
		}
	}

	return iv, svc, nil
}

// decodeHistogram decodes a logged histogram, empty for "".
func decodeHistogram(s string) (*metrics.Histogram, error) {
	if s == "" {
		return metrics.NewHistogram(), nil
	}

	return metrics.DecodeHistogram(s)
}

// emptyLike returns zeroed stats with the names, units and steps of ops.
func emptyLike(ops []metrics.OpStats) []metrics.OpStats {
	out := make([]metrics.OpStats, len(ops))
	for i, o := range ops {
		out[i] = metrics.OpStats{Name: o.Name, Unit: o.Unit, Steps: o.Steps, Errors: map[string]int64{}, Hist: metrics.NewHistogram()}
	}

	return out
}

// addOps adds src's measurements to dst, operation by operation.
func addOps(dst, src []metrics.OpStats) error {
	for i, s := range src {
		d := &dst[i]
		d.Count += s.Count
		d.Docs += s.Docs
		d.Clamped += s.Clamped

		for k, v := range s.Errors {
			d.Errors[k] += v
		}

		if dropped := d.Hist.Merge(s.Hist); dropped != 0 {
			return fmt.Errorf("operation %q: %d latencies outside the histogram range", s.Name, dropped)
		}
	}

	return nil
}

// finish returns the phase in its results-file form.
func (p *phaseBuilder) finish() (result.Phase, error) {
	sp := p.start
	ph := result.Phase{
		Name: sp.Name, Model: sp.Model, WarmupS: sp.WarmupS, Excluded: sp.Excluded,
		Operations: []result.Operation{}, Intervals: p.points,
	}

	if ph.Intervals == nil {
		ph.Intervals = []result.Interval{}
	}

	if p.seen > 0 {
		ph.StartedAt = p.first
		ph.DurationS = p.last.Sub(p.first).Seconds()

		for i, t := range p.totals {
			op, err := result.NewOperation(t, ph.DurationS)
			if err != nil {
				return ph, fmt.Errorf("phase %q: %w", sp.Name, err)
			}

			if h := p.service[i]; h != nil && h.TotalCount() > 0 {
				if op.ServiceLatencyUS, op.ServiceHistogram, err = result.ServiceTimes(h); err != nil {
					return ph, fmt.Errorf("phase %q: operation %q: %w", sp.Name, t.Name, err)
				}
			}

			op.SetDecode(sp.Decode[op.Name])

			ph.Operations = append(ph.Operations, op)
		}
	}

	ph.Targets = p.targets

	for _, b := range p.blocks {
		blk, err := b.finish()
		if err != nil {
			return ph, fmt.Errorf("phase %q: %w", sp.Name, err)
		}

		ph.Blocks = append(ph.Blocks, blk)
	}

	p.addBackground(&ph)

	return ph, nil
}

// addBackground gives the phase its background jobs: as the phase's end
// describes them, with the trajectories the intervals carried; a phase cut
// short has only the trajectories.
func (p *phaseBuilder) addBackground(ph *result.Phase) {
	if p.end != nil {
		ph.Schedule = p.end.Schedule

		for i, bg := range p.end.Background {
			if t := p.trajectory[i]; t != nil {
				bg.Trajectory = t.Trajectory
			}

			ph.Background = append(ph.Background, bg)
		}

		return
	}

	for i, op := range p.start.Background {
		bg := result.Background{Operation: op}
		if t := p.trajectory[i]; t != nil {
			bg.Trajectory = t.Trajectory
		}

		ph.Background = append(ph.Background, bg)
	}
}

// finish returns the block in its results-file form.
func (b *blockAcc) finish() (result.Block, error) {
	r := b.rec
	blk := result.Block{
		Index: r.Index, Start: r.Start, End: r.End, Complete: r.Complete, Collection: r.Collection,
		Operations: []result.Operation{},
	}

	if b.totals == nil {
		return blk, nil
	}

	blk.DurationS = b.last.Sub(b.first).Seconds()

	for _, t := range b.totals {
		op, err := result.NewOperation(t, blk.DurationS)
		if err != nil {
			return blk, fmt.Errorf("block %d: %w", r.Index, err)
		}

		blk.Operations = append(blk.Operations, op)
	}

	return blk, nil
}
