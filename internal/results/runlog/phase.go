package runlog

import (
	"fmt"
	"slices"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// phaseBuilder merges one phase's intervals, as they arrive, into its
// totals, its growth blocks and its interval points.
//
// The points are bounded (see Points and PointBytes): each holds group
// adjacent intervals, group starting at 1; when a closing point makes
// Points of them, or an even number of more than PointBytes, adjacent pairs
// are merged into one and group doubles. Every point but the open
// last one thus spans the same number of intervals, a power of two,
// whatever the phase's length, and a phase has fewer than Points closed
// points and one open. The grouping is known as the run goes, so the points
// are encoded once as they close (and again at each of the few merges) and
// the results of a stopped run are ready at once.
type phaseBuilder struct {
	lim   limits
	start PhaseStart
	end   *PhaseEnd
	// seen counts the intervals merged, and group how many adjacent ones
	// make one point.
	seen, group int
	blocks      []*blockAcc
	// pending are the intervals of a blocks phase not yet in a block: a
	// block's record follows its intervals.
	pending []pendingInterval

	ops        []metrics.OpStats // names, units and steps, from the first interval
	totals     []metrics.OpStats
	service    []*metrics.Histogram
	first      time.Time // the first interval's start
	last       time.Time // the last interval's end
	cur        *metrics.Interval
	curN       int // intervals in cur
	curTarget  *result.PlanPoint
	points     []result.Interval
	pointBytes int // pointSize of the points
	targets    []result.PlanPoint
	trajectory map[int]*result.Background

	// deferred are the intervals read from a log whose histograms a later
	// record carries (intervalRecord.Deferred), held until it arrives; a
	// log cut short before it leaves them out of the results. spanPrev is
	// the end of the interval before them, for the continuity check that
	// is made again as they are merged.
	deferred    []deferredInterval
	spanPrev    time.Time
	spanHasPrev bool
}

// deferredInterval is a logged interval waiting for its span's histograms.
type deferredInterval struct {
	index  int
	iv     metrics.Interval
	target *result.PlanPoint
	pacing []PacingRecord
}

func newPhaseBuilder(p PhaseStart, lim limits) *phaseBuilder {
	return &phaseBuilder{lim: lim, start: p, group: 1, trajectory: map[int]*result.Background{}}
}

// pendingInterval is an interval of a blocks phase kept until its block
// arrives.
type pendingInterval struct {
	index int
	iv    metrics.Interval
}

// blockAcc is a growth block with the merge of its intervals.
type blockAcc struct {
	rec         BlockRecord
	totals      []metrics.OpStats
	first, last time.Time
}

// limits are the bounds on a phase's interval points that Points and
// PointBytes state. Every run log is written and read with
// defaultLimits; they are a value carried by the Builder and the Writer
// rather than constants read in place only so that this package's tests
// can run the same merging paths (pairs merged on count and on size, spans
// deferred across merges) with far smaller bounds, on tens of intervals and
// operations instead of thousands, which under the race detector is the
// difference between seconds and many minutes.
type limits struct {
	maxIntervals int // the most points of a phase of few operations
	pointCells   int // the most points × operations
	minBytes     int // the least size bound of the points
	opBytes      int // the size bound per operation of a phase of many
}

// defaultLimits are the bounds of every run log: MaxIntervals, PointCells,
// 4 MiB, 8 KiB per operation.
func defaultLimits() limits {
	return limits{maxIntervals: MaxIntervals, pointCells: PointCells, minBytes: 4 << 20, opBytes: 8 << 10}
}

// points is Points under these limits.
func (l limits) points(ops int) int {
	n := l.maxIntervals
	if ops > 0 {
		n = min(n, l.pointCells/ops)
	}

	return max(2, n-n%2)
}

// bytes is PointBytes under these limits.
func (l limits) bytes(ops int) int { return max(l.minBytes, ops*l.opBytes) }

// add merges interval index: iv its response times, svc its service times.
func (p *phaseBuilder) add(index int, iv metrics.Interval, svc []*metrics.Histogram, target *result.PlanPoint, pacing []PacingRecord) error {
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
		if h == nil || h.TotalCount() == 0 {
			continue
		}

		if p.service[i] == nil {
			p.service[i] = metrics.NewHistogram()
		}

		if dropped := p.service[i].Merge(h); dropped != 0 {
			return fmt.Errorf("phase %q: operation %q: %d service times outside the histogram range", p.start.Name, p.ops[i].Name, dropped)
		}
	}

	if p.start.Model == workload.ModelBlocks {
		kept := metrics.Interval{Start: iv.Start, End: iv.End, Ops: emptyLike(p.ops)}
		if err := addOps(kept.Ops, iv.Ops); err != nil {
			return fmt.Errorf("phase %q: %w", p.start.Name, err)
		}

		p.pending = append(p.pending, pendingInterval{index: index, iv: kept})
	}

	for _, pc := range pacing {
		bg := p.trajectory[pc.Job]
		if bg == nil {
			bg = &result.Background{Operation: pc.Operation}
			p.trajectory[pc.Job] = bg
		}

		bg.Trajectory = append(bg.Trajectory, pc.Point)
	}

	return p.addPoint(iv, target)
}

