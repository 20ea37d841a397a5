package datagen

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// Limits of the generators that build collections.
const (
	maxPoolSize  = 1_000_000
	maxPoolElems = 1 << 24 // values held by one pool, to bound the memory it takes
	maxArrayLen  = 1_000_000
)

func compileChoice(k *call) *compiled {
	k.require("values")

	vn := k.args["values"]
	if vn != nil && (vn.Kind != yaml.SequenceNode || len(vn.Content) == 0) {
		k.errorf(vn, "values must be a non-empty sequence, got %s", describe(vn))
	}

	if !k.ok {
		return nil
	}

	weights := k.weights(len(vn.Content))
	g := &choiceGen{vals: make([]generator, len(vn.Content))}
	c := &compiled{gen: g}

	for i, item := range vn.Content {
		it := k.c.compile(item, yamlpos.Index(k.sub("values"), i))
		if it == nil {
			k.ok = false

			continue
		}

		g.vals[i] = it.gen
		c.elems = max(c.elems, it.elems)
	}

	if !k.ok {
		return nil
	}

	if len(g.vals) == 1 {
		return &compiled{gen: g.vals[0], elems: c.elems}
	}

	if weights != nil {
		g.cum = make([]float64, len(weights))
		total := 0.0

		for i, w := range weights {
			total += w
			g.cum[i] = total
		}
	}

	return c
}

// weights returns the weights argument of ^choice, checked against the
// number of values, or nil if all values are equally likely.
func (k *call) weights(n int) []float64 {
	wn := k.args["weights"]
	if wn == nil {
		return nil
	}

	if wn.Kind != yaml.SequenceNode {
		k.errorf(wn, "weights must be a sequence of numbers, got %s", describe(wn))

		return nil
	}

	if len(wn.Content) != n {
		k.errorf(wn, "weights has %d entries but values has %d", len(wn.Content), n)

		return nil
	}

	ws := make([]float64, n)
	total := 0.0

	for i, item := range wn.Content {
		item = yamlpos.Resolve(item)

		w, ok := toFloat(item)
		if !ok || w < 0 || math.IsInf(w, 0) || math.IsNaN(w) {
			k.errorf(item, "weights[%d] must be a finite number >= 0, got %s", i, describe(item))

			return nil
		}

		ws[i] = w
		total += w
	}

	if total <= 0 || math.IsInf(total, 0) {
		k.errorf(wn, "weights must have a finite sum > 0")
	}

	return ws
}

// choiceGen yields the value of one of vals, picked with the cumulative
// weights cum, or uniformly if cum is nil.
type choiceGen struct {
	vals []generator
	cum  []float64
}

func (g *choiceGen) value(s *Scope) any {
	if g.cum == nil {
		return g.vals[s.rng.IntN(len(g.vals))].value(s)
	}

	x := s.rng.Float64() * g.cum[len(g.cum)-1]

	// The first cumulative weight above x; values with weight 0 have the same
	// cumulative weight as the previous one and are never picked.
	i := sort.Search(len(g.cum), func(i int) bool { return g.cum[i] > x })
	for i == len(g.cum) || (i > 0 && g.cum[i] == g.cum[i-1]) { // x rounded up to the total
		i--
	}

	return g.vals[i].value(s)
}

func (g *choiceGen) intRange() (lo, hi int64, ok bool) {
	for i, v := range g.vals {
		vlo, vhi, vok := intRange(v)
		if !vok {
			return 0, 0, false
		}

		if i == 0 || vlo < lo {
			lo = vlo
		}

		if i == 0 || vhi > hi {
			hi = vhi
		}
	}

	return lo, hi, true
}

