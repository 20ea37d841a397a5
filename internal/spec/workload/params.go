package workload

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// Param is one parameter of a workload: declared with a type and a default
// in its params block, referenced as ${name} or {^param: name} anywhere in
// the file, and overridden on the command line with --set name=value.
type Param struct {
	Name string `json:"name"`

	// Type is int, float, bool, string or duration.
	Type string `json:"type"`

	// Default is the value written in the file.
	Default string `json:"default"`

	// Value is the value the run used.
	Value string `json:"value"`

	// Set reports that Value came from --set.
	Set bool `json:"set,omitempty"`

	// Values, when not empty, lists the values a string parameter may take.
	Values []string `json:"values,omitempty"`

	// Secret marks a parameter whose value must never be written: declared
	// with secret: true, or named like a secret (api_token, db_password;
	// the rule is redact.IsSecretKey, the one every other secret field is
	// recognised by). Everything mongobench writes masks its value and
	// default wherever they appear, including where ${name} was
	// substituted (result.Sanitize), and its messages do not quote them.
	Secret bool `json:"secret,omitempty"`
}

// ParamTypes lists the types a parameter may have.
var ParamTypes = []string{"int", "float", "bool", "string", "duration"}

var (
	paramNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)
	paramRefRe  = regexp.MustCompile(`\$\{([^}]*)\}`)
)

// tag is the YAML tag a whole-scalar reference takes, so that ${recordcount}
// stays an integer where an integer is expected.
func (p *Param) tag() string {
	switch p.Type {
	case "int":
		return "!!int"
	case "float":
		return "!!float"
	case "bool":
		return "!!bool"
	default:
		return "!!str"
	}
}

// check reports whether value is valid for the parameter's type. The
// message quotes value unless the parameter is secret.
func (p *Param) check(value string) error {
	var err error

	switch p.Type {
	case "int":
		_, err = strconv.ParseInt(value, 10, 64)
	case "float":
		_, err = strconv.ParseFloat(value, 64)
	case "bool":
		if value != "true" && value != "false" {
			err = fmt.Errorf("not true or false")
		}
	case "duration":
		_, err = time.ParseDuration(value)
	}

	quoted := strconv.Quote(value)
	if p.Secret {
		quoted = "the value (secret, not shown)"
	}

	if err != nil {
		return fmt.Errorf("%s is not a valid %s", quoted, p.Type)
	}

	if len(p.Values) > 0 && !slices.Contains(p.Values, value) {
		if p.Secret {
			return fmt.Errorf("%s is not one of the %d allowed values", quoted, len(p.Values))
		}

		return fmt.Errorf("%s is not one of %s", quoted, strings.Join(p.Values, ", "))
	}

	return nil
}

// params holds a file's parameters while it is parsed.
type params struct {
	file   string
	byName map[string]*Param
	list   []Param
	errs   []error
}

func (ps *params) errorf(n *yaml.Node, path, format string, args ...any) {
	e := yamlpos.At(n, path, format, args...)
	e.File = ps.file
	ps.errs = append(ps.errs, e)
}

// applyParams takes the params block out of root, applies the overrides of
// set ("name=value" each) and replaces every reference in the rest of the
// file by its value. A reference to an undeclared name is an error, except
// ${NAME} inside targets, which the run resolves from the environment.
func applyParams(file string, root *yaml.Node, set []string) ([]Param, []error) {
	ps := &params{file: file, byName: map[string]*Param{}}

	if root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "params" {
				ps.declare(root.Content[i+1])
				root.Content = slices.Delete(root.Content, i, i+2)

				break
			}
		}
	}

	ps.override(set)

	if len(ps.errs) > 0 {
		return nil, ps.errs
	}

	for i := 0; i+1 < len(root.Content) && root.Kind == yaml.MappingNode; i += 2 {
		key := root.Content[i].Value
		ps.substitute(root.Content[i+1], key, key == "targets")
	}

	if len(ps.errs) > 0 {
		yamlpos.Sort(ps.errs)
		return nil, ps.errs
	}

	for _, p := range ps.byName {
		ps.list[slices.IndexFunc(ps.list, func(q Param) bool { return q.Name == p.Name })] = *p
	}

	return ps.list, nil
}