// addBlock merges a growth block's intervals, which arrived before it,
// and forgets the intervals up to its end.
func (p *phaseBuilder) addBlock(rec BlockRecord) error {
	if p.start.Model != workload.ModelBlocks {
		return fmt.Errorf("phase %q: growth block %d in a phase of model %q", p.start.Name, rec.Index, p.start.Model)
	}

	b := &blockAcc{rec: rec}
	keep := p.pending[:0]

	for _, pi := range p.pending {
		if pi.index >= rec.EndInterval {
			keep = append(keep, pi)
			continue
		}

		if pi.index < rec.FirstInterval {
			continue
		}

		if b.totals == nil {
			b.totals, b.first = emptyLike(p.ops), pi.iv.Start
		}

		b.last = pi.iv.End

		if err := addOps(b.totals, pi.iv.Ops); err != nil {
			return fmt.Errorf("phase %q: block %d: %w", p.start.Name, rec.Index, err)
		}
	}

	if n := rec.EndInterval - rec.FirstInterval; n > 0 && b.totals == nil {
		return fmt.Errorf("phase %q: block %d spans intervals [%d, %d), which an earlier block took",
			p.start.Name, rec.Index, rec.FirstInterval, rec.EndInterval)
	}

	clear(p.pending[len(keep):])
	p.pending = keep
	p.blocks = append(p.blocks, b)

	return nil
}

// addPoint adds an interval to the open point, and closes the point once
// it holds group intervals.
func (p *phaseBuilder) addPoint(iv metrics.Interval, target *result.PlanPoint) error {
	if p.cur == nil {
		p.cur = &metrics.Interval{Start: iv.Start, Ops: emptyLike(p.ops)}
	}

	p.cur.End = iv.End
	p.curN++

	if err := addOps(p.cur.Ops, iv.Ops); err != nil {
		return fmt.Errorf("phase %q: %w", p.start.Name, err)
	}

	if target != nil {
		p.curTarget = target
	}

	if p.curN < p.group {
		return nil
	}

	pt, err := result.NewInterval(*p.cur, p.first)
	if err != nil {
		return fmt.Errorf("phase %q: %w", p.start.Name, err)
	}

	p.points = append(p.points, pt)
	p.pointBytes += pointSize(pt)

	if p.curTarget != nil {
		p.targets = append(p.targets, *p.curTarget)
	}

	p.cur, p.curN, p.curTarget = nil, 0, nil

	n := len(p.points)
	if n >= p.lim.points(len(p.ops)) || (n%2 == 0 && p.pointBytes > p.lim.bytes(len(p.ops))) {
		return p.coarsen()
	}

	return nil
}

// entryBytes is about what an operation's entry in an interval point takes
// in the results file besides its histogram: its fields, indented (650
// bytes measured in the results of a run with 2 operations).
const entryBytes = 700

