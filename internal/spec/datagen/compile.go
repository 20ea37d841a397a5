package datagen

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// maxElems bounds the number of values (documents, arrays, scalars, and a
// string per 16 bytes) that one generated value may have. Nothing larger
// fits in BSON's 16 MiB document limit; the bound also keeps typos such as
// an extra zero in an array length from exhausting memory.
const maxElems = 1 << 22

// Template is a compiled document template. It is immutable and safe for
// concurrent use; each worker evaluates it through its own Scope.
type Template struct {
	c *compiled
}

// Value generates one value for the scope; documents are bson.D, arrays
// bson.A.
//
// Parts of the template without generators are computed once at compile time
// and shared by all values (and all workers), so callers must not modify the
// result. s must come from the Env that compiled the template.
func (t *Template) Value(s *Scope) any { return t.c.gen.value(s) }

// MaxValues is an upper bound on the values (documents, arrays, scalars, and
// a value per 16 bytes of string) in one generated value, the measure the
// compiler caps at maxElems. Callers that generate many values at once (an
// insertMany batch) bound their memory with it.
func (t *Template) MaxValues() float64 { return t.c.elems }

// IntRange returns the range of the integers the template yields, when it
// yields only integers of a range known at compile time (^int, ^zipfian
// over a fixed range, a constant, ...).
func (t *Template) IntRange() (lo, hi int64, ok bool) { return intRange(t.c.gen) }

// Compile compiles one template node (may be any YAML node kind) at field
// path `path`, which prefixes the messages of the errors returned. Errors are
// []error of *yamlpos.Error, sorted by position; the Template is nil then.
func (e *Env) Compile(n *yaml.Node, path string) (*Template, []error) {
	e.mu.Lock()
	defer e.mu.Unlock()

	c := newCompiler(e)
	r := c.root(n, path)

	if errs := c.errors(); errs != nil {
		return nil, errs
	}

	return &Template{c: r}, nil
}

// generator is a compiled template node: it makes one value per call.
type generator interface {
	value(s *Scope) any
}

// intRanger is implemented by generators that know the range of the integers
// they yield, so that ^array lengths can be checked at compile time.
type intRanger interface {
	intRange() (lo, hi int64, ok bool)
}

// intRange returns the range of the integers g yields, if it is known.
func intRange(g generator) (lo, hi int64, ok bool) {
	if r, is := g.(intRanger); is {
		return r.intRange()
	}

	return 0, 0, false
}

// compiled is a generator together with what the compiler knows about it.
type compiled struct {
	gen   generator
	elems float64 // upper bound on the values in one result; float64 so that it cannot overflow
}

// constant is a generator without randomness: its value is computed once.
type constant struct{ v any }

func (k *constant) value(*Scope) any { return k.v }

func (k *constant) intRange() (lo, hi int64, ok bool) {
	i, ok := k.v.(int64)

	return i, i, ok
}

// constOf returns a constant with value v, a scalar.
func constOf(v any) *compiled {
	elems := 1.0
	if s, ok := v.(string); ok {
		elems += float64(len(s) / 16)
	}

	return &compiled{gen: &constant{v: v}, elems: elems}
}

// isConst reports whether c always yields the same value.
func isConst(c *compiled) bool {
	_, ok := c.gen.(*constant)

	return ok
}

// compiler holds the state of one Compile or NewEnv call.
type compiler struct {
	env   *Env
	errs  []error
	memo  map[*yaml.Node]*memoEntry  // anchored nodes, so that each alias does not compile them again
	merge map[*yaml.Node]*mergeEntry // merged mappings, so that nested merges are expanded once
	stack []*variable                // variables being compiled, innermost last, to report cycles
}

// mergeEntry is the field list of a mapping merged with <<.
type mergeEntry struct {
	fields []field
	ok     bool // expanded without errors
	busy   bool // being expanded: reaching it again means it merges itself
}

// memoEntry is the compilation of an anchored node.
type memoEntry struct {
	c     *compiled // nil if compilation failed (its errors have been reported)
	busy  bool      // being compiled: reaching it again means an alias inside the anchored node
	depth int       // len(compiler.stack) when compilation started
}

func newCompiler(e *Env) *compiler {
	return &compiler{env: e, memo: make(map[*yaml.Node]*memoEntry), merge: make(map[*yaml.Node]*mergeEntry)}
}

// errorf reports a problem at node n.
func (c *compiler) errorf(n *yaml.Node, path, format string, args ...any) {
	c.errs = append(c.errs, yamlpos.At(n, path, format, args...))
}

// errors returns the problems found, sorted by position and without
// repetitions (a node reached through several aliases may report the same
// problem more than once), or nil if there were none.
func (c *compiler) errors() []error {
	if len(c.errs) == 0 {
		return nil
	}

	yamlpos.Sort(c.errs)

	return slices.CompactFunc(c.errs, func(a, b error) bool { return a.Error() == b.Error() })
}

