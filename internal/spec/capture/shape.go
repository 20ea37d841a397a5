package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// mode says how a part of a command is shaped: its values replaced
// (mode value), kept as written because it is structure (a sort's
// directions, a projection, a pipeline's $group), or, for a pipeline,
// stage by stage.
type mode uint8

const (
	modeValue mode = iota
	modeStruct
	modePipeline
)

// partIn is one part of one record's command.
type partIn struct {
	name string
	mode mode
	v    *Value
	// inKey is false for a part that is not in the shape (an insert's
	// documents, whose fields vary from document to document).
	inKey bool
}

// description is a record's shape: the workload operation kind it becomes,
// its parts, and the shape's text.
type description struct {
	kind  string
	parts []partIn
	text  string
}

// logical are the operators whose arrays hold clauses, shaped one by one.
var logical = map[string]bool{"$and": true, "$or": true, "$nor": true}

// structural are operator arguments that are part of a query's meaning,
// not values: a regular expression's options, a $type's type name.
var structural = map[string]bool{"$options": true, "$type": true}

// valueStages are the pipeline stages whose arguments are values; the
// others ($group, $project, $lookup, …) are structure and kept.
var valueStages = map[string]bool{"$match": true, "$limit": true, "$skip": true, "$sample": true}

// describe finds a record's shape.
func describe(r *Record) description {
	d := description{}
	cmd := r.Cmd
	p := func(name string, m mode) {
		if cmd == nil {
			return
		}

		if v, ok := cmd.Get(name); ok {
			d.parts = append(d.parts, partIn{name: name, mode: m, v: v, inKey: true})
		}
	}

	switch r.Op {
	case OpFind:
		d.kind = opkind.Find

		if l, ok := cmd.Get("limit"); ok && l.Kind == KindInt && (l.Int == 1 || l.Int == -1) {
			d.kind = opkind.FindOne
		}

		d.parts = append(d.parts, partIn{name: "filter", mode: modeValue, v: orEmpty(cmd, "filter"), inKey: true})
		p("sort", modeStruct)
		p("projection", modeStruct)

		if d.kind == opkind.Find {
			p("limit", modeValue)
		}

		p("skip", modeValue)
	case OpAggregate:
		d.kind = opkind.Aggregate
		p("pipeline", modePipeline)
	case OpCount:
		d.kind = opkind.CountDocuments
		d.parts = append(d.parts, partIn{name: "filter", mode: modeValue, v: orEmpty(cmd, "query"), inKey: true})
		p("limit", modeValue)
		p("skip", modeValue)
	case OpDistinct:
		d.kind = opkind.RunCommand
		p("key", modeStruct)
		p("query", modeValue)
	case OpFindAndModify:
		d.kind = opkind.RunCommand
		p("query", modeValue)
		p("sort", modeStruct)
		updatePart(&d, cmd, "update")
		p("remove", modeStruct)
		p("new", modeStruct)
		p("upsert", modeStruct)
		p("fields", modeStruct)
	case OpInsert:
		d.kind = "insert"

		if docs, ok := cmd.Get("documents"); ok {
			d.parts = append(d.parts, partIn{name: "documents", mode: modeValue, v: docs})
		}
	case OpUpdate:
		d.kind = "update"

		if cmd != nil {
			d.kind = opkind.UpdateOne
			if multi, ok := cmd.Get("multi"); ok && multi.Kind == KindBool && multi.Int == 1 {
				d.kind = opkind.UpdateMany
			}

			if u, ok := cmd.Get("u"); ok && u.Kind == KindDoc && !hasOperator(u) {
				d.kind = opkind.ReplaceOne
			}

			d.parts = append(d.parts, partIn{name: "filter", mode: modeValue, v: orEmpty(cmd, "q"), inKey: true})
			updatePart(&d, cmd, "u")
			p("upsert", modeStruct)
		}
	case OpDelete:
		d.kind = "delete"

		if cmd != nil {
			d.kind = opkind.DeleteMany
			if l, ok := cmd.Get("limit"); ok {
				if n, _ := l.Number(); n == 1 {
					d.kind = opkind.DeleteOne
				}
			}

			d.parts = append(d.parts, partIn{name: "filter", mode: modeValue, v: orEmpty(cmd, "q"), inKey: true})
		}
	case OpCommand:
		d.kind = opkind.RunCommand
	}

	var b strings.Builder

	b.WriteString(d.kind)

	switch r.Op {
	case OpCommand:
		b.WriteString(" " + cmd.Doc[0].Key)
	case OpDistinct, OpFindAndModify:
		b.WriteString(" " + string(r.Op) + " " + r.Coll)
	default:
		b.WriteString(" " + r.Coll)
	}

	if cmd == nil && (r.Op == OpUpdate || r.Op == OpDelete) {
		b.WriteString(" (statements not in the log)")
	}

	for _, pt := range d.parts {
		if !pt.inKey {
			continue
		}

		b.WriteString(" " + pt.name + " ")
		shapeText(&b, pt.v, pt.mode, "", true)
	}

	d.text = b.String()

	return d
}

