package capture

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"
)

// maxDistinct bounds the distinct values kept per value position: enough to
// tell a handful of categories or the skew of a key's requests, bounded so
// that a position holding a unique value per operation does not grow.
const maxDistinct = 1000

// node merges the values seen at one position of a shape: a document's
// fields (in the order first seen), an array's elements (merged, with the
// array's lengths), the clauses of $and/$or/$nor (one by one), or scalars.
type node struct {
	n      int64
	docN   int64
	fields []*fieldNode
	listN  int64
	elem   *node
	lens   *slot
	tuple  []*node
	tupleN int64
	lit    *Value // structure inside values: "$price", $options
	slot   *slot
}

type fieldNode struct {
	key  string
	node *node
}

func (n *node) field(k string) *node {
	for _, f := range n.fields {
		if f.key == k {
			return f.node
		}
	}

	c := &node{}
	n.fields = append(n.fields, &fieldNode{key: k, node: c})

	return c
}

// add merges one value seen at the node; key is the field that holds it.
func (n *node) add(v *Value, key string) {
	n.n++

	switch {
	case structural[key] || fieldRef(v):
		if n.lit == nil {
			n.lit = v
		}
	case v.Kind == KindDoc:
		n.docN++

		for i := range v.Doc {
			n.field(v.Doc[i].Key).add(&v.Doc[i].Val, v.Doc[i].Key)
		}
	case v.Kind == KindArray && logical[key]:
		n.tupleN++

		for i := range v.Arr {
			if i == len(n.tuple) {
				n.tuple = append(n.tuple, &node{})
			}

			n.tuple[i].add(&v.Arr[i], "")
		}
	case v.Kind == KindArray:
		n.listN++

		if n.elem == nil {
			n.elem, n.lens = &node{}, &slot{}
		}

		n.lens.add(&Value{Kind: KindInt, Int: int64(len(v.Arr))})

		for i := range v.Arr {
			n.elem.add(&v.Arr[i], key)
		}
	default:
		if n.slot == nil {
			n.slot = &slot{}
		}

		n.slot.add(v)
	}
}

// slot summarises the scalars seen at one position.
type slot struct {
	n        int64
	kinds    [KindOther + 1]int64
	distinct map[string]int64
	over     bool
	imin     int64
	imax     int64
	fmin     float64
	fmax     float64
	dmin     int64
	dmax     int64
	lens     map[int]int64
	trues    int64
	uuids    int64
	emails   int64
	numbers  int64
}

var uuidText = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func (s *slot) add(v *Value) {
	k := v.Kind
	if k == KindDecimal {
		k = KindFloat
		f, err := strconv.ParseFloat(v.Str, 64)
		if err != nil {
			f = 0
		}

		v = &Value{Kind: KindFloat, Num: f}
	}

	s.kinds[k]++

	switch k {
	case KindInt:
		s.number(float64(v.Int))
		s.imin, s.imax = minMax(s.numbers == 1, s.imin, s.imax, v.Int)
	case KindFloat:
		s.number(v.Num)
	case KindDate:
		s.dmin, s.dmax = minMax(s.kinds[KindDate] == 1, s.dmin, s.dmax, v.Int)
	case KindBool:
		s.trues += v.Int
	case KindString:
		if s.lens == nil {
			s.lens = map[int]int64{}
		}

		if _, ok := s.lens[len(v.Str)]; ok || len(s.lens) < maxDistinct {
			s.lens[len(v.Str)]++
		}

		if uuidText.MatchString(v.Str) {
			s.uuids++
		}

		if strings.Count(v.Str, "@") == 1 && !strings.ContainsAny(v.Str, " \t") {
			s.emails++
		}
	default:
	}

	s.n++

	var key string

	switch k {
	case KindInt, KindBool, KindDate:
		key = string(rune('a'+k)) + strconv.FormatInt(v.Int, 10)
	case KindFloat:
		key = string(rune('a'+k)) + strconv.FormatFloat(v.Num, 'g', -1, 64)
	case KindString:
		key = string(rune('a'+k)) + v.Str
	default:
		return
	}

	if s.distinct == nil {
		s.distinct = map[string]int64{}
	}

	if _, ok := s.distinct[key]; ok || len(s.distinct) < maxDistinct {
		s.distinct[key]++
	} else {
		s.over = true
	}
}

