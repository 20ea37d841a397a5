package runner

import (
	"context"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/engine/errkind"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// A worker's iteration runs one node: an operation, or a group of nodes run
// in order (a sequence's pass, a composite operation). A group that has a
// registry entry is a measured unit: it is recorded once per execution, from
// its intended start to its last step's end, beside its steps, and it fails
// when one of its steps failed, with the kind of the first failure.

// node is one runnable part of an iteration.
type node struct {
	// rec is the node's entry in the phase's registries; -1 for a group
	// that is not measured (a growth block's sequence).
	rec int

	// fn runs an operation (nil for a group), bounded by timeout; o is
	// the operation, whose arguments an external client is sent.
	fn      op.Func
	timeout time.Duration
	o       *op.Operation

	// steps are a group's nodes, run in order.
	steps []*node

	// counted makes the group one operation of max_operations (a
	// composite: YCSB's read-modify-write is one operation of its
	// operationcount), rather than one per step (a sequence's iteration).
	counted bool

	// dec is the registry entry of the operation's decode time (a unit
	// of kind result.UnitDecode), 0 when it has none: only an entry
	// after the operation's own can hold it.
	dec int
}

// DecodeSuffix ends the name of an operation's decode-time entry
// ("raw:decode"): a character workload names cannot hold, so that it never
// collides with an operation the workload names.
const DecodeSuffix = ":decode"

// decodes reports whether operation o has a decode time to record: it
// maps its documents in the Go engine, or an external client runs it and
// it returns documents (the adapter reports the time its stack spent on
// them, docs/clients.md).
func decodes(o *op.Operation, external bool) bool {
	if !external {
		return o.Decodes()
	}

	switch o.Spec.Op {
	case opkind.Find, opkind.FindOne, opkind.Aggregate:
		return true
	}

	return false
}

// bound is the subset of operations a phase uses, bound to the database, and
// the measured units built from them. Its order is the registry's: workload
// order (a composite followed by its steps), then the phase's iteration.
type bound struct {
	names []string
	nodes []*node
	units map[int]unitMark
	index map[string]int
}

// unitMark is how a measured unit is described in results.
type unitMark struct {
	kind  string
	steps []string
}

// add appends an operation (fn not nil) or a unit to the registry order.
func (b *bound) add(name string, n *node) *node {
	n.rec = len(b.names)
	b.index[name] = n.rec
	b.names = append(b.names, name)
	b.nodes = append(b.nodes, n)

	return n
}

// addDecode appends, when yes, the decode-time entry of the operation node
// n, a unit of kind result.UnitDecode whose one step is n.
func (b *bound) addDecode(n *node, yes bool) {
	if !yes {
		return
	}

	name := b.names[n.rec]
	d := b.add(name+DecodeSuffix, &node{})
	n.dec = d.rec

	if b.units == nil {
		b.units = map[int]unitMark{}
	}

	b.units[d.rec] = unitMark{kind: result.UnitDecode, steps: []string{name}}
}

// addUnit appends a measured unit made of steps.
func (b *bound) addUnit(name, kind string, steps []*node) {
	b.add(name, &node{steps: steps})

	mark := unitMark{kind: kind}
	for _, st := range steps {
		mark.steps = append(mark.steps, b.names[st.rec])
	}

	if b.units == nil {
		b.units = map[int]unitMark{}
	}

	b.units[len(b.names)-1] = mark
}

// bind binds the operations named in used (composites with their steps)
// and, when sequence is not empty, adds the phase's iteration unit.
func (e *Engine) bind(all []*op.Operation, used map[string]bool, sequence []string) *bound {
	b := &bound{index: map[string]int{}}

	for _, o := range all {
		if !used[o.Name()] {
			continue
		}

		if !o.Composite() {
			b.addDecode(b.add(o.Name(), leaf(o, e.DB)), decodes(o, e.Client != nil))
			continue
		}

		u := b.add(o.Name(), &node{counted: true})
		for _, st := range o.Steps {
			u.steps = append(u.steps, b.add(workload.StepName(o.Name(), st.Name()), leaf(st, e.DB)))
		}

		if b.units == nil {
			b.units = map[int]unitMark{}
		}

		b.units[u.rec] = unitMark{kind: result.UnitComposite, steps: b.names[u.rec+1 : u.rec+1+len(u.steps)]}

		// The steps' decode entries follow the composite's own steps, so
		// that its steps stay contiguous in the registry.
		for i, st := range o.Steps {
			b.addDecode(u.steps[i], decodes(st, e.Client != nil))
		}
	}

	if len(sequence) > 0 {
		b.addUnit(workload.IterationUnit, result.UnitIteration, b.group(sequence).steps)
	}

	return b
}

// leaf binds one operation.
func leaf(o *op.Operation, db *mongo.Database) *node {
	return &node{fn: o.BindUntimed(db), timeout: o.Timeout, o: o}
}

// group returns an unmeasured group of the named nodes, in order.
func (b *bound) group(names []string) *node {
	g := &node{rec: -1}
	for _, n := range names {
		g.steps = append(g.steps, b.nodes[b.index[n]])
	}

	return g
}

// markUnits describes the bound's units in a registry.
func (b *bound) markUnits(reg *metrics.Registry) {
	if reg == nil {
		return
	}

	for i, u := range b.units {
		reg.SetUnit(i, u.kind, u.steps)
	}
}

// mix picks an iteration's node: one by weight, or the phase's sequence.
type mix struct {
	nodes []*node
	cum   []float64

	// untracked operations take no max_operations ticket: background jobs
	// run beside the counted work.
	untracked bool
}

// newMix returns the mix of the named operations by weight or, when
// sequence is not empty, the sequence: the phase's iteration unit when the
// bound has one, else an unmeasured group (growth blocks).
func newMix(b *bound, names, sequence []string, weights map[string]float64) *mix {
	if len(sequence) > 0 {
		if i, ok := b.index[workload.IterationUnit]; ok && slices.Equal(b.units[i].steps, sequence) {
			return &mix{nodes: []*node{b.nodes[i]}}
		}

		return &mix{nodes: []*node{b.group(sequence)}}
	}

	m := &mix{}
	total := 0.0

	// Registry order, so that the mix does not depend on how names were
	// listed.
	for i, name := range b.names {
		if !slices.Contains(names, name) {
			continue
		}

		total += weights[name]
		m.nodes = append(m.nodes, b.nodes[i])
		m.cum = append(m.cum, total)
	}

	return m
}

// pick returns the node of one iteration.
func (m *mix) pick(s *datagen.Scope) *node {
	if len(m.nodes) == 1 {
		return m.nodes[0]
	}

	x := s.Float64() * m.cum[len(m.cum)-1]

	i, _ := slices.BinarySearch(m.cum, x)
	// BinarySearch finds the first cum >= x; x equal to a boundary belongs
	// to the next operation.
	for i < len(m.cum)-1 && m.cum[i] <= x {
		i++
	}

	return m.nodes[i]
}

// outcome is what running a node did.
type outcome struct {
	// start is when its first operation started.
	start time.Time

	// docs are the documents its operations returned or wrote.
	docs int64

	// err is its first failure.
	err error

	// whole is false when the phase's stop cut one of its operations off,
	// which are then not recorded, and so neither is the unit.
	whole bool

	// stop tells the worker to stop.
	stop bool
}

// iteration runs one iteration: a node picked from the mix, due at intended
// (zero for closed-loop workers: it is intended when it starts). It returns
// false when the worker must stop.
func (pr *phaseRun) iteration(ctx context.Context, s *datagen.Scope, h handles, m *mix, intended time.Time) bool {
	s.NextIteration()

	return !pr.exec(ctx, s, h, m.pick(s), m.untracked, intended, false).stop
}

// exec runs node n. Its first operation is due at intended; the others
// start when their predecessor returns, and are intended then. ticketed
// says that a counted group around n took n's max_operations ticket.
func (pr *phaseRun) exec(ctx context.Context, s *datagen.Scope, h handles, n *node, untracked bool, intended time.Time, ticketed bool) outcome {
	if n.fn != nil {
		// One clock reading serves as the start and, for closed-loop
		// workers, the intended start.
		start := time.Now()
		if intended.IsZero() {
			intended = start
		}

		if !ticketed && !untracked && !intended.Before(pr.measureFrom) && !pr.ticket() {
			return outcome{stop: true}
		}

		opCtx := h.slot.begin(start, n.timeout)
		if n.dec > 0 {
			h.clock.Reset()
			opCtx = op.WithDecodeClock(opCtx, h.clock)
		}

		docs, err := n.fn(opCtx, s)
		err = h.slot.end(opCtx, err)
		kept := pr.record(ctx, h, n.rec, intended, start, time.Now(), docs, err)

		if n.dec > 0 && kept {
			pr.recordDecode(h, n.dec, intended, h.clock.Elapsed(), docs, err)
		}

		return outcome{start: start, docs: docs, err: err, whole: kept, stop: ctx.Err() != nil}
	}

	out := outcome{whole: true}

	if n.counted && !ticketed && !untracked {
		// One ticket for the whole group, taken when it is due; a group
		// due in the warm-up takes none, nor do its steps.
		at := intended
		if at.IsZero() {
			at = time.Now()
		}

		if !at.Before(pr.measureFrom) && !pr.ticket() {
			return outcome{stop: true}
		}

		ticketed = true
	}

	for k, st := range n.steps {
		at := intended
		if k > 0 {
			at = time.Time{}
		}

		o := pr.exec(ctx, s, h, st, untracked, at, ticketed)
		if k == 0 {
			out.start = o.start
		}

		out.docs += o.docs
		out.whole = out.whole && o.whole

		if out.err == nil {
			out.err = o.err
		}

		if o.stop {
			// A unit cut short is not a unit: it is not recorded.
			out.stop, out.whole = true, false
			return out
		}
	}

	if n.rec >= 0 && out.whole {
		if intended.IsZero() {
			intended = out.start
		}

		pr.recordUnit(h, n.rec, intended, out.start, time.Now(), out.docs, out.err)
	}

	return out
}

// recordDecode files the decode time of one execution of an operation that
// was recorded (see record): successes only, as latencies are, with the
// operation's documents so that the figure per document follows.
func (pr *phaseRun) recordDecode(h handles, rec int, intended time.Time, d time.Duration, docs int64, err error) {
	if err != nil || intended.Before(pr.measureFrom) {
		return
	}

	h.resp.Record(rec, d, docs, "")

	if h.svc != nil {
		h.svc.Record(rec, d, docs, "")
	}
}

// recordUnit files one whole execution of a unit, from its intended start
// (response time) and from its first operation's start (service time). Its
// operations were recorded already, and their failures noted.
func (pr *phaseRun) recordUnit(h handles, rec int, intended, start, end time.Time, docs int64, err error) {
	if intended.Before(pr.measureFrom) {
		return
	}

	var kind string
	if err != nil {
		kind = errkind.Of(err)
	}

	h.resp.Record(rec, end.Sub(intended), docs, kind)

	if h.svc != nil {
		h.svc.Record(rec, end.Sub(start), docs, kind)
	}
}