func compilePool(k *call) *compiled {
	k.require("size", "of")
	size := k.intIn("size", 1, 1, maxPoolSize)
	of := k.template("of")

	if k.ok && float64(size)*of.elems > maxPoolElems {
		k.errorf(k.at("size"), "size × the values of one item may reach %.3g, more than the limit of %d",
			float64(size)*of.elems, maxPoolElems)
	}

	if !k.ok {
		return nil
	}

	if isConst(of) {
		return of
	}

	vals := k.c.env.pool(k.mapping, int(size), of.gen)
	if size == 1 {
		return &compiled{gen: &constant{v: vals[0]}, elems: of.elems}
	}

	return &compiled{gen: poolGen(vals), elems: of.elems}
}

// poolGen yields one of its values, uniformly.
type poolGen []any

func (g poolGen) value(s *Scope) any { return g[s.rng.IntN(len(g))] }

func compileArray(k *call) *compiled {
	k.require("length", "of")
	length := k.template("length")
	of := k.template("of")

	if !k.ok {
		return nil
	}

	lo, hi, known := intRange(length.gen)

	switch {
	case !known && isConst(length):
		k.errorf(k.at("length"), "length must be an integer or a generator of integers, got %s",
			describe(k.args["length"]))
	case !known:
		hi = maxArrayLen // unknown range (^var, ^seq, ...): clamped when generating
	case lo < 0:
		k.errorf(k.at("length"), "length may be negative (%d)", lo)
	case hi > maxArrayLen:
		k.errorf(k.at("length"), "length may be %d, more than the limit of %d", hi, maxArrayLen)
	}

	if !k.ok {
		return nil
	}

	c := &compiled{elems: 1 + float64(hi)*of.elems}

	if n, ok := length.gen.(*constant); ok && isConst(of) {
		a := make(bson.A, n.v.(int64))
		for i := range a {
			a[i] = of.gen.value(nil)
		}

		c.gen = &constant{v: a}
	} else {
		c.gen = &arrayGen{length: length.gen, of: of.gen}
	}

	return c
}

// arrayGen yields arrays of generated length and items.
type arrayGen struct {
	length, of generator
}

func (g *arrayGen) value(s *Scope) any {
	var n int

	switch v := g.length.value(s).(type) {
	case int64:
		n = int(min(max(v, 0), maxArrayLen))
	case float64:
		if v >= 0 { // false for NaN
			n = int(min(v, maxArrayLen))
		}
	}

	a := make(bson.A, n)
	for i := range a {
		a[i] = g.of.value(s)
	}

	return a
}

// compileFormat compiles ^format, which formats generated values into a
// string with a fmt pattern. It exists because string ids ("err-000042")
// are common and some servers (FerretDB's SQLite backend) can look up only
// string and ObjectId _id values through the primary key.
func compileFormat(k *call) *compiled {
	k.require("pattern")

	pn := k.args["pattern"]
	if pn != nil && (pn.Kind != yaml.ScalarNode || pn.Tag != "!!str") {
		k.errorf(pn, "pattern must be a string such as \"err-%%06d\", got %s", describe(pn))
	}

	an := k.args["args"]
	if an != nil && an.Kind != yaml.SequenceNode {
		k.errorf(an, "args must be a sequence of templates, got %s", describe(an))
	}

	if !k.ok {
		return nil
	}

	g := &formatGen{pattern: pn.Value}

	if an != nil {
		for i, item := range an.Content {
			it := k.c.compile(item, yamlpos.Index(k.sub("args"), i))
			if it == nil {
				k.ok = false
				continue
			}

			g.args = append(g.args, it.gen)
		}
	}

	if !k.ok {
		return nil
	}

	if n := strings.Count(strings.ReplaceAll(pn.Value, "%%", ""), "%"); n != len(g.args) {
		k.errorf(pn, "pattern has %d verbs but args has %d values", n, len(g.args))
		return nil
	}

	return &compiled{gen: g, elems: 1}
}

// formatGen yields fmt.Sprintf(pattern, args...).
type formatGen struct {
	pattern string
	args    []generator
}

func (g *formatGen) value(s *Scope) any {
	vals := make([]any, len(g.args))
	for i, a := range g.args {
		vals[i] = a.value(s)
	}

	return fmt.Sprintf(g.pattern, vals...)
}