func (s *slot) number(f float64) {
	s.numbers++
	if s.numbers == 1 || f < s.fmin {
		s.fmin = f
	}

	if s.numbers == 1 || f > s.fmax {
		s.fmax = f
	}
}

func minMax(first bool, lo, hi, v int64) (int64, int64) {
	if first {
		return v, v
	}

	return min(lo, v), max(hi, v)
}

// gen builds templates; keep says whether values may be copied.
type gen struct {
	keep bool
}

// template turns a node into a workload template. field is the name of the
// field that holds it (for operators, the field they apply to), which says
// whether an integer is a key.
func (g *gen) template(n *node, field string) *yaml.Node {
	switch {
	case n == nil:
		return nullNode()
	case n.lit != nil && n.lit.Kind == KindString:
		return str(n.lit.Str)
	case n.docN >= n.listN && n.docN >= n.tupleN && n.docN > 0 && (n.slot == nil || n.docN >= n.slot.n):
		m := flowMap()

		for _, f := range n.fields {
			name := field
			if !strings.HasPrefix(f.key, "$") {
				name = f.key
			}

			m.Content = append(m.Content, str(f.key), g.template(f.node, name))
		}

		return m
	case n.tupleN > 0 && (n.slot == nil || n.tupleN >= n.slot.n):
		seq := flowSeq()
		for _, t := range n.tuple {
			seq.Content = append(seq.Content, g.template(t, field))
		}

		return seq
	case n.listN > 0 && (n.slot == nil || n.listN >= n.slot.n):
		if n.lens.imax == 0 {
			return flowSeq()
		}

		return gmap("^array", pairs("length", g.intGen(n.lens, "", true), "of", g.template(n.elem, field)))
	case n.slot != nil:
		return g.scalar(n.slot, field)
	}

	return nullNode()
}

// idLike says whether a field names a key: its requests follow a key
// distribution rather than a plain range.
func idLike(field string) bool {
	l := strings.ToLower(field)

	return field == "_id" || l == "id" || strings.HasSuffix(l, "_id") || strings.HasSuffix(field, "Id") || strings.HasSuffix(l, "uid")
}

// scalar infers a generator from the scalars seen at one position.
func (g *gen) scalar(s *slot, field string) *yaml.Node {
	dom := KindNull
	for k := range s.kinds {
		if s.kinds[k] > s.kinds[dom] {
			dom = Kind(k)
		}
	}

	if s.kinds[KindFloat] > 0 && dom == KindInt {
		dom = KindFloat
	}

	switch dom {
	case KindBool:
		if s.trues == 0 || s.trues == s.n {
			return boolNode(s.trues > 0)
		}

		return gmap("^bool", pairs("p", floatNode(round3(float64(s.trues)/float64(s.n)))))
	case KindInt:
		return g.intGen(s, field, false)
	case KindFloat:
		lo, hi := s.fmin, s.fmax
		if !g.keep {
			lo, hi = roundDown(lo), roundUp(hi)
		}

		if lo == hi {
			return floatNode(lo)
		}

		return gmap("^float", pairs("min", floatNode(lo), "max", floatNode(hi)))
	case KindDate:
		return g.dateGen(s)
	case KindString:
		return g.stringGen(s)
	case KindObjectID:
		return gmap("^objectId", flowMap())
	case KindUUID:
		return gmap("^uuid", flowMap())
	case KindBinary:
		return gmap("^string", pairs("length", intNode(16)))
	default:
		return nullNode()
	}
}

