package capture

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// Meta is what the workload file needs besides the operations.
type Meta struct {
	Name     string
	Database string
	Duration time.Duration
	// Closed writes a closed-loop phase (one worker per connection seen)
	// and Open an open-loop phase at the source's arrival rate, whatever
	// the inference (see Capture.InferLoadModel).
	Closed, Open bool
	// LoadDocuments is how many documents each collection that is read,
	// updated or deleted gets before the run (0: none), unless the source
	// shows the collection's load (inserts before any other operation):
	// then the load is the documents those inserted, unless LoadSet (the
	// user gave LoadDocuments, which then applies to every collection).
	LoadDocuments int64
	LoadSet       bool
	// Sources are the files read, for the description.
	Sources []string
	// Replay writes the run as a replay of the source's timeline (the
	// capture must have read with Options.Timeline) at Speed (default 1)
	// instead of a weighted mix at the source's rate.
	Replay bool
	Speed  float64
}

// WorkloadAndShapes writes the workload file and the shape file that goes
// beside it (see ShapeFile): the captured shape table with the name of the
// operation each shape became, which capture --fidelity compares with a
// run of that workload.
func (c *Capture) WorkloadAndShapes(meta Meta) ([]byte, *ShapeFile, []string, error) {
	g := &gen{keep: c.opts.KeepValues}
	w := &writer{c: c, g: g, meta: meta, templates: map[string]*yaml.Node{}, names: map[*Shape]string{}, loaded: map[string]int64{}}
	w.lead = c.leadApplies(meta)

	data, notes, err := w.write()
	if err != nil {
		return nil, nil, notes, err
	}

	return data, c.shapeFile(meta, data, w.names, w.lead), notes, nil
}

// leadApplies is whether the inserts read before any other operation of
// the application become the load step instead of operations of the mix:
// when some other operation followed them (a capture of inserts alone is
// all mix), and not for a replay, which sends the timeline as it was.
func (c *Capture) leadApplies(meta Meta) bool { return c.steady && !meta.Replay }

type writer struct {
	c    *Capture
	g    *gen
	meta Meta
	// lead is whether the inserts before any other operation are the
	// load step (Capture.leadApplies); loaded the documents they
	// inserted, by collection.
	lead      bool
	loaded    map[string]int64
	templates map[string]*yaml.Node
	notes     []string
	// names are the operation names of the shapes written.
	names map[*Shape]string
}

func (w *writer) write() ([]byte, []string, error) {
	shapes := w.c.Shapes()

	ops := seq()
	names := map[string]int{}

	var total int64

	colls := []string{}
	seen := map[string]bool{}
	read := map[string]bool{}
	addColl := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			colls = append(colls, name)
		}
	}

	var skipped, leadOps int64

	for _, s := range shapes {
		if w.lead && s.lead > 0 {
			w.loaded[s.Coll] += s.leadDocs
			leadOps += s.lead
			addColl(s.Coll)

			if s.lead == s.Count {
				continue
			}
		}

		op := w.operation(s)
		if op == nil {
			skipped += s.Count

			continue
		}

		base := opName(s)
		names[base]++

		name := base
		if names[base] > 1 {
			name = base + "_" + strconv.Itoa(names[base])
		}

		op.Content = append([]*yaml.Node{str("name"), str(name)}, op.Content...)
		// The shape's key ties the operation to the shape table (and
		// the shape file) for a reader of the workload.
		op.Content[1].LineComment = "shape " + s.ID
		w.names[s] = name
		ops.Content = append(ops.Content, op)
		total += s.Count

		if w.lead {
			total -= s.lead
		}

		if s.Op != OpCommand {
			addColl(s.Coll)

			if s.Op != OpInsert {
				read[s.Coll] = true
			}
		}
	}

	if skipped > 0 {
		w.notes = append(w.notes, fmt.Sprintf("%d update or delete commands whose statements the log does not show are not in the workload "+
			"(a statement is logged when it is slow itself: capture with slowms 0)", skipped))
	}

	if leadOps > 0 {
		w.notes = append(w.notes, fmt.Sprintf("%d inserts (%s) ran before any other operation: they are the load step, not operations of the mix",
			leadOps, w.loadedText()))
	}

	if len(ops.Content) == 0 {
		return nil, w.notes, fmt.Errorf("no operation to write: the logs hold no slow-query entry of an application's operation (set slowms 0, or profiling level 2, to log them all)")
	}

	for _, ix := range w.c.indexes {
		addColl(ix.Coll)
	}

	doc := block()
	doc.HeadComment = w.header(total, len(ops.Content))
	doc.Content = append(doc.Content,
		str("name"), str(w.meta.Name),
		str("description"), str(w.description(total, len(ops.Content))),
		str("database"), str(w.meta.Database),
		str("collections"), w.collections(colls))

	if load := w.load(colls, read); len(load.Content) > 0 {
		doc.Content = append(doc.Content, str("load"), load)
	}

	var run *yaml.Node

	if w.meta.Replay {
		var err error
		if run, err = w.replayPhase(); err != nil {
			return nil, w.notes, err
		}
	} else {
		lm, err := w.c.InferLoadModel(w.meta)
		if err != nil {
			return nil, w.notes, err
		}

		run = w.phase(lm)
	}

	doc.Content = append(doc.Content, str("run"), run, str("operations"), ops)

	var b bytes.Buffer

	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)

	if err := enc.Encode(doc); err != nil {
		return nil, w.notes, err
	}

	if err := enc.Close(); err != nil {
		return nil, w.notes, err
	}

	return b.Bytes(), w.notes, nil
}

