package datagen

import (
	"math"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v4"
)

// generators maps generator names to their specs. It is filled by init
// because the compile functions refer back to it through nested templates.
var generators map[string]*spec

func init() {
	generators = map[string]*spec{
		"^seq":       {args: []string{"start", "step", "counter"}, compile: compileSeq},
		"^int":       {args: []string{"min", "max"}, compile: compileInt},
		"^float":     {args: []string{"min", "max"}, compile: compileFloat},
		"^bool":      {args: []string{"p"}, short: "p", compile: compileBool},
		"^zipf":      {args: []string{"min", "max", "s"}, compile: compileZipf},
		"^hotspot":   {args: []string{"min", "max", "counter", "hot_fraction", "hot_probability"}, compile: compileHotspot},
		"^choice":    {args: []string{"values", "weights"}, compile: compileChoice},
		"^pool":      {args: []string{"size", "of"}, compile: compilePool},
		"^array":     {args: []string{"length", "of"}, compile: compileArray},
		"^format":    {args: []string{"pattern", "args"}, compile: compileFormat},
		"^var":       {scalar: compileVarRef},
		"^words":     {args: []string{"count"}, short: "count", compile: compileWords},
		"^sentence":  {args: []string{"words"}, short: "words", compile: compileSentence},
		"^string":    {args: []string{"length"}, short: "length", compile: compileString},
		"^ycsbBytes": {args: []string{"length"}, short: "length", compile: compileYCSBBytes},
		"^name":      {compile: fixed(func(s *Scope) any { return s.faker.Name() })},
		"^email":     {compile: fixed(func(s *Scope) any { return s.faker.Email() })},
		"^uuid":      {compile: fixed(func(s *Scope) any { return s.faker.UUID() })},
		"^date":      {args: []string{"from", "to"}, scalar: compileDateLiteral, compile: compileDate},
		"^now":       {compile: fixed(func(*Scope) any { return time.Now().UTC().Truncate(time.Millisecond) })},
		"^objectId":  {compile: fixed(func(*Scope) any { return bson.NewObjectID() })},
	}
}

// funcGen is a generator without arguments.
type funcGen func(s *Scope) any

func (f funcGen) value(s *Scope) any { return f(s) }

// fixed returns the compile function of a generator without arguments.
func fixed(f funcGen) func(*call) *compiled {
	return func(*call) *compiled { return &compiled{gen: f, elems: 2} }
}

// uniform returns a uniform integer in [0, span].
func uniform(s *Scope, span uint64) uint64 {
	if span == math.MaxUint64 {
		return s.rng.Uint64()
	}

	return s.rng.Uint64N(span + 1)
}

// minMax returns the required min and max integer arguments and checks their
// order.
func (k *call) minMax() (lo, hi int64) {
	k.require("min", "max")
	lo, hi = k.int("min", 0), k.int("max", 0)

	if k.ok && lo > hi {
		k.errorf(k.at("min"), "min must be <= max")
	}

	return lo, hi
}

func compileSeq(k *call) *compiled {
	start, step := k.int("start", 0), k.int("step", 1)
	if step == 0 {
		k.errorf(k.at("step"), "step must not be 0")
	}

	if !k.ok {
		return nil
	}

	if name := k.args["counter"]; name != nil {
		return k.namedSeq(name, start, step)
	}

	k.c.env.steps[k.mapping] = step

	return &compiled{gen: &seqGen{ctr: k.c.env.counter(k.mapping, start), step: step, env: k.c.env}, elems: 1}
}