// pointSize is about what a point takes in the results file.
func pointSize(pt result.Interval) int {
	n := 0
	for _, o := range pt.Operations {
		n += entryBytes + len(o.Histogram)
	}

	return n
}

// coarsen merges the points two by two, exactly (counts and errors added,
// histograms merged), doubling group. The plan point of a merged point is
// that of its later half, the plan at its end.
func (p *phaseBuilder) coarsen() error {
	n := len(p.points) / 2
	hasTargets := len(p.targets) == len(p.points)

	for j := range n {
		a, err := statsOf(p.points[2*j], p.ops)
		if err != nil {
			return fmt.Errorf("phase %q: %w", p.start.Name, err)
		}

		b, err := statsOf(p.points[2*j+1], p.ops)
		if err != nil {
			return fmt.Errorf("phase %q: %w", p.start.Name, err)
		}

		if err := addOps(a.Ops, b.Ops); err != nil {
			return fmt.Errorf("phase %q: %w", p.start.Name, err)
		}

		a.End = b.End

		if p.points[j], err = result.NewInterval(a, p.first); err != nil {
			return fmt.Errorf("phase %q: %w", p.start.Name, err)
		}

		if hasTargets {
			p.targets[j] = p.targets[2*j+1]
		}
	}

	clear(p.points[n:])
	p.points = p.points[:n]
	p.pointBytes = 0

	for _, pt := range p.points {
		p.pointBytes += pointSize(pt)
	}

	if hasTargets {
		p.targets = p.targets[:n]
	}

	p.group *= 2

	return nil
}

// statsOf decodes a point back into the measurements it was made from
// (histograms are stored losslessly), with the phase's units and steps.
func statsOf(pt result.Interval, ops []metrics.OpStats) (metrics.Interval, error) {
	iv := metrics.Interval{Start: pt.Start, End: pt.End, Ops: make([]metrics.OpStats, len(pt.Operations))}

	for i, o := range pt.Operations {
		h, err := decodeHistogram(o.Histogram)
		if err != nil {
			return iv, fmt.Errorf("interval ending %s, operation %q: %w", pt.End.Format(time.RFC3339Nano), o.Name, err)
		}

		errs := make(map[string]int64, len(o.Errors))
		for k, v := range o.Errors {
			errs[k] = v
		}

		iv.Ops[i] = metrics.OpStats{
			Name: o.Name, Count: o.Count, Errors: errs, Docs: o.Docs, Clamped: o.Clamped, Hist: h,
			Unit: ops[i].Unit, Steps: ops[i].Steps,
		}
	}

	return iv, nil
}

// describe takes the phase's operations from its first interval, and
// checks that a later one has the same.
func (p *phaseBuilder) describe(ops []metrics.OpStats, index int) error {
	if p.ops == nil {
		p.ops = make([]metrics.OpStats, len(ops))
		for i, o := range ops {
			p.ops[i] = metrics.OpStats{Name: o.Name, Unit: o.Unit, Steps: o.Steps}
		}
	}

	if len(ops) != len(p.ops) {
		return fmt.Errorf("phase %q: interval %d has %d operations, the first had %d",
			p.start.Name, index, len(ops), len(p.ops))
	}

	for i, o := range ops {
		if o.Name != p.ops[i].Name {
			return fmt.Errorf("phase %q: interval %d has operation %q where the first had %q",
				p.start.Name, index, o.Name, p.ops[i].Name)
		}
	}

	return nil
}

