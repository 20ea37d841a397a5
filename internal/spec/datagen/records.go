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
	generators["^keyname"] = &spec{args: []string{"key", "prefix", "order", "zeropadding"}, compile: compileKeyName}
	generators["^fields"] = &spec{args: []string{"count", "prefix", "of", "id"}, compile: compileFields}
	generators["^field"] = &spec{args: []string{"count", "prefix", "of"}, compile: compileField}
}

// keyArgs are the arguments of ^key: the distribution, every argument of
// the distributions it names, and ycsbSizing.
var keyArgs = []string{
	"distribution", "min", "max", "counter", "theta", "hot_fraction", "hot_probability", "percentile", "fraction",
	"recordcount", "operationcount", "insertproportion",
}

// ycsbSizing are the YCSB properties from which ^key sizes the key space
// of its zipfian as YCSB's CoreWorkload does: recordcount keys plus
// operationcount * insertproportion * 2 expected inserts, plus one (YCSB
// builds ScrambledZipfianGenerator(0, recordcount + expected inserts),
// whose max is inclusive). Every distribution accepts them, so that a
// workload can pass them whatever requestdistribution it is run with; the
// others ignore them, as YCSB's do.
var ycsbSizing = []string{"recordcount", "operationcount", "insertproportion"}

// keyDistributions maps the names YCSB's requestdistribution takes to the
// generator that draws them and the arguments it accepts. YCSB's "zipfian"
// is the scrambled one (the popular keys spread over the key space), and
// its "latest" is ^latest with ycsb: true (YCSB's own generator, not the
// distribution it approximates).
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
		case name == "distribution", slices.Contains(ycsbSizing, name):
		case !slices.Contains(d.args, name):
			k.errorf(v, "%s does not apply to distribution %s (it takes %s)", name, n.Value, strings.Join(d.args, ", "))
		default:
			sub.args[name] = v
		}
	}

	keys := k.ycsbKeys()

	if !k.ok {
		return nil
	}

	if n.Value == "latest" {
		sub.args["ycsb"] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}
	}

	if n.Value == "zipfian" {
		sub.args["scrambled"] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}

		if keys > 0 {
			sub.args["keys"] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(keys, 10)}
		}
	}

	c := generators[d.name].compile(&sub)
	k.ok = sub.ok

	return c
}

// ycsbKeys returns the number of keys YCSB's zipfian folds onto, from
// ycsbSizing, or 0 when recordcount is not given.
func (k *call) ycsbKeys() int64 {
	const most = 1 << 62

	records := k.intIn("recordcount", 0, 0, most)
	ops := k.intIn("operationcount", 0, 0, most)
	p := k.float("insertproportion", 0)

	if k.ok && (p < 0 || p > 1) {
		k.errorf(k.at("insertproportion"), "insertproportion must be between 0 and 1, got %g", p)
	}

	if k.args["recordcount"] == nil {
		for _, name := range ycsbSizing[1:] {
			if n := k.args[name]; n != nil {
				k.errorf(n, "%s sizes the key space together with recordcount, which is missing", name)
			}
		}

		return 0
	}

	if !k.ok {
		return 0
	}

	return records + int64(float64(ops)*p*2.0) + 1
}

// compileKeyName compiles ^keyname: {key: <integer template>, prefix:
// "user", order: hashed, zeropadding: 1}: the record name prefix + key, or,
// hashed, prefix + a hash of the key, so that records inserted in key
// order land all over the name space (YCSB's insertorder), the number
// padded with zeros to zeropadding digits (YCSB's zeropadding).
func compileKeyName(k *call) *compiled {
	k.require("key")
	key := k.template("key")
	prefix := "user"
	hashed := true
	pad := k.intIn("zeropadding", 1, 0, 64)

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

	return &compiled{gen: &keyNameGen{key: key.gen, prefix: prefix, hashed: hashed, pad: int(pad)}, elems: 2}
}

// keyNameGen builds record names from integer keys.
type keyNameGen struct {
	key    generator
	prefix string
	hashed bool
	pad    int
}

func (g *keyNameGen) value(s *Scope) any {
	v, ok := g.key.value(s).(int64)
	if !ok {
		return g.prefix
	}

	return KeyName(g.prefix, v, g.hashed, g.pad)
}

// KeyName is the record name ^keyname gives key, as YCSB's
// CoreWorkload.buildKeyName writes it: prefix, then zeros up to zeropadding
// digits, then the key in decimal or, hashed, YCSB's hash of it (ycsbHash).
func KeyName(prefix string, key int64, hashed bool, zeropadding int) string {
	if hashed {
		key = ycsbHash(uint64(key))
	}

	v := strconv.FormatInt(key, 10)
	if fill := zeropadding - len(v); fill > 0 {
		return prefix + strings.Repeat("0", fill) + v
	}

	return prefix + v
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