// declare reads the params block: name: default (type from the YAML
// scalar) or name: {type, default, values, secret}.
func (ps *params) declare(n *yaml.Node) {
	n = yamlpos.Resolve(n)
	if n.Kind != yaml.MappingNode {
		ps.errorf(n, "params", "must be a mapping of parameter names to defaults or to {type, default, values, secret}")
		return
	}

	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], yamlpos.Resolve(n.Content[i+1])
		path := yamlpos.Field("params", k.Value)

		switch {
		case !paramNameRe.MatchString(k.Value):
			ps.errorf(k, "params", "%q: parameter names use letters, digits, '_' and '.', not starting with a digit", k.Value)
			continue
		case ps.byName[k.Value] != nil:
			ps.errorf(k, "params", "parameter %q is declared twice", k.Value)
			continue
		}

		p := &Param{Name: k.Value, Secret: redact.IsSecretKey(k.Value)}

		switch v.Kind {
		case yaml.ScalarNode:
			p.Type, p.Default = typeOfScalar(v), v.Value
		case yaml.MappingNode:
			ps.declareLong(p, v, path)
		default:
			ps.errorf(v, path, "must be a default value or a mapping {type, default, values, secret}")
			continue
		}

		if err := p.check(p.Default); p.Type != "" && err != nil {
			ps.errorf(v, path, "default %v", err)
		}

		p.Value = p.Default
		ps.byName[p.Name] = p
		ps.list = append(ps.list, *p)
	}
}

// declareLong reads {type, default, values, secret}. secret: false does
// not unmark a parameter named like a secret: the name alone makes every
// writer mask it, so the declaration could not keep that promise.
func (ps *params) declareLong(p *Param, v *yaml.Node, path string) {
	for j := 0; j+1 < len(v.Content); j += 2 {
		f, fv := v.Content[j], yamlpos.Resolve(v.Content[j+1])

		switch f.Value {
		case "type":
			if !slices.Contains(ParamTypes, fv.Value) {
				ps.errorf(fv, yamlpos.Field(path, "type"), "%q is not a parameter type (known: %s)", fv.Value, strings.Join(ParamTypes, ", "))
			}

			p.Type = fv.Value
		case "default":
			p.Default = fv.Value
		case "values":
			for _, it := range fv.Content {
				p.Values = append(p.Values, it.Value)
			}
		case "secret":
			switch {
			case fv.Kind != yaml.ScalarNode || fv.ShortTag() != "!!bool":
				ps.errorf(fv, yamlpos.Field(path, "secret"), "must be true or false")
			case fv.Value == "false" && p.Secret:
				ps.errorf(fv, yamlpos.Field(path, "secret"), "%q is named like a secret, so it is masked wherever it is written; remove secret: false or rename the parameter", p.Name)
			default:
				p.Secret = p.Secret || fv.Value == "true"
			}
		default:
			ps.errorf(f, path, "unknown field %q (known: type, default, values, secret)", f.Value)
		}
	}

	if p.Type == "" {
		p.Type = "string"
	}
}

// typeOfScalar infers a parameter's type from its default.
func typeOfScalar(n *yaml.Node) string {
	switch n.ShortTag() {
	case "!!int":
		return "int"
	case "!!float":
		return "float"
	case "!!bool":
		return "bool"
	default:
		return "string"
	}
}

// override applies --set name=value. Its messages show the value of a
// secret parameter, or of an undeclared name that looks like one, masked.
func (ps *params) override(set []string) {
	for _, s := range set {
		name, value, ok := strings.Cut(s, "=")
		p := ps.byName[name]

		label := s
		if ok && (p != nil && p.Secret || redact.IsSecretKey(name)) {
			label = name + "=" + redact.Mask
		}

		switch {
		case !ok:
			ps.errs = append(ps.errs, fmt.Errorf("--set %s: give name=value", s))
		case p == nil:
			ps.errs = append(ps.errs, fmt.Errorf("--set %s: %s declares no parameter %q (declared: %s)",
				label, ps.file, name, strings.Join(sortedKeys(ps.byName), ", ")))
		default:
			if err := p.check(value); err != nil {
				ps.errs = append(ps.errs, fmt.Errorf("--set %s: %w (parameter %s has type %s)", label, err, name, p.Type))
				continue
			}

			p.Value, p.Set = value, true
		}
	}
}