// updatePart adds an update document or pipeline: its operators' operands
// are values; an update pipeline is structure, as an aggregate's is.
func updatePart(d *description, cmd *Value, name string) {
	u, ok := cmd.Get(name)
	if !ok {
		return
	}

	m := modeValue
	if u.Kind == KindArray {
		m = modePipeline
	}

	d.parts = append(d.parts, partIn{name: "update", mode: m, v: u, inKey: true})
}

var emptyDoc = Value{Kind: KindDoc}

func orEmpty(cmd *Value, name string) *Value {
	if v, ok := cmd.Get(name); ok {
		return v
	}

	return &emptyDoc
}

func hasOperator(v *Value) bool {
	for _, f := range v.Doc {
		if strings.HasPrefix(f.Key, "$") {
			return true
		}
	}

	return false
}

// fieldRef reports whether a string is a field path or variable
// ("$price", "$$NOW"): structure, not a value.
func fieldRef(v *Value) bool {
	return v.Kind == KindString && len(v.Str) > 1 && v.Str[0] == '$'
}

func scalar(v *Value) bool { return v.Kind != KindDoc && v.Kind != KindArray }

// shapeText writes a value's shape. In value mode every value is "?", an
// array of values is "[?]", and the fields of a filter (and of each
// clause of $and, $or, $nor) are in alphabetical order, as MongoDB's query
// shape normalises them; structure is written as it is.
func shapeText(b *strings.Builder, v *Value, m mode, key string, top bool) {
	switch {
	case m == modeStruct:
		literalText(b, v)
	case m == modePipeline && v.Kind == KindArray:
		b.WriteString("[")

		for i := range v.Arr {
			if i > 0 {
				b.WriteString(", ")
			}

			st := &v.Arr[i]
			if st.Kind == KindDoc && len(st.Doc) == 1 && valueStages[st.Doc[0].Key] {
				b.WriteString("{" + st.Doc[0].Key + ": ")
				shapeText(b, &st.Doc[0].Val, modeValue, "", true)
				b.WriteString("}")
			} else {
				literalText(b, st)
			}
		}

		b.WriteString("]")
	case structural[key] || fieldRef(v):
		literalText(b, v)
	case v.Kind == KindDoc:
		fields := v.Doc
		if top {
			fields = append([]Field(nil), v.Doc...)
			sort.SliceStable(fields, func(i, j int) bool { return fields[i].Key < fields[j].Key })
		}

		b.WriteString("{")

		for i := range fields {
			if i > 0 {
				b.WriteString(", ")
			}

			b.WriteString(quoteKey(fields[i].Key) + ": ")
			shapeText(b, &fields[i].Val, modeValue, fields[i].Key, false)
		}

		b.WriteString("}")
	case v.Kind == KindArray && logical[key]:
		b.WriteString("[")

		for i := range v.Arr {
			if i > 0 {
				b.WriteString(", ")
			}

			shapeText(b, &v.Arr[i], modeValue, "", true)
		}

		b.WriteString("]")
	case v.Kind == KindArray:
		for i := range v.Arr {
			if !scalar(&v.Arr[i]) {
				b.WriteString("[")
				shapeText(b, &v.Arr[i], modeValue, "", false)
				b.WriteString("]")

				return
			}
		}

		b.WriteString("[?]")
	default:
		b.WriteString("?")
	}
}