// root compiles the top node of a template or variable and checks its size.
func (c *compiler) root(n *yaml.Node, path string) *compiled {
	r := c.compile(n, path)
	if r != nil && r.elems > maxElems {
		c.errorf(yamlpos.Resolve(n), path, "may generate up to %.3g values, more than the limit of %d "+
			"(a BSON document is at most 16 MiB); lower array lengths or string sizes", r.elems, maxElems)

		return nil
	}

	return r
}

// compile compiles node n, or returns nil after reporting errors.
func (c *compiler) compile(n *yaml.Node, path string) *compiled {
	n = yamlpos.Resolve(n)
	if n == nil {
		return constOf(nil)
	}

	if n.Anchor == "" {
		return c.compileNode(n, path)
	}

	if m, ok := c.memo[n]; ok {
		if !m.busy {
			return m.c
		}

		if m.depth == len(c.stack) {
			c.errorf(n, path, "YAML anchor &%s is used inside itself", n.Anchor)

			return nil
		}

		// Reached again through a variable: compile it afresh so that the
		// variable cycle is found and reported as such.
		return c.compileNode(n, path)
	}

	m := &memoEntry{busy: true, depth: len(c.stack)}
	c.memo[n] = m
	m.c = c.compileNode(n, path)
	m.busy = false

	return m.c
}

// compileNode compiles n, which is not an alias.
func (c *compiler) compileNode(n *yaml.Node, path string) *compiled {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return constOf(nil)
		}

		return c.compile(n.Content[0], path)
	case yaml.ScalarNode:
		v, err := scalarValue(n)
		if err != nil {
			c.errorf(n, path, "%v", err)

			return nil
		}

		return constOf(v)
	case yaml.SequenceNode:
		return c.sequence(n, path)
	case yaml.MappingNode:
		return c.mapping(n, path)
	default:
		return constOf(nil)
	}
}

// sequence compiles a YAML sequence to a generator of bson.A.
func (c *compiler) sequence(n *yaml.Node, path string) *compiled {
	proto := make(bson.A, len(n.Content))
	g := &arrayLit{proto: proto}
	elems, ok := 1.0, true

	for i, item := range n.Content {
		it := c.compile(item, yamlpos.Index(path, i))
		if it == nil {
			ok = false

			continue
		}

		elems += it.elems

		if k, is := it.gen.(*constant); is {
			proto[i] = k.v
		} else {
			g.slots = append(g.slots, slot{i: i, gen: it.gen})
		}
	}

	switch {
	case !ok:
		return nil
	case len(g.slots) == 0:
		return &compiled{gen: &constant{v: proto}, elems: elems}
	default:
		return &compiled{gen: g, elems: elems}
	}
}

// field is one key of a YAML mapping, after merge keys have been expanded.
type field struct {
	key  *yaml.Node
	name string
	val  *yaml.Node
}

// mapping compiles a YAML mapping to a generator of bson.D, or to a
// generator if its only key starts with ^.
func (c *compiler) mapping(n *yaml.Node, path string) *compiled {
	fields, ok := c.fields(n, path)
	if !ok {
		return nil
	}

	for _, f := range fields {
		if !strings.HasPrefix(f.name, "^") {
			continue
		}

		if len(fields) == 1 {
			return c.generator(n, f.key, f.val, path)
		}

		c.errorf(f.key, path, "%s: a generator must be the only key in its mapping", f.name)
		ok = false
	}

	if !ok {
		return nil
	}

	proto := make(bson.D, len(fields))
	g := &docLit{proto: proto}
	elems := 1.0

	for i, f := range fields {
		proto[i].Key = f.name

		fc := c.compile(f.val, yamlpos.Field(path, f.name))
		if fc == nil {
			ok = false

			continue
		}

		elems += fc.elems

		if k, is := fc.gen.(*constant); is {
			proto[i].Value = k.v
		} else {
			g.slots = append(g.slots, slot{i: i, gen: fc.gen})
		}
	}

	switch {
	case !ok:
		return nil
	case len(g.slots) == 0:
		return &compiled{gen: &constant{v: proto}, elems: elems}
	default:
		return &compiled{gen: g, elems: elems}
	}
}

