package datagen

import (
	"math"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// spec describes one generator: its arguments and how to compile it.
type spec struct {
	args    []string              // argument names, in the order messages list them
	short   string                // the argument a scalar stands for, as count in ^words: 3
	scalar  func(*call) *compiled // compiles a scalar argument that is not a shorthand (^var, ^date)
	compile func(*call) *compiled // compiles mapping arguments; nil if only scalar is accepted
}

// call is one use of a generator being compiled.
type call struct {
	c       *compiler
	name    string     // e.g. "^int"
	mapping *yaml.Node // the {^name: ...} mapping, which identifies ^seq counters and ^pool values
	key     *yaml.Node // the ^name key, where problems with the call as a whole are reported
	node    *yaml.Node // the arguments (resolved)
	path    string
	args    map[string]*yaml.Node // resolved argument values by name
	ok      bool                  // false once a problem was reported
}

// generator compiles generator mapping m, whose only key is key.
func (c *compiler) generator(m, key, val *yaml.Node, path string) *compiled {
	sp := generators[key.Value]
	if sp == nil {
		c.errorf(key, path, "unknown generator %s (known: %s)", key.Value, strings.Join(sortedKeys(generators), ", "))

		return nil
	}

	k := &call{c: c, name: key.Value, mapping: m, key: key, path: path, ok: true}

	val = yamlpos.Resolve(val)
	if val == nil {
		val = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: key.Line, Column: key.Column}
	}

	k.node = val

	switch {
	case val.Kind == yaml.ScalarNode && !isNull(val) && sp.scalar != nil:
		return sp.scalar(k)
	case val.Kind == yaml.ScalarNode && !isNull(val) && sp.short != "":
		k.args = map[string]*yaml.Node{sp.short: val}
	case sp.compile == nil:
		return sp.scalar(k) // reports what it wants instead
	case isNull(val):
	case val.Kind == yaml.MappingNode:
		k.parseArgs(sp)
	default:
		k.errorf(val, "arguments must be a mapping%s, got %s", knownArgs(sp), describe(val))
	}

	if !k.ok {
		return nil
	}

	return sp.compile(k)
}

// knownArgs lists the arguments of sp for messages.
func knownArgs(sp *spec) string {
	if len(sp.args) == 0 {
		return " (this generator takes none)"
	}

	return " (known: " + strings.Join(sp.args, ", ") + ")"
}

// parseArgs fills k.args from the argument mapping, reporting unknown and
// duplicate names.
func (k *call) parseArgs(sp *spec) {
	k.args = make(map[string]*yaml.Node, len(k.node.Content)/2)

	for i := 0; i+1 < len(k.node.Content); i += 2 {
		name := yamlpos.Resolve(k.node.Content[i])

		switch {
		case name == nil || name.Kind != yaml.ScalarNode:
			k.errorf(k.node.Content[i], "argument names must be strings")
		case !contains(sp.args, name.Value):
			k.errorf(name, "unknown argument %q%s", name.Value, knownArgs(sp))
		case k.args[name.Value] != nil:
			k.errorf(name, "duplicate argument %q", name.Value)
		default:
			v := yamlpos.Resolve(k.node.Content[i+1])
			if v == nil {
				v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: name.Line, Column: name.Column}
			}

			k.args[name.Value] = v
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}

	return false
}

// errorf reports a problem at node n, prefixed with the generator name.
func (k *call) errorf(n *yaml.Node, format string, args ...any) {
	k.c.errorf(n, k.path, k.name+": "+format, args...)
	k.ok = false
}

// require reports the arguments in names that are missing.
func (k *call) require(names ...string) {
	for _, name := range names {
		if k.args[name] == nil {
			k.errorf(k.key, "missing argument %s", name)
		}
	}
}

// at returns the node of argument name, or the generator key if it is
// missing, for positioning messages.
func (k *call) at(name string) *yaml.Node {
	if n := k.args[name]; n != nil {
		return n
	}

	return k.key
}

// sub returns the field path of a template nested in argument name.
func (k *call) sub(name string) string {
	return yamlpos.Field(yamlpos.Field(k.path, k.name), name)
}

// int returns integer argument name, or def if it is missing.
func (k *call) int(name string, def int64) int64 {
	n := k.args[name]
	if n == nil {
		return def
	}

	v, ok := toInt(n)
	if !ok {
		k.errorf(n, "%s must be an integer, got %s", name, describe(n))

		return def
	}

	return v
}

// intIn returns integer argument name, or def if it is missing, and checks
// that it is in [lo, hi].
func (k *call) intIn(name string, def, lo, hi int64) int64 {
	v := k.int(name, def)
	if v < lo || v > hi {
		k.errorf(k.at(name), "%s must be between %d and %d, got %d", name, lo, hi, v)
	}

	return v
}

// float returns finite numeric argument name, or def if it is missing.
func (k *call) float(name string, def float64) float64 {
	n := k.args[name]
	if n == nil {
		return def
	}

	v, ok := toFloat(n)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		k.errorf(n, "%s must be a finite number, got %s", name, describe(n))

		return def
	}

	return v
}

// probability returns argument name, or def if it is missing, and checks
// that it is in [lo, 1] (lo is 0 or a tiny positive number for "> 0").
func (k *call) probability(name string, def, lo float64) float64 {
	v := k.float(name, def)
	if v < lo || v > 1 {
		op := ">="
		if lo > 0 {
			op = ">"
		}

		k.errorf(k.at(name), "%s must be %s 0 and <= 1, got %g", name, op, v)
	}

	return v
}

// template compiles argument name as a nested template.
func (k *call) template(name string) *compiled {
	n := k.args[name]
	if n == nil {
		return nil
	}

	t := k.c.compile(n, k.sub(name))
	if t == nil {
		k.ok = false
	}

	return t
}