// namedSeq compiles ^seq: {counter: name}: a counter shared by every ^seq
// and key distribution that names it, so that the keys a load and the run's
// inserts hand out form one live key space.
func (k *call) namedSeq(name *yaml.Node, start, step int64) *compiled {
	if name.Kind != yaml.ScalarNode || name.ShortTag() != "!!str" || name.Value == "" {
		k.errorf(name, "counter must be a name, got %s", describe(name))

		return nil
	}

	if step != 1 {
		k.errorf(k.at("step"), "a named counter counts keys one by one: step must be 1 (or left out)")

		return nil
	}

	nc := k.c.env.namedCounter(name.Value)
	nc.declared = true

	if at := k.args["start"]; at != nil {
		switch {
		case nc.startNode == nil:
			nc.startNode, nc.start = at, start
			nc.ctr.Store(start)
		case nc.start != start:
			k.errorf(at, "counter %q starts at %d (line %d); give its start once, or the same everywhere",
				name.Value, nc.start, nc.startNode.Line)

			return nil
		}
	}

	ctr := nc.ctr

	return &compiled{gen: &seqGen{ctr: ctr, step: 1, env: k.c.env}, elems: 1}
}

// seqGen yields start, start+step, ... across all workers; in shard i of
// n (Env.Shard) it yields start+i×step, start+(i+n)×step, ...
type seqGen struct {
	ctr  *atomic.Int64
	step int64
	env  *Env
}

func (g *seqGen) value(*Scope) any {
	s := g.step * g.env.shardCount()

	return g.ctr.Add(s) - s
}

func compileInt(k *call) *compiled {
	lo, hi := k.minMax()
	if !k.ok {
		return nil
	}

	if lo == hi {
		return constOf(lo)
	}

	return &compiled{gen: &intGen{lo: lo, span: uint64(hi) - uint64(lo)}, elems: 1}
}

// intGen yields uniform integers in [lo, lo+span].
type intGen struct {
	lo   int64
	span uint64
}

func (g *intGen) value(s *Scope) any { return g.lo + int64(uniform(s, g.span)) }

func (g *intGen) intRange() (lo, hi int64, ok bool) { return g.lo, g.lo + int64(g.span), true }

func compileFloat(k *call) *compiled {
	k.require("min", "max")
	lo, hi := k.float("min", 0), k.float("max", 0)

	switch {
	case !k.ok:
	case lo > hi:
		k.errorf(k.at("min"), "min must be <= max")
	case math.IsInf(hi-lo, 0):
		k.errorf(k.at("max"), "max - min is too large for a float64")
	}

	if !k.ok {
		return nil
	}

	if lo == hi {
		return constOf(lo)
	}

	return &compiled{gen: &floatGen{lo: lo, hi: hi}, elems: 1}
}

// floatGen yields uniform numbers in [lo, hi).
type floatGen struct{ lo, hi float64 }

func (g *floatGen) value(s *Scope) any {
	v := g.lo + s.rng.Float64()*(g.hi-g.lo)
	if v >= g.hi { // rounding
		v = math.Nextafter(g.hi, g.lo)
	}

	return v
}

func compileBool(k *call) *compiled {
	p := k.probability("p", 0.5, 0)
	if !k.ok {
		return nil
	}

	return &compiled{gen: boolGen(p), elems: 1}
}

// boolGen yields true with its probability.
type boolGen float64

func (p boolGen) value(s *Scope) any { return s.rng.Float64() < float64(p) }

func compileZipf(k *call) *compiled {
	k.require("max")
	lo, hi := k.int("min", 0), k.int("max", 0)
	exp := k.float("s", 1.1)

	switch {
	case !k.ok:
	case lo > hi:
		k.errorf(k.at("min"), "min must be <= max")
	case exp <= 1:
		k.errorf(k.at("s"), "s must be > 1, got %g", exp)
	}

	if !k.ok {
		return nil
	}

	if lo == hi {
		return constOf(lo)
	}

	g := &zipfGen{id: k.c.env.zipfs, lo: lo, imax: uint64(hi) - uint64(lo), s: exp}
	k.c.env.zipfs++

	return &compiled{gen: g, elems: 1}
}

// zipfGen yields lo + k with probability proportional to (1+k)^-s for k in
// [0, imax]. id indexes the rand.Zipf of each Scope, which is bound to its
// random source.
type zipfGen struct {
	id   int
	lo   int64
	imax uint64
	s    float64
}