// fields lists the keys of mapping n in order, expanding merge keys (<<):
// keys written in n win over merged ones, and earlier merged mappings over
// later ones, as YAML specifies.
func (c *compiler) fields(n *yaml.Node, path string) ([]field, bool) {
	ok := true
	explicit := make(map[string]*yaml.Node, len(n.Content)/2)

	for i := 0; i+1 < len(n.Content); i += 2 {
		k := yamlpos.Resolve(n.Content[i])

		switch {
		case k == nil || k.Kind != yaml.ScalarNode:
			c.errorf(n.Content[i], path, "mapping keys must be strings")

			ok = false
		case isMerge(k):
		case explicit[k.Value] != nil:
			c.errorf(k, path, "duplicate key %q (first at line %d)", k.Value, explicit[k.Value].Line)

			ok = false
		default:
			explicit[k.Value] = k
		}
	}

	if !ok {
		return nil, false
	}

	fields := make([]field, 0, len(explicit))
	merged := make(map[string]bool)

	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := yamlpos.Resolve(n.Content[i]), n.Content[i+1]
		if !isMerge(k) {
			fields = append(fields, field{key: k, name: k.Value, val: v})

			continue
		}

		for _, m := range c.mergeSources(v, path) {
			me := c.merged(m, path)
			if !me.ok {
				ok = false

				continue
			}

			for _, f := range me.fields {
				if explicit[f.name] == nil && !merged[f.name] {
					merged[f.name] = true
					fields = append(fields, f)
				}
			}
		}
	}

	return fields, ok
}

// merged returns the fields of mapping m, merged into another one.
func (c *compiler) merged(m *yaml.Node, path string) *mergeEntry {
	if me := c.merge[m]; me != nil {
		if me.busy {
			c.errorf(m, path, "merge key (<<) includes the mapping that contains it")
		}

		return me
	}

	me := &mergeEntry{busy: true}
	c.merge[m] = me
	me.fields, me.ok = c.fields(m, path)
	me.busy = false

	return me
}

// mergeSources returns the mappings that merge key value v refers to.
func (c *compiler) mergeSources(v *yaml.Node, path string) []*yaml.Node {
	v = yamlpos.Resolve(v)
	if v != nil && v.Kind == yaml.MappingNode {
		return []*yaml.Node{v}
	}

	if v != nil && v.Kind == yaml.SequenceNode {
		ms := make([]*yaml.Node, 0, len(v.Content))

		for _, item := range v.Content {
			if m := yamlpos.Resolve(item); m != nil && m.Kind == yaml.MappingNode {
				ms = append(ms, m)
			} else {
				c.errorf(item, path, "merge key (<<) values must be mappings")
			}
		}

		return ms
	}

	c.errorf(v, path, "merge key (<<) value must be a mapping or a sequence of mappings")

	return nil
}

// isMerge reports whether key k is the YAML merge key <<.
func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge"
}

// isNull reports whether n is a YAML null (~, null or nothing at all).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// scalarValue converts scalar n according to its tag. Timestamps stay
// strings: implicit date parsing surprises more than it helps, and ^date
// makes real dates.
func scalarValue(n *yaml.Node) (any, error) {
	switch tag := n.ShortTag(); tag {
	case "!!str", "!!timestamp", "!!merge":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("cannot parse %q as a boolean", n.Value)
		}

		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return nil, fmt.Errorf("cannot parse %q as a 64-bit integer", n.Value)
		}

		return i, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("cannot parse %q as a number", n.Value)
		}

		return f, nil
	case "!!binary":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(n.Value), ""))
		if err != nil {
			return nil, fmt.Errorf("cannot decode !!binary: %w", err)
		}

		return bson.Binary{Data: b}, nil
	default:
		return nil, fmt.Errorf("unsupported YAML tag %s", tag)
	}
}

// slot is a generated position in a document or array literal.
type slot struct {
	i   int
	gen generator
}

// docLit generates a document from a template mapping: static fields are
// copied from proto, the others generated.
type docLit struct {
	proto bson.D
	slots []slot
}

func (g *docLit) value(s *Scope) any {
	d := make(bson.D, len(g.proto))
	copy(d, g.proto)

	for _, sl := range g.slots {
		d[sl.i].Value = sl.gen.value(s)
	}

	return d
}

// arrayLit generates an array from a template sequence, like docLit.
type arrayLit struct {
	proto bson.A
	slots []slot
}

func (g *arrayLit) value(s *Scope) any {
	a := make(bson.A, len(g.proto))
	copy(a, g.proto)

	for _, sl := range g.slots {
		a[sl.i] = sl.gen.value(s)
	}

	return a
}

// toInt converts scalar n to an integer, accepting integral floats such as
// 1e6.
func toInt(n *yaml.Node) (int64, bool) {
	if n.Kind != yaml.ScalarNode {
		return 0, false
	}

	v, err := scalarValue(n)
	if err != nil {
		return 0, false
	}

	switch v := v.(type) {
	case int64:
		return v, true
	case float64:
		if v == math.Trunc(v) && v >= -(1<<63) && v < 1<<63 {
			return int64(v), true
		}
	}

	return 0, false
}

// toFloat converts scalar n to a number.
func toFloat(n *yaml.Node) (float64, bool) {
	if n.Kind != yaml.ScalarNode {
		return 0, false
	}

	v, err := scalarValue(n)
	if err != nil {
		return 0, false
	}

	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	}

	return 0, false
}
