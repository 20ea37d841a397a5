package datagen

import (
	"slices"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v4"
)

// Generators that shape records the way the YCSB core workloads do: a key
// chosen by a distribution named at run time (requestdistribution), the
// record's name built from the key (insertorder), and a record of N
// fields or one of them (fieldcount, writeallfields).

func init() {
	generators["^key"] = &spec{args: keyArgs, compile: compileKey}
	generators["^keyname"] = &spec{args: []string{"key", "prefix", "order"}, compile: compileKeyName}
	generators["^fields"] = &spec{args: []string{"count", "prefix", "of", "id"}, compile: compileFields}
	generators["^field"] = &spec{args: []string{"count", "prefix", "of"}, compile: compileField}
}

// keyArgs are the arguments of ^key: the distribution and every argument
// of the distributions it names.
var keyArgs = []string{"distribution", "min", "max", "counter", "theta", "hot_fraction", "hot_probability", "percentile", "fraction"}

// keyDistributions maps the names YCSB's requestdistribution takes to the
// generator that draws them and the arguments it accepts. YCSB's "zipfian"
// is the scrambled one (the popular keys spread over the key space).
var keyDistributions = map[string]struct {
	name string
	args []string
}{
	"uniform":     {"^uniform", []string{"min", "max", "counter"}},
	"zipfian":     {"^zipfian", []string{"min", "max", "counter", "theta"}},
	"latest":      {"^latest", []string{"min", "max", "counter", "theta"}},
	"hotspot":     {"^hotspot", []string{"min", "max", "counter", "hot_fraction", "hot_probability"}},
	"exponential": {"^exponential", []string{"min", "max", "counter", "percentile", "fraction"}},
	"sequential":  {"^sequential", []string{"min", "max", "counter"}},
}

// compileKey compiles ^key: {distribution: name, ...}: the distribution's
// own generator with the other arguments, which must be ones it takes.
func compileKey(k *call) *compiled {
	k.require("distribution")

	n := k.args["distribution"]
	if n == nil {
		return nil
	}

	d, ok := keyDistributions[n.Value]
	if !ok || n.Kind != yaml.ScalarNode {
		names := make([]string, 0, len(keyDistributions))
		for name := range keyDistributions {
			names = append(names, name)
		}

		slices.Sort(names)
		k.errorf(n, "distribution must be one of %s, got %s", strings.Join(names, ", "), describe(n))

		return nil
	}

	sub := *k
	sub.name = d.name
	sub.args = make(map[string]*yaml.Node, len(k.args))

	for name, v := range k.args {
		switch {
		case name == "distribution":
		case !slices.Contains(d.args, name):
			k.errorf(v, "%s does not apply to distribution %s (it takes %s)", name, n.Value, strings.Join(d.args, ", "))
		default:
			sub.args[name] = v
		}
	}

	if !k.ok {
		return nil
	}

	if n.Value == "zipfian" {
		sub.args["scrambled"] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}
	}

	c := generators[d.name].compile(&sub)
	k.ok = sub.ok

	return c
}

// compileKeyName compiles ^keyname: {key: <integer template>, prefix:
// "user", order: hashed}: the record name prefix + key, or, hashed, prefix +
// a hash of the key, so that records inserted in key order land all over
// the name space (YCSB's insertorder).
func compileKeyName(k *call) *compiled {
	k.require("key")
	key := k.template("key")
	prefix := "user"
	hashed := true

	if n := k.args["prefix"]; n != nil {
		prefix = n.Value
	}

	if n := k.args["order"]; n != nil {
		switch n.Value {
		case "hashed":
		case "ordered":
			hashed = false
		default:
			k.errorf(n, "order must be hashed or ordered, got %s", describe(n))
		}
	}

	if !k.ok {
		return nil
	}

	return &compiled{gen: &keyNameGen{key: key.gen, prefix: prefix, hashed: hashed}, elems: 2}
}

// keyNameGen builds record names from integer keys.
type keyNameGen struct {
	key    generator
	prefix string
	hashed bool
}

func (g *keyNameGen) value(s *Scope) any {
	v, ok := g.key.value(s).(int64)
	if !ok {
		return g.prefix
	}

	return KeyName(g.prefix, v, g.hashed)
}

// KeyName is the record name ^keyname gives key: prefix followed by the key
// in decimal, or by its 64-bit FNV-1a hash (8 bytes, low first) when
// hashed.
func KeyName(prefix string, key int64, hashed bool) string {
	if hashed {
		return prefix + strconv.FormatUint(fnv64(uint64(key)), 10)
	}

	return prefix + strconv.FormatInt(key, 10)
}

// fieldsArgs reads count, prefix and of of ^fields and ^field.
func (k *call) fieldsArgs() (count int64, prefix string, of *compiled) {
	k.require("count", "of")
	count = k.intIn("count", 1, 1, 1024)
	prefix = "field"

	if n := k.args["prefix"]; n != nil {
		prefix = n.Value
	}

	of = k.template("of")

	return count, prefix, of
}

// compileFields compiles ^fields: {count: n, prefix: field, of: template,
// id: template}: a document of n fields, prefix0 to prefix(n-1), each
// generated from of, after an _id generated from id when it is given (a
// YCSB record: its key, then its fields).
func compileFields(k *call) *compiled {
	count, prefix, of := k.fieldsArgs()
	id := k.template("id")

	if !k.ok {
		return nil
	}

	g := &fieldsGen{of: of.gen}
	elems := 1 + float64(count)*of.elems

	if id != nil {
		g.names = append(g.names, "_id")
		g.id = id.gen
		elems += id.elems
	}

	for i := range count {
		g.names = append(g.names, prefix+strconv.FormatInt(i, 10))
	}

	return &compiled{gen: g, elems: elems}
}

// fieldsGen generates a document of its named fields, the first being _id
// when id is not nil.
type fieldsGen struct {
	names []string
	id    generator
	of    generator
}

func (g *fieldsGen) value(s *Scope) any {
	d := make(bson.D, len(g.names))
	names := g.names

	if g.id != nil {
		d[0] = bson.E{Key: "_id", Value: g.id.value(s)}
		names = names[1:]
	}

	off := len(d) - len(names)
	for i, name := range names {
		d[off+i] = bson.E{Key: name, Value: g.of.value(s)}
	}

	return d
}

// compileField compiles ^field: {count: n, prefix: field, of: template}: a
// document of one field, chosen uniformly among prefix0 to prefix(n-1)
// (YCSB's update of one field).
func compileField(k *call) *compiled {
	count, prefix, of := k.fieldsArgs()
	if !k.ok {
		return nil
	}

	g := &fieldGen{of: of.gen}
	for i := range count {
		g.names = append(g.names, prefix+strconv.FormatInt(i, 10))
	}

	return &compiled{gen: g, elems: 1 + of.elems}
}

// fieldGen generates a one-field document with a random field name.
type fieldGen struct {
	names []string
	of    generator
}

func (g *fieldGen) value(s *Scope) any {
	return bson.D{{Key: g.names[s.rng.IntN(len(g.names))], Value: g.of.value(s)}}
}