// substitute replaces the references under n. In targets, only declared
// names are replaced: the others are environment variables.
func (ps *params) substitute(n *yaml.Node, path string, env bool) {
	if n == nil || n.Kind == yaml.AliasNode {
		return // the anchored node is substituted where it is written
	}

	switch n.Kind {
	case yaml.ScalarNode:
		ps.scalar(n, path, env)
	case yaml.MappingNode:
		if len(n.Content) == 2 && n.Content[0].Value == "^param" {
			ps.paramGenerator(n, path)
			return
		}

		for i := 0; i+1 < len(n.Content); i += 2 {
			ps.scalar(n.Content[i], path, env)
			ps.substitute(n.Content[i+1], yamlpos.Field(path, n.Content[i].Value), env)
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for i, c := range n.Content {
			ps.substitute(c, yamlpos.Index(path, i), env)
		}
	}
}

// scalar substitutes the references in one scalar. A scalar that is
// exactly one reference takes the parameter's type, quoted or not (inside
// a flow mapping {...} the reference must be quoted, since YAML reserves
// the braces there); otherwise the value is spliced into the string.
func (ps *params) scalar(n *yaml.Node, path string, env bool) {
	if !strings.Contains(n.Value, "${") {
		return
	}

	if m := paramRefRe.FindStringSubmatch(n.Value); m != nil && m[0] == n.Value {
		if p := ps.lookup(n, path, m[1], env); p != nil {
			n.Value, n.Tag, n.Style = p.Value, p.tag(), 0
		}

		return
	}

	n.Value = paramRefRe.ReplaceAllStringFunc(n.Value, func(ref string) string {
		if p := ps.lookup(n, path, ref[2:len(ref)-1], env); p != nil {
			return p.Value
		}

		return ref
	})
}

// paramGenerator replaces {^param: name} by the parameter's value.
func (ps *params) paramGenerator(n *yaml.Node, path string) {
	name := yamlpos.Resolve(n.Content[1])
	if p := ps.lookup(name, path, name.Value, false); p != nil {
		*n = yaml.Node{Kind: yaml.ScalarNode, Tag: p.tag(), Value: p.Value, Line: n.Line, Column: n.Column}
	}
}

// lookup returns parameter name, reporting an undeclared one unless it may
// be an environment variable.
func (ps *params) lookup(n *yaml.Node, path, name string, env bool) *Param {
	if p := ps.byName[name]; p != nil {
		return p
	}

	if !env {
		known := "the file declares no params"
		if len(ps.byName) > 0 {
			known = "declared: " + strings.Join(sortedKeys(ps.byName), ", ")
		}

		ps.errorf(n, path, "unknown parameter %q (%s)", name, known)
	}

	return nil
}

// SecretValues returns the values and defaults of the secret parameters
// (see Param.Secret), for whoever prints or writes what the run did to
// mask them wherever a ${name} reference put them.
func (s *Spec) SecretValues() []string {
	var out []string

	for _, p := range s.Params {
		if p.Secret {
			out = append(out, p.Value, p.Default)
		}
	}

	return out
}

// sortedKeys lists the keys of m in order, for messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}

	slices.Sort(keys)

	return keys
}

// SetDuration sets the measured duration of every phase timed by a
// duration (trials.duration, --duration); phases that end by other means
// keep theirs. Non-positive durations change nothing.
func (s *Spec) SetDuration(d time.Duration) {
	if d <= 0 {
		return
	}

	phases, _ := s.PhaseList()
	for _, p := range phases {
		if p.Duration > 0 {
			p.Duration = Duration(d)
		}
	}
}

// SetBlocksDuration applies --duration to growth blocks: it sets every
// blocks phase's until.duration, so that no block starts after d (the
// running block finishes: a block cut short would be no point of the
// growth fit). The other until conditions still hold, whichever comes
// first. It reports whether any phase has blocks. Non-positive durations
// change nothing.
func (s *Spec) SetBlocksDuration(d time.Duration) bool {
	phases, _ := s.PhaseList()
	applied := false

	for _, p := range phases {
		if p.Blocks != nil {
			applied = true

			if d > 0 {
				p.Blocks.Until.Duration = Duration(d)
			}
		}
	}

	return applied
}

// SetMaxOperations applies --max-operations: it caps every phase that
// runs for a duration or a number of operations. It is an error when no
// phase does (phases driven by stages or blocks end by those).
func (s *Spec) SetMaxOperations(n int64) error {
	phases, _ := s.PhaseList()
	applied := false

	for _, p := range phases {
		if len(p.Stages) == 0 && p.Blocks == nil && (p.Duration > 0 || p.MaxOperations > 0) {
			p.MaxOperations = n
			applied = true
		}
	}

	if !applied {
		return fmt.Errorf("--max-operations applies to phases that run for a duration or a number of operations, and no phase of %s does (they end by stages or blocks)", s.Name)
	}

	return nil
}

// sequenceWeights reports weight on operations that no weighted mix runs:
// a sequence runs each of its operations once per pass, so a weight there
// would be silently ignored.
func (v *validator) sequenceWeights() {
	phases, _ := v.s.PhaseList()
	inMix := map[string]bool{}
	inSeq := map[string]bool{}

	for _, p := range phases {
		for _, name := range p.Sequence {
			inSeq[name] = true
		}

		var steps []Step
		if p.Blocks != nil {
			steps = p.Blocks.Steps
		}

		for _, st := range steps {
			for _, name := range st.Sequence {
				inSeq[name] = true
			}

			for _, name := range st.Operations {
				inMix[name] = true
			}
		}

		if len(p.Sequence) == 0 && p.Blocks == nil {
			for _, name := range v.s.MixOperations(p) {
				inMix[name] = true
			}
		}
	}

	for i, o := range v.s.Operations {
		if o.Weight != nil && inSeq[o.Name] && !inMix[o.Name] {
			v.at(yamlpos.Field(yamlpos.Index("operations", i), "weight"),
				"applies to weighted mixes, and %q runs only in sequences, where every operation runs once per pass", o.Name)
		}
	}
}