// intGen infers an integer generator: a key distribution over the ids seen
// (zipfian when the most requested tenth of the keys takes half the
// requests, else uniform), a choice of the values seen (only with
// KeepValues), or a range. Without KeepValues a range's bounds are rounded
// outward to two significant digits, so that no exact value is copied
// (except numbers of at most two digits, which a range cannot hide).
func (g *gen) intGen(s *slot, field string, length bool) *yaml.Node {
	lo, hi := s.imin, s.imax
	if !g.keep && !length {
		lo, hi = int64(roundDown(float64(lo))), int64(roundUp(float64(hi)))
	}

	d := len(s.distinct)

	switch {
	case !length && idLike(field) && d > 10:
		name := "^uniform"
		if skewed(s) {
			name = "^zipfian"
		}

		return gmap(name, pairs("min", intNode(lo), "max", intNode(hi)))
	case g.keep && !length && !s.over && d >= 1 && d <= 20:
		return g.choice(s, func(k string) *yaml.Node {
			n, _ := strconv.ParseInt(k[1:], 10, 64)

			return intNode(n)
		})
	case lo == hi:
		return intNode(lo)
	}

	return gmap("^int", pairs("min", intNode(lo), "max", intNode(hi)))
}

// skewed says whether the most requested tenth of the distinct values
// takes at least half of the requests.
func skewed(s *slot) bool {
	counts := make([]int64, 0, len(s.distinct))
	for _, c := range s.distinct {
		counts = append(counts, c)
	}

	sort.Slice(counts, func(i, j int) bool { return counts[i] > counts[j] })

	top := (len(counts) + 9) / 10

	var sum, all int64
	for i, c := range counts {
		if i < top {
			sum += c
		}

		all += c
	}

	return 2*sum >= all
}

func (g *gen) dateGen(s *slot) *yaml.Node {
	const day = int64(24 * time.Hour / time.Millisecond)

	from, to := s.dmin, s.dmax
	if g.keep && from == to {
		return gmap("^date", str(time.UnixMilli(from).UTC().Format(time.RFC3339Nano)))
	}

	if !g.keep {
		from = floorDiv(from, day) * day
		to = (floorDiv(to, day) + 1) * day
	}

	if to <= from {
		to = from + 1
	}

	return gmap("^date", pairs("from", str(time.UnixMilli(from).UTC().Format(time.RFC3339Nano)),
		"to", str(time.UnixMilli(to).UTC().Format(time.RFC3339Nano))))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}

	return q
}

// stringGen infers a string generator: UUIDs and e-mail addresses by their
// form, a choice of the values seen when few values repeat (the values
// replaced by stand-ins of the same length unless KeepValues), else random
// strings of the lengths seen.
func (g *gen) stringGen(s *slot) *yaml.Node {
	d := len(s.distinct)

	switch {
	case s.uuids == s.kinds[KindString]:
		return gmap("^uuid", flowMap())
	case s.emails == s.kinds[KindString] && d > 1:
		return gmap("^email", flowMap())
	case !s.over && d >= 1 && d <= 20 && (g.keep || s.n >= int64(2*d)):
		i := 0

		return g.choice(s, func(k string) *yaml.Node {
			i++
			if g.keep {
				return str(k[1:])
			}

			return str(standIn(k[1:], i))
		})
	}

	lens := make([]int, 0, len(s.lens))
	for l := range s.lens {
		lens = append(lens, l)
	}

	sort.Ints(lens)

	if len(lens) == 1 || len(lens) > 8 {
		// One length, or too many to list: the median length.
		return gmap("^string", pairs("length", intNode(int64(medianLen(s.lens, lens)))))
	}

	ch := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	w := flowSeq()

	for _, l := range lens {
		ch.Content = append(ch.Content, gmap("^string", pairs("length", intNode(int64(l)))))
		w.Content = append(w.Content, intNode(s.lens[l]))
	}

	return gmap("^choice", pairs("values", ch, "weights", w))
}