// decode turns a record into a metrics interval and its service-time
// histograms (nil entries where there are none).
func (p *phaseBuilder) decode(rec *intervalRecord) (metrics.Interval, []*metrics.Histogram, error) {
	names := make([]metrics.OpStats, len(rec.Operations))
	for i, o := range rec.Operations {
		names[i] = metrics.OpStats{Name: o.Name, Unit: o.Unit, Steps: o.Steps}
	}

	if err := p.describe(names, rec.Index); err != nil {
		return metrics.Interval{}, nil, err
	}

	iv := metrics.Interval{Start: rec.Start, End: rec.End, Ops: make([]metrics.OpStats, len(rec.Operations))}
	svc := make([]*metrics.Histogram, len(rec.Operations))

	for i, o := range rec.Operations {
		if rec.Deferred && (o.Histogram != "" || o.ServiceHistogram != "") {
			return iv, nil, fmt.Errorf("phase %q: interval %d, operation %q: a deferred interval with histograms", p.start.Name, rec.Index, o.Name)
		}

		h, err := decodeHistogram(o.Histogram)
		if err != nil {
			return iv, nil, fmt.Errorf("phase %q: interval %d, operation %q: %w", p.start.Name, rec.Index, o.Name, err)
		}

		if want := o.Count + p.deferredCount(i); !rec.Deferred && h.TotalCount() != want {
			return iv, nil, fmt.Errorf("phase %q: interval %d, operation %q: histogram holds %d values but count is %d",
				p.start.Name, rec.Index, o.Name, h.TotalCount(), want)
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

// deferredCount is operation i's count over the deferred intervals.
func (p *phaseBuilder) deferredCount(i int) int64 {
	var n int64
	for _, d := range p.deferred {
		n += d.iv.Ops[i].Count
	}

	return n
}

// logged merges an interval record read from a log: at once if it carries
// its own histograms, else (deferred) when the record closing its span does.
func (s *Builder) logged(p *phaseBuilder, rec *intervalRecord) error {
	switch {
	case (rec.Deferred || rec.Group != 0) && s.header.Version < groupedVersion:
		return fmt.Errorf("phase %q: interval %d defers its histograms, which a version %d run log cannot", p.start.Name, rec.Index, s.header.Version)
	case rec.Deferred && rec.Group != 0, rec.Group < 0:
		return fmt.Errorf("phase %q: interval %d: deferred %t with group %d", p.start.Name, rec.Index, rec.Deferred, rec.Group)
	case (rec.Deferred || rec.Group > 1) && p.start.Model == workload.ModelBlocks:
		return fmt.Errorf("phase %q: interval %d: a phase of growth blocks logs each interval's histograms", p.start.Name, rec.Index)
	}

	if want := p.seen + len(p.deferred); rec.Index != want {
		return fmt.Errorf("phase %q: interval %d where %d was expected", p.start.Name, rec.Index, want)
	}

	iv, svc, err := p.decode(rec)
	if err != nil {
		return err
	}

	if !rec.Deferred {
		if width := max(1, rec.Group); width != len(p.deferred)+1 {
			return fmt.Errorf("phase %q: interval %d closes a span of %d intervals, but %d were deferred before it",
				p.start.Name, rec.Index, width, len(p.deferred))
		}

		return s.span(p, deferredInterval{index: rec.Index, iv: iv, target: rec.Target, pacing: rec.Pacing}, svc, false)
	}

	if len(p.deferred) == 0 {
		p.spanPrev, p.spanHasPrev = s.prevEnd[p.start.Phase]
	}

	// Checked now, so that a spliced line is named; checked again as
	// the span is merged.
	if err := s.continues(p.start.Phase, rec.Index, iv.Start, iv.End); err != nil {
		return fmt.Errorf("phase %q: %w", p.start.Name, err)
	}

	p.deferred = append(p.deferred, deferredInterval{index: rec.Index, iv: iv, target: rec.Target, pacing: rec.Pacing})

	return nil
}

// loggedHistograms reads a histograms record: the histograms of the
// deferred intervals no interval record closed.
func (s *Builder) loggedHistograms(data []byte) error {
	var r histogramsRecord
	if err := strictUnmarshal(data, &r); err != nil {
		return err
	}

	if s.header.Version < groupedVersion {
		return fmt.Errorf("a histograms record in a version %d run log", s.header.Version)
	}

	if err := s.sameRun(r.Run, fmt.Sprintf("the histograms of intervals %d to %d", r.First, r.Last)); err != nil {
		return err
	}

	p, err := s.phase(r.Phase)
	if err != nil {
		return err
	}

	n := len(p.deferred)
	if n == 0 || r.First != p.deferred[0].index || r.Last != p.deferred[n-1].index {
		return fmt.Errorf("phase %q: histograms of intervals %d to %d, but the deferred ones are %s", p.start.Name, r.First, r.Last, p.deferredSpan())
	}

	if len(r.Operations) != len(p.ops) {
		return fmt.Errorf("phase %q: histograms of %d operations, the phase has %d", p.start.Name, len(r.Operations), len(p.ops))
	}

	last := p.deferred[n-1]
	p.deferred = p.deferred[:n-1]
	svc := make([]*metrics.Histogram, len(p.ops))

	for i, o := range r.Operations {
		if o.Name != p.ops[i].Name {
			return fmt.Errorf("phase %q: histograms of operation %q where the phase has %q", p.start.Name, o.Name, p.ops[i].Name)
		}

		h, err := decodeHistogram(o.Histogram)
		if err != nil {
			return fmt.Errorf("phase %q: operation %q: %w", p.start.Name, o.Name, err)
		}

		if want := last.iv.Ops[i].Count + p.deferredCount(i); h.TotalCount() != want {
			return fmt.Errorf("phase %q: intervals %d to %d, operation %q: histogram holds %d values but count is %d",
				p.start.Name, r.First, r.Last, o.Name, h.TotalCount(), want)
		}

		last.iv.Ops[i].Hist = h

		if o.ServiceHistogram != "" {
			if svc[i], err = decodeHistogram(o.ServiceHistogram); err != nil {
				return fmt.Errorf("phase %q: operation %q: service times: %w", p.start.Name, o.Name, err)
			}
		}
	}

	return s.span(p, last, svc, true)
}

// deferredSpan names the deferred intervals for a message.
func (p *phaseBuilder) deferredSpan() string {
	if len(p.deferred) == 0 {
		return "none"
	}

	return fmt.Sprintf("%d to %d", p.deferred[0].index, p.deferred[len(p.deferred)-1].index)
}

// span merges the deferred intervals and last, whose histograms (and svc)
// are those of the whole span. The span must lie within one point of the
// results, as the writer makes it, so that no point is closed without its
// histograms. lastDeferred says last was itself deferred (the span closed
// by a histograms record).
func (s *Builder) span(p *phaseBuilder, last deferredInterval, svc []*metrics.Histogram, lastDeferred bool) error {
	if width := len(p.deferred) + 1; width > 1 && p.curN+width > p.group {
		return fmt.Errorf("phase %q: intervals %d to %d share histograms across a point of the results (%d intervals)",
			p.start.Name, p.deferred[0].index, last.index, p.group)
	}

	if len(p.deferred) > 0 || lastDeferred {
		// The deferred intervals were checked for continuity as they
		// were read; the check is made again from the interval before them.
		if p.spanHasPrev {
			s.prevEnd[p.start.Phase] = p.spanPrev
		} else {
			delete(s.prevEnd, p.start.Phase)
		}
	}

	spanned := p.deferred
	p.deferred = nil

	for _, d := range spanned {
		if err := s.interval(p, d.index, d.iv, nil, d.target, d.pacing); err != nil {
			return err
		}
	}

	return s.interval(p, last.index, last.iv, svc, last.target, last.pacing)
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
		Operations: []result.Operation{}, Intervals: slices.Clone(p.points),
		Targets: slices.Clone(p.targets),
	}

	if ph.Intervals == nil {
		ph.Intervals = []result.Interval{}
	}

	if p.cur != nil {
		// The open point, shorter than the others, ends the phase.
		pt, err := result.NewInterval(*p.cur, p.first)
		if err != nil {
			return ph, fmt.Errorf("phase %q: %w", sp.Name, err)
		}

		ph.Intervals = append(ph.Intervals, pt)

		if p.curTarget != nil {
			ph.Targets = append(ph.Targets, *p.curTarget)
		}
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
