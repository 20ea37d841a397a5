package datagen

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// Env holds what templates of one workload share: the seed, iteration
// variables and counters.
//
// One Env is made per workload run, so that ^seq counters and ^pool values
// are the same for every phase and every worker. Compile may be called from
// several goroutines (calls are serialized); NewScope and the Value method of
// compiled templates are safe for concurrent use.
type Env struct {
	seed int64

	vars    map[string]*variable
	varList []*variable // in definition order; a variable's index is its slot in a Scope

	mu       sync.Mutex                   // serializes compilation, which fills the fields below
	counters map[*yaml.Node]*atomic.Int64 // ^seq counters by generator node
	pools    map[*yaml.Node][]any         // ^pool values by generator node
	zipfs    int                          // number of ^zipf generators compiled; see Scope.zipf
	zetas    int                          // number of Zipfian key distributions compiled; see Scope.zeta
	named    map[string]*named            // named ^seq counters, the live key spaces
	steps    map[*yaml.Node]int64         // the step of each ^seq counter of counters

	shard shardPos // which shard of a distributed run this is; see Shard
}

// named is a named counter: the ^seq that sets its start, if any, where it
// is first declared and first used, and its value, the next key to hand out.
type named struct {
	ctr       *atomic.Int64
	declared  bool
	startNode *yaml.Node // the ^seq argument that set the start; nil: 0
	start     int64
	ref       *yaml.Node // the first key distribution that names it, and its path
	refPath   string
}

// namedCounter returns named counter name, creating it at 0.
func (e *Env) namedCounter(name string) *named {
	nc := e.named[name]
	if nc == nil {
		nc = &named{ctr: new(atomic.Int64)}
		e.named[name] = nc
	}

	return nc
}

// ResetKeySpaces sets every named counter back to its start. A trial
// calls it before loading a fresh database, so that the keys of one
// trial's load and inserts are the keys its reads draw from, whatever the
// trials before it inserted. Not safe while templates are being evaluated.
func (e *Env) ResetKeySpaces() {
	e.mu.Lock()
	defer e.mu.Unlock()

	for _, nc := range e.named {
		nc.ctr.Store(nc.start)
	}
}

// UndeclaredCounters returns an error, positioned where it is used, for
// each counter that a key distribution names but no ^seq declares: its
// range would stay empty. Call it after every template is compiled.
func (e *Env) UndeclaredCounters() []error {
	e.mu.Lock()
	defer e.mu.Unlock()

	var errs []error

	for _, name := range sortedKeys(e.named) {
		if nc := e.named[name]; !nc.declared {
			errs = append(errs, yamlpos.At(nc.ref, nc.refPath, "counter %q is not declared: no ^seq counts it "+
				"(write {^seq: {counter: %s}} in the document that inserts the keys)", name, name))
		}
	}

	return errs
}

// varState tracks a variable through compilation, to find reference cycles.
type varState int

const (
	varNew varState = iota
	varCompiling
	varDone
)

// variable is one iteration variable of an Env.
type variable struct {
	name  string
	index int
	value *yaml.Node
	path  string
	state varState
	c     *compiled // nil until compiled, and if compilation failed
}

// NewEnv compiles the iteration variables.
//
// vars is a YAML mapping node (may be nil) of name → template; path is the
// field path of that mapping for messages (e.g. "vars"). Variables may refer
// to other variables with ^var; cycles are an error naming the cycle. Errors
// are []error of *yamlpos.Error, sorted by position; the Env is nil then.
func NewEnv(seed int64, vars *yaml.Node, path string) (*Env, []error) {
	e := &Env{
		seed:     seed,
		vars:     make(map[string]*variable),
		counters: make(map[*yaml.Node]*atomic.Int64),
		pools:    make(map[*yaml.Node][]any),
		named:    make(map[string]*named),
		steps:    make(map[*yaml.Node]int64),
	}
	c := newCompiler(e)

	vars = yamlpos.Resolve(vars)
	if vars != nil && vars.Kind == yaml.DocumentNode && len(vars.Content) > 0 {
		vars = yamlpos.Resolve(vars.Content[0])
	}

	switch {
	case vars == nil || vars.Kind == 0 || isNull(vars):
	case vars.Kind != yaml.MappingNode:
		c.errorf(vars, path, "must be a mapping of variable names to templates, got %s", describe(vars))
	default:
		e.addVars(c, vars, path)

		for _, v := range e.varList {
			if v.state == varNew {
				c.compileVar(v)
			}
		}
	}

	if errs := c.errors(); errs != nil {
		return nil, errs
	}

	return e, nil
}