// literalText writes structure as it is, compactly.
func literalText(b *strings.Builder, v *Value) {
	switch v.Kind {
	case KindNull:
		b.WriteString("null")
	case KindBool:
		b.WriteString(strconv.FormatBool(v.Int == 1))
	case KindInt:
		b.WriteString(strconv.FormatInt(v.Int, 10))
	case KindFloat:
		b.WriteString(strconv.FormatFloat(v.Num, 'g', -1, 64))
	case KindString:
		b.WriteString(strconv.Quote(v.Str))
	case KindDoc:
		b.WriteString("{")

		for i := range v.Doc {
			if i > 0 {
				b.WriteString(", ")
			}

			b.WriteString(quoteKey(v.Doc[i].Key) + ": ")
			literalText(b, &v.Doc[i].Val)
		}

		b.WriteString("}")
	case KindArray:
		b.WriteString("[")

		for i := range v.Arr {
			if i > 0 {
				b.WriteString(", ")
			}

			literalText(b, &v.Arr[i])
		}

		b.WriteString("]")
	default:
		// A date, an ObjectId, …: a value even inside structure.
		b.WriteString("?")
	}
}

// quoteKey quotes a key that would not read as one name.
func quoteKey(k string) string {
	if k == "" || strings.ContainsAny(k, " ,:{}[]\"'") {
		return strconv.Quote(k)
	}

	return k
}

// Shape is one query shape and what was observed of its operations.
type Shape struct {
	// ID is a stable key: the first eight hex digits of the SHA-256 of
	// Text.
	ID string
	// Text is the readable shape: the operation kind, the collection and
	// the shaped parts.
	Text string
	// Kind is the workload operation kind (find, updateOne, …); "update"
	// and "delete" for write commands whose statements are not in the log.
	Kind   string
	Op     Op
	DB     string
	Coll   string
	Count  int64
	millis map[int64]int64
	// micros counts the durations of the operations whose source gave
	// microseconds (a recording's durationMicros), rounded to three
	// significant digits so that the map stays small; microN is how many.
	micros map[int64]int64
	microN int64
	parts  []*part
	// inserted counts an insert's documents per command; steadyInserted
	// only of the commands after the load (see Capture.add).
	inserted, steadyInserted *slot
	// lead counts the inserts read before any other operation, leadDocs
	// their documents: the application's load.
	lead, leadDocs int64
	// readPref is the first read preference seen.
	readPref string
	// writeConcern is the first write concern seen.
	writeConcern *Value
	// command is an administration command's name and first value.
	command *Value
}

// part is one part of a shape: a literal (structure, the first seen) or
// the merged observations of its values.
type part struct {
	name   string
	mode   mode
	lit    *Value
	node   *node
	stages []*node
}