func (w *writer) header(total int64, shapes int) string {
	lines := []string{
		fmt.Sprintf("Captured by mongobench capture from %d operations of %s.", total, strings.Join(w.meta.Sources, ", ")),
		fmt.Sprintf("Each of the %d query shapes is an operation, weighted by its count.", shapes),
	}

	if w.c.opts.KeepValues {
		lines = append(lines, "Values of the source ARE copied here (--keep-values): treat this file as the log itself.")
	} else {
		lines = append(lines,
			"No value of the source is copied: every value position is a generator inferred from the values seen",
			"(ranges rounded outward to two significant digits, strings replaced by stand-ins of their length).",
			"Field names, collection and index names and each operation's structure are kept.")
	}

	return strings.Join(lines, "\n")
}

func (w *writer) description(total int64, shapes int) string {
	values := "no value of the source is copied"
	if w.c.opts.KeepValues {
		values = "values of the source are copied (--keep-values)"
	}

	return fmt.Sprintf("Captured from %d operations in %d shapes by mongobench capture; %s.", total, shapes, values)
}

// loadedText lists the documents of the load seen, by collection.
func (w *writer) loadedText() string {
	colls := make([]string, 0, len(w.loaded))
	for c := range w.loaded {
		colls = append(colls, c)
	}

	sort.Strings(colls)

	parts := make([]string, len(colls))
	for i, c := range colls {
		parts[i] = strconv.FormatInt(w.loaded[c], 10) + " documents into " + c
	}

	return strings.Join(parts, ", ")
}

// phase writes the run in the load model inferred (Capture.InferLoadModel).
func (w *writer) phase(lm LoadModel) *yaml.Node {
	run := block()

	if lm.Closed {
		run.Content = append(run.Content, str("concurrency"), intNode(int64(lm.Workers)))

		if lm.ThinkTime > 0 {
			run.Content = append(run.Content, str("think_time"), str(lm.ThinkTime.String()))
		}
	} else {
		run.Content = append(run.Content,
			str("rate"), str(fmtRate(lm.Rate)+"/s"),
			str("max_in_flight"), intNode(int64(lm.MaxInFlight)))
	}

	d := w.meta.Duration
	if d <= 0 {
		d = 30 * time.Second
	}

	run.Content = append(run.Content,
		str("duration"), str(d.String()),
		// A captured mix may hold operations that fail on another server
		// or on generated data (a duplicate key, an unsupported command):
		// a few are tolerated, and counted by kind in the results.
		str("max_error_rate"), floatNode(0.01))

	return run
}

func sig3(f float64) float64 {
	if f <= 0 {
		return 1
	}

	mag := math.Pow(10, math.Floor(math.Log10(f))-2)

	return math.Max(math.Round(f/mag)*mag, 0.001)
}