func medianLen(counts map[int]int64, lens []int) int {
	var all int64
	for _, c := range counts {
		all += c
	}

	var seen int64
	for _, l := range lens {
		seen += counts[l]
		if 2*seen >= all {
			return l
		}
	}

	return 16
}

// standIn is the i-th stand-in for a value: "v1", "v2", … padded with x to
// the value's length, and never the value itself.
func standIn(v string, i int) string {
	s := "v" + strconv.Itoa(i)
	for len(s) < len(v) {
		s += "x"
	}

	if s == v {
		s += "x"
	}

	return s
}

// choice writes ^choice over a slot's distinct values, most frequent first
// (ties in the values' order), with their counts as weights.
func (g *gen) choice(s *slot, value func(k string) *yaml.Node) *yaml.Node {
	keys := make([]string, 0, len(s.distinct))
	for k := range s.distinct {
		keys = append(keys, k)
	}

	sort.Slice(keys, func(i, j int) bool {
		if s.distinct[keys[i]] != s.distinct[keys[j]] {
			return s.distinct[keys[i]] > s.distinct[keys[j]]
		}

		return keys[i] < keys[j]
	})

	if len(keys) == 1 {
		return value(keys[0])
	}

	vals, w := flowSeq(), flowSeq()
	for _, k := range keys {
		vals.Content = append(vals.Content, value(k))
		w.Content = append(w.Content, intNode(s.distinct[k]))
	}

	return gmap("^choice", pairs("values", vals, "weights", w))
}

// roundDown and roundUp round to two significant digits, outward.
func roundDown(f float64) float64 { return roundSig(f, math.Floor) }
func roundUp(f float64) float64   { return roundSig(f, math.Ceil) }

func roundSig(f float64, r func(float64) float64) float64 {
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}

	mag := math.Pow(10, math.Floor(math.Log10(math.Abs(f)))-1)
	if math.Abs(f) < 100 && f == math.Trunc(f) {
		return f
	}

	return r(f/mag) * mag
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// literal writes structure (a sort, a projection, a $group stage) as a
// template; a date or an ObjectId in it, which the workload language cannot
// write literally, becomes a generator.
func literal(v *Value) *yaml.Node {
	switch v.Kind {
	case KindNull:
		return nullNode()
	case KindBool:
		return boolNode(v.Int == 1)
	case KindInt:
		return intNode(v.Int)
	case KindFloat:
		return floatNode(v.Num)
	case KindString:
		return str(v.Str)
	case KindDoc:
		m := flowMap()
		for i := range v.Doc {
			m.Content = append(m.Content, str(v.Doc[i].Key), literal(&v.Doc[i].Val))
		}

		return m
	case KindArray:
		s := flowSeq()
		for i := range v.Arr {
			s.Content = append(s.Content, literal(&v.Arr[i]))
		}

		return s
	case KindObjectID:
		return gmap("^objectId", flowMap())
	case KindDate:
		return gmap("^now", flowMap())
	default:
		return nullNode()
	}
}

// YAML node helpers.

func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func intNode(n int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(n, 10)}
}

func floatNode(f float64) *yaml.Node {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}

	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: s}
}

func boolNode(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

func nullNode() *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"} }

func flowMap() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle} }
func flowSeq() *yaml.Node { return &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle} }

// pairs builds a flow mapping of key, value, key, value, ….
func pairs(kv ...any) *yaml.Node {
	m := flowMap()

	for i := 0; i+1 < len(kv); i += 2 {
		if v, ok := kv[i+1].(*yaml.Node); ok {
			m.Content = append(m.Content, str(fmt.Sprint(kv[i])), v)
		}
	}

	return m
}

// gmap is a generator: {name: args}.
func gmap(name string, args *yaml.Node) *yaml.Node {
	m := flowMap()
	m.Content = append(m.Content, str(name), args)

	return m
}