// addVars registers the variables of mapping n without compiling them, so
// that variables can refer to ones defined further down.
func (e *Env) addVars(c *compiler, n *yaml.Node, path string) {
	keys := make(map[string]*yaml.Node)

	for i := 0; i+1 < len(n.Content); i += 2 {
		k := yamlpos.Resolve(n.Content[i])

		if k == nil || k.Kind != yaml.ScalarNode || k.Value == "" {
			c.errorf(n.Content[i], path, "variable names must be non-empty strings")

			continue
		}

		if prev, dup := keys[k.Value]; dup {
			c.errorf(k, path, "variable %q is already defined at line %d", k.Value, prev.Line)

			continue
		}

		keys[k.Value] = k
		v := &variable{
			name:  k.Value,
			index: len(e.varList),
			value: n.Content[i+1],
			path:  yamlpos.Field(path, k.Value),
		}
		e.vars[v.name] = v
		e.varList = append(e.varList, v)
	}
}

// compileVar compiles variable v, and on the way every variable it refers to.
func (c *compiler) compileVar(v *variable) {
	v.state = varCompiling
	c.stack = append(c.stack, v)
	v.c = c.root(v.value, v.path)
	c.stack = c.stack[:len(c.stack)-1]
	v.state = varDone
}

// compileVarRef compiles ^var: name.
func compileVarRef(k *call) *compiled {
	n := k.node
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" || n.Value == "" {
		k.errorf(n, "must be the name of a variable, got %s", describe(n))

		return nil
	}

	v := k.c.env.vars[n.Value]
	if v == nil {
		known := "no variables are defined"
		if len(k.c.env.vars) > 0 {
			known = "known: " + strings.Join(sortedKeys(k.c.env.vars), ", ")
		}

		k.errorf(n, "unknown variable %q (%s)", n.Value, known)

		return nil
	}

	switch v.state {
	case varNew:
		k.c.compileVar(v)
	case varCompiling:
		i := slices.Index(k.c.stack, v)
		names := make([]string, 0, len(k.c.stack)-i+1)

		for _, sv := range k.c.stack[i:] {
			names = append(names, sv.name)
		}

		k.errorf(n, "variable cycle %s", strings.Join(append(names, v.name), " -> "))

		return nil
	case varDone:
	}

	if v.c == nil {
		return nil // its own errors have been reported
	}

	if isConst(v.c) {
		return v.c
	}

	return &compiled{gen: &varGen{v: v}, elems: v.c.elems}
}

// varGen generates the value of a variable once per iteration.
type varGen struct{ v *variable }

func (g *varGen) value(s *Scope) any {
	i := g.v.index
	if s.varIter[i] == s.iter {
		return s.varVal[i]
	}

	val := g.v.c.gen.value(s)
	s.varIter[i], s.varVal[i] = s.iter, val

	return val
}

func (g *varGen) intRange() (lo, hi int64, ok bool) { return intRange(g.v.c.gen) }

// counter returns the ^seq counter of generator node n, creating it at start.
func (e *Env) counter(n *yaml.Node, start int64) *atomic.Int64 {
	ctr := e.counters[n]
	if ctr == nil {
		ctr = new(atomic.Int64)
		ctr.Store(start)
		e.counters[n] = ctr
	}

	return ctr
}

// pool returns the values of ^pool generator node n, generating them on
// first use from a Scope seeded by the Env seed and the node's position, so
// that they do not depend on the order in which templates are compiled.
func (e *Env) pool(n *yaml.Node, size int, of generator) []any {
	if vals, ok := e.pools[n]; ok && len(vals) == size {
		return vals
	}

	s := e.newScope(domainPool, uint64(n.Line), uint64(n.Column))
	vals := make([]any, size)

	for i := range vals {
		s.NextIteration()
		vals[i] = of.value(s)
	}

	e.pools[n] = vals

	return vals
}

// sortedKeys lists the keys of m in order, for messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}

	sort.Strings(keys)

	return keys
}

// describe names the kind of node n for messages: the scalar itself, or
// "a mapping" / "a sequence".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}

		return fmt.Sprintf("%q", n.Value)
	default:
		return "nothing"
	}
}