func (w *writer) collections(colls []string) *yaml.Node {
	out := seq()

	for _, name := range colls {
		cn := block()
		cn.Content = append(cn.Content, str("name"), str(name))

		ixs := seq()

		for _, ix := range w.c.indexes {
			if ix.Coll != name {
				continue
			}

			in := block()
			in.Content = append(in.Content, str("keys"), literal(ix.Keys))

			if ix.Name != "" {
				in.Content = append(in.Content, str("name"), str(ix.Name))
			}

			if ix.Unique {
				in.Content = append(in.Content, str("unique"), boolNode(true))
			}

			ixs.Content = append(ixs.Content, in)
		}

		if len(ixs.Content) > 0 {
			cn.Content = append(cn.Content, str("indexes"), ixs)
		}

		out.Content = append(out.Content, cn)
	}

	return out
}

func (w *writer) load(colls []string, read map[string]bool) *yaml.Node {
	out := seq()

	for _, name := range colls {
		n := w.meta.LoadDocuments
		if seen, ok := w.loaded[name]; ok && !w.meta.LoadSet {
			n = seen
		}

		if n <= 0 || (!read[name] && w.loaded[name] == 0) {
			continue
		}

		st := block()
		st.Content = append(st.Content,
			str("collection"), str(name),
			str("documents"), intNode(n),
			str("document"), w.document(name))
		out.Content = append(out.Content, st)
	}

	return out
}

// document is a collection's document template, shared by its load and
// its inserts: from the inserted documents when the log shows them
// (drivers send them outside the logged command, so it rarely does), else
// from the fields its operations filter and set. An integer _id becomes a
// counter shared by the load and the inserts, and a field with a unique
// index a counter of its own, so that no generated document is a
// duplicate key; any other _id is left to the server.
func (w *writer) document(coll string) *yaml.Node {
	if t, ok := w.templates[coll]; ok {
		return t
	}

	fields := []*fieldNode{}
	have := map[string]bool{}
	addFields := func(n *node) {
		if n == nil {
			return
		}

		for _, f := range n.fields {
			if !strings.HasPrefix(f.key, "$") && !have[f.key] {
				have[f.key] = true
				fields = append(fields, f)
			}
		}
	}

	for _, s := range w.c.order {
		if s.Coll == coll && s.Op == OpInsert {
			for _, p := range s.parts {
				if p.name == "documents" {
					addFields(p.node)
				}
			}
		}
	}

	for _, s := range w.c.order {
		if s.Coll != coll || s.Op == OpInsert || s.Op == OpCommand {
			continue
		}

		for _, p := range s.parts {
			switch {
			case p.node == nil:
			case p.name == "filter" || p.name == "query":
				addFields(p.node)
			case p.name == "update":
				for _, op := range p.node.fields {
					if op.key == "$set" || op.key == "$setOnInsert" || op.key == "$inc" {
						addFields(op.node)
					}
				}

				if s.Kind == opkind.ReplaceOne {
					addFields(p.node)
				}
			}
		}
	}

	unique := map[string]bool{}

	for _, ix := range w.c.indexes {
		if ix.Coll == coll && ix.Unique && len(ix.Keys.Doc) == 1 {
			unique[ix.Keys.Doc[0].Key] = true
		}
	}

	m := flowMap()

	for _, f := range fields {
		v := w.fieldValue(f.node, f.key)

		switch {
		case f.key == "_id" || unique[f.key]:
			v = w.uniqueValue(coll, f)
			if v == nil {
				continue
			}
		case v == nil:
			continue
		}

		m.Content = append(m.Content, str(f.key), v)
	}

	w.templates[coll] = m

	return m
}

// fieldValue is a document field's generator from what a filter or an
// update saw there: a value, or the operand of its operators ($gt, $in).
func (w *writer) fieldValue(n *node, key string) *yaml.Node {
	switch {
	case n.slot != nil && n.slot.n >= n.docN:
		return w.g.scalar(n.slot, key)
	case n.docN > 0 && !opsOnly(n):
		return w.g.template(n, key)
	case n.docN > 0:
		for _, op := range n.fields {
			if op.node.slot != nil {
				return w.g.scalar(op.node.slot, key)
			}

			if op.node.elem != nil && op.node.elem.slot != nil {
				return w.g.scalar(op.node.elem.slot, key)
			}
		}
	case n.listN > 0:
		return w.g.template(n, key)
	}

	return nil
}