func newShape(r *Record, d description) *Shape {
	sum := sha256.Sum256([]byte(d.text))
	s := &Shape{
		ID: hex.EncodeToString(sum[:4]), Text: d.text, Kind: d.kind, Op: r.Op, DB: r.DB, Coll: r.Coll,
		millis: map[int64]int64{}, micros: map[int64]int64{}, inserted: &slot{}, steadyInserted: &slot{},
	}

	for _, pt := range d.parts {
		np := &part{name: pt.name, mode: pt.mode, lit: pt.v}

		switch pt.mode {
		case modeValue:
			np.node = &node{}
			np.lit = nil
		case modePipeline:
			if pt.v.Kind == KindArray {
				np.stages = make([]*node, len(pt.v.Arr))
				for i := range pt.v.Arr {
					if st := &pt.v.Arr[i]; st.Kind == KindDoc && len(st.Doc) == 1 && valueStages[st.Doc[0].Key] {
						np.stages[i] = &node{}
					}
				}
			}
		case modeStruct:
		}

		s.parts = append(s.parts, np)
	}

	if r.Op == OpCommand && r.Cmd != nil && len(r.Cmd.Doc) > 0 {
		s.command = r.Cmd
	}

	return s
}

// add counts one record of the shape.
func (s *Shape) add(r *Record, d description, lead bool) {
	s.Count++
	s.millis[r.Millis]++

	if r.Micros > 0 {
		s.micros[sig3Micros(r.Micros)]++
		s.microN++
	}

	if r.Op == OpInsert {
		s.inserted.add(&Value{Kind: KindInt, Int: r.NInserted})

		if lead {
			s.lead++
			s.leadDocs += r.NInserted
		} else {
			s.steadyInserted.add(&Value{Kind: KindInt, Int: r.NInserted})
		}
	}

	if r.Cmd != nil {
		if rp, ok := r.Cmd.Get("$readPreference"); ok && s.readPref == "" {
			s.readPref = rp.getString("mode")
		}

		if wc, ok := r.Cmd.Get("writeConcern"); ok && s.writeConcern == nil && wc.Kind == KindDoc {
			s.writeConcern = wc
		}
	}

	for i, pt := range d.parts {
		if i >= len(s.parts) || s.parts[i].name != pt.name {
			// A part the shape does not have (only an insert's
			// documents, which are not in the key).
			continue
		}

		sp := s.parts[i]

		switch sp.mode {
		case modeValue:
			if pt.name == "documents" && pt.v.Kind == KindArray {
				for j := range pt.v.Arr {
					sp.node.add(&pt.v.Arr[j], "")
				}
			} else {
				sp.node.add(pt.v, "")
			}
		case modePipeline:
			for j, n := range sp.stages {
				if n != nil && j < len(pt.v.Arr) && len(pt.v.Arr[j].Doc) == 1 {
					n.add(&pt.v.Arr[j].Doc[0].Val, "")
				}
			}
		case modeStruct:
		}
	}
}

// Percentile returns the p-th percentile (nearest rank) of the server's
// time of the shape's operations, in milliseconds.
func (s *Shape) Percentile(p float64) int64 { return percentile(s.millis, s.Count, p) }

// PercentileMicros is Percentile in microseconds (to three significant
// digits), when the source gave every operation of the shape in
// microseconds; else ok is false. A log's whole milliseconds are
// truncated: a median of "3 ms" may be 3.9, which matters when it is
// compared with a run's latency.
func (s *Shape) PercentileMicros(p float64) (int64, bool) {
	if s.microN == 0 || s.microN != s.Count {
		return 0, false
	}

	return percentile(s.micros, s.Count, p), true
}

// percentile is the nearest-rank p-th percentile of n values counted by
// value.
func percentile(counts map[int64]int64, n int64, p float64) int64 {
	keys := make([]int64, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}

	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })

	rank := int64(p / 100 * float64(n))
	if float64(rank) < p/100*float64(n) {
		rank++
	}

	rank = max(rank, 1)

	var seen int64
	for _, k := range keys {
		seen += counts[k]
		if seen >= rank {
			return k
		}
	}

	return 0
}

// sig3Micros rounds a duration in microseconds to three significant
// digits (1% at most): the percentiles need no more, and the count map
// then holds at most 900 keys per power of ten.
func sig3Micros(us int64) int64 {
	if us < 1000 {
		return us
	}

	mag := int64(math.Pow(10, math.Floor(math.Log10(float64(us)))-2))

	return (us + mag/2) / mag * mag
}