func (g *zipfGen) value(s *Scope) any { return g.lo + int64(s.zipf(g).Uint64()) }

func (g *zipfGen) intRange() (lo, hi int64, ok bool) { return g.lo, g.lo + int64(g.imax), true }

func compileHotspot(k *call) *compiled {
	if k.args["counter"] != nil {
		return k.liveHotspot()
	}

	lo, hi := k.minMax()
	frac := k.probability("hot_fraction", 0.1, math.SmallestNonzeroFloat64)
	p := k.probability("hot_probability", 0.9, 0)

	if !k.ok {
		return nil
	}

	span := uint64(hi) - uint64(lo)
	g := &hotspotGen{lo: lo, span: span, hotSpan: span, p: p}

	// The hot part holds floor(frac * count) values, at least one.
	if hot := max(math.Floor(frac*(float64(span)+1)), 1); hot < 0x1p64 && uint64(hot)-1 < span {
		g.hotSpan = uint64(hot) - 1
	}

	return &compiled{gen: g, elems: 1}
}

// hotspotGen yields integers in [lo, lo+span], from the hot part
// [lo, lo+hotSpan] with probability p and from the rest otherwise.
type hotspotGen struct {
	lo            int64
	span, hotSpan uint64
	p             float64
}

func (g *hotspotGen) value(s *Scope) any {
	if g.hotSpan == g.span || s.rng.Float64() < g.p {
		return g.lo + int64(uniform(s, g.hotSpan))
	}

	return g.lo + int64(g.hotSpan+1) + int64(uniform(s, g.span-g.hotSpan-1))
}

func (g *hotspotGen) intRange() (lo, hi int64, ok bool) { return g.lo, g.lo + int64(g.span), true }

// timeLayouts are the forms ^date accepts: RFC 3339 and the YAML timestamp
// forms. Times without a zone are UTC.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// toTime parses scalar n as a date, in UTC with millisecond precision.
func toTime(n *yaml.Node) (time.Time, bool) {
	if n.Kind != yaml.ScalarNode {
		return time.Time{}, false
	}

	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, n.Value); err == nil {
			return t.UTC().Truncate(time.Millisecond), true
		}
	}

	return time.Time{}, false
}

// date returns date argument name.
func (k *call) date(name string) time.Time {
	n := k.args[name]
	if n == nil {
		return time.Time{}
	}

	t, ok := toTime(n)
	if !ok {
		k.errorf(n, "%s must be a date such as \"2024-01-31T12:00:00Z\" or \"2024-01-31\", got %s", name, describe(n))
	}

	return t
}

func compileDateLiteral(k *call) *compiled {
	k.args = map[string]*yaml.Node{"date": k.node}
	t := k.date("date")

	if !k.ok {
		return nil
	}

	return &compiled{gen: &constant{v: t}, elems: 1}
}

func compileDate(k *call) *compiled {
	k.require("from", "to")
	from, to := k.date("from"), k.date("to")

	if k.ok && !from.Before(to) {
		k.errorf(k.at("from"), "from must be before to")
	}

	if !k.ok {
		return nil
	}

	g := &dateGen{from: from.UnixMilli(), span: to.UnixMilli() - from.UnixMilli()}

	return &compiled{gen: g, elems: 1}
}

// dateGen yields uniform times in [from, from+span) milliseconds since the
// Unix epoch.
type dateGen struct{ from, span int64 }

func (g *dateGen) value(s *Scope) any {
	return time.UnixMilli(g.from + s.rng.Int64N(g.span)).UTC()
}

// liveHotspot compiles ^hotspot over a named counter's live key range.
func (k *call) liveHotspot() *compiled {
	r := k.keyRangeArgs()
	frac := k.probability("hot_fraction", 0.1, math.SmallestNonzeroFloat64)
	p := k.probability("hot_probability", 0.9, 0)

	if !k.ok {
		return nil
	}

	return &compiled{gen: &liveHotspotGen{keyRange: r, frac: frac, p: p}, elems: 1}
}