func opsOnly(n *node) bool {
	for _, f := range n.fields {
		if !strings.HasPrefix(f.key, "$") {
			return false
		}
	}

	return len(n.fields) > 0
}

// uniqueValue is a counter for a key field: integers count on from the
// lowest seen, other values are formatted from a counter.
func (w *writer) uniqueValue(coll string, f *fieldNode) *yaml.Node {
	var s *slot
	switch {
	case f.node.slot != nil:
		s = f.node.slot
	case f.node.docN > 0:
		for _, op := range f.node.fields {
			if op.node.slot != nil {
				s = op.node.slot
			} else if op.node.elem != nil && op.node.elem.slot != nil {
				s = op.node.elem.slot
			}

			if s != nil {
				break
			}
		}
	}

	counter := safeName(coll + "_" + f.key)

	if s != nil && s.kinds[KindInt] > 0 && s.kinds[KindInt] >= s.kinds[KindString] {
		start := s.imin
		if !w.g.keep {
			start = int64(roundDown(float64(start)))
		}

		return gmap("^seq", pairs("counter", str(counter), "start", intNode(start)))
	}

	if f.key == "_id" {
		return nil
	}

	return gmap("^format", pairs("pattern", str("u%09d"), "args", seqOf(gmap("^seq", pairs("counter", str(counter))))))
}

func seqOf(n ...*yaml.Node) *yaml.Node {
	s := flowSeq()
	s.Content = n

	return s
}

// operation writes a shape as an operation (without its name), or nil for
// a shape the workload cannot run.
func (w *writer) operation(s *Shape) *yaml.Node {
	op := block()
	add := func(k string, v *yaml.Node) { op.Content = append(op.Content, str(k), v) }

	kind := s.Kind

	switch s.Op {
	case OpDistinct, OpFindAndModify, OpCommand:
		add("op", str(opkind.RunCommand))
		add("weight", intNode(s.Count))
		add("command", w.command(s))
		w.readPref(s, add)

		return op
	case OpInsert:
		count := s.Count
		n := s.inserted.medianInt()

		if w.lead && s.lead > 0 {
			// The inserts of the load are not the mix's: its weight and
			// batch are of the inserts after them.
			count -= s.lead
			n = s.steadyInserted.medianInt()
		}

		if n > 1 {
			kind = opkind.InsertMany
		} else {
			kind = opkind.InsertOne
		}

		add("op", str(kind))
		add("collection", str(s.Coll))
		add("weight", intNode(count))
		add("document", w.document(s.Coll))

		if n > 1 {
			add("batch_size", intNode(min(n, 1000)))
		}

		w.writeConcern(s, add)

		return op
	case OpUpdate, OpDelete:
		if !s.holdable() {
			return nil
		}
	case OpFind, OpAggregate, OpCount:
	}

	add("op", str(kind))
	add("collection", str(s.Coll))
	add("weight", intNode(s.Count))

	for _, p := range s.parts {
		switch p.name {
		case "filter":
			add("filter", w.g.template(p.node, ""))
		case "sort", "projection":
			add(p.name, literal(p.lit))
		case "limit", "skip":
			if p.node.slot != nil && p.node.slot.numbers > 0 {
				add(p.name, w.g.intGen(p.node.slot, "", true))
			}
		case "pipeline":
			add("pipeline", w.pipeline(p))
		case "update":
			field := "update"
			if kind == opkind.ReplaceOne {
				field = "replacement"
			}

			if p.mode == modePipeline {
				add(field, w.pipeline(p))
			} else {
				add(field, w.g.template(p.node, ""))
			}
		case "upsert":
			if p.lit.Kind == KindBool && p.lit.Int == 1 {
				add("upsert", boolNode(true))
			}
		}
	}

	switch s.Op {
	case OpFind, OpAggregate, OpCount:
		w.readPref(s, add)
	default:
		w.writeConcern(s, add)
	}

	return op
}

func (w *writer) pipeline(p *part) *yaml.Node {
	out := flowSeq()

	for i := range p.lit.Arr {
		if i < len(p.stages) && p.stages[i] != nil {
			st := flowMap()
			st.Content = append(st.Content, str(p.lit.Arr[i].Doc[0].Key), w.g.template(p.stages[i], ""))
			out.Content = append(out.Content, st)

			continue
		}

		out.Content = append(out.Content, literal(&p.lit.Arr[i]))
	}

	return out
}

// command writes distinct and findAndModify (which have no operation kind
// of their own) and administration commands as runCommand templates.
func (w *writer) command(s *Shape) *yaml.Node {
	m := flowMap()

	switch s.Op {
	case OpCommand:
		first := s.command.Doc[0]

		v := intNode(1)

		switch first.Val.Kind {
		case KindString:
			// A collection's name is structure; any other string may be
			// a value (a user's name) and is not copied.
			for _, o := range w.c.order {
				if o.Coll == first.Val.Str || w.c.opts.KeepValues {
					v = str(first.Val.Str)

					break
				}
			}
		case KindInt, KindBool, KindFloat:
			v = literal(&first.Val)
		}

		m.Content = append(m.Content, str(first.Key), v)

		return m
	case OpDistinct:
		m.Content = append(m.Content, str("distinct"), str(s.Coll))
	default:
		m.Content = append(m.Content, str("findAndModify"), str(s.Coll))
	}

	for _, p := range s.parts {
		switch {
		case p.node != nil:
			m.Content = append(m.Content, str(p.name), w.g.template(p.node, ""))
		case p.mode == modePipeline:
			m.Content = append(m.Content, str(p.name), w.pipeline(p))
		default:
			m.Content = append(m.Content, str(p.name), literal(p.lit))
		}
	}

	return m
}

var readPreferences = map[string]bool{"primary": true, "primaryPreferred": true, "secondary": true, "secondaryPreferred": true, "nearest": true}

func (w *writer) readPref(s *Shape, add func(string, *yaml.Node)) {
	if readPreferences[s.readPref] && s.readPref != "primary" {
		add("read_preference", str(s.readPref))
	}
}

func (w *writer) writeConcern(s *Shape, add func(string, *yaml.Node)) {
	if s.writeConcern == nil {
		return
	}

	wc := flowMap()

	if v, ok := s.writeConcern.Get("w"); ok && (v.Kind == KindInt || v.Kind == KindString) {
		wc.Content = append(wc.Content, str("w"), literal(v))
	}

	if v, ok := s.writeConcern.Get("j"); ok && v.Kind == KindBool {
		wc.Content = append(wc.Content, str("j"), literal(v))
	}

	if len(wc.Content) > 0 {
		add("write_concern", wc)
	}
}

// medianInt is the median of the integers seen.
func (s *slot) medianInt() int64 {
	type kv struct {
		v int64
		n int64
	}

	var vals []kv

	for k, n := range s.distinct {
		if k != "" && k[0] == byte('a'+KindInt) {
			v, _ := strconv.ParseInt(k[1:], 10, 64)
			vals = append(vals, kv{v, n})
		}
	}

	sort.Slice(vals, func(i, j int) bool { return vals[i].v < vals[j].v })

	var seen int64
	for _, x := range vals {
		seen += x.n
		if 2*seen >= s.n {
			return x.v
		}
	}

	return 1
}

// opName is an operation's name: its kind and collection.
func opName(s *Shape) string {
	switch s.Op {
	case OpCommand:
		return "command_" + safeName(s.command.Doc[0].Key)
	case OpDistinct:
		return "distinct_" + safeName(s.Coll)
	case OpFindAndModify:
		return "findAndModify_" + safeName(s.Coll)
	case OpInsert:
		return "insert_" + safeName(s.Coll)
	default:
		return s.Kind + "_" + safeName(s.Coll)
	}
}

// safeName keeps letters, digits, _, . and -.
func safeName(s string) string {
	var b strings.Builder

	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}

	return b.String()
}

func block() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }
func seq() *yaml.Node   { return &yaml.Node{Kind: yaml.SequenceNode} }
