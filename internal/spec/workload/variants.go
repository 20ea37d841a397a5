package workload

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// DefaultRounds is the number of trial rounds of a comparison (variants or
// several targets): the distribution-free 95% confidence interval of the
// median per-round ratio needs at least 6 (verdict.MinSamples), and an even
// number gives each side of the alternating order the same share of first
// places.
const DefaultRounds = 6

// TrialRounds is the number of trial rounds to run: override when positive
// (the --rounds flag), else run.rounds, else trials.rounds, else
// DefaultRounds for a comparison (variants, or several targets counting
// those added on the command line) and 1 otherwise.
func (s *Spec) TrialRounds(override int, comparison bool) int {
	for _, r := range []int{override, s.Run.Rounds, s.Trials.Rounds} {
		if r > 0 {
			return r
		}
	}

	if comparison {
		return DefaultRounds
	}

	return 1
}

// comparisonKeys are top-level keys that describe the comparison, not one
// run: they are left out of the documents variants are parsed from.
var comparisonKeys = []string{"variants", "trials", "targets"}

// VariantSpecs returns the specs to compare: one per variant, each the base
// document with the variant's patch merged in, parsed and validated; or the
// spec itself when it has no variants.
func (s *Spec) VariantSpecs() ([]*Spec, []error) {
	if len(s.Variants) == 0 {
		return []*Spec{s}, nil
	}

	specs := make([]*Spec, 0, len(s.Variants))

	var errs []error

	for i := range s.Variants {
		v := &s.Variants[i]

		doc := withoutKeys(s.root, comparisonKeys)
		for _, patch := range []struct {
			key string
			t   *Template
		}{
			{"vars", v.Vars},
			{"collections", v.Collections},
			{"load", v.Load},
			{"run", v.Run},
			{"phases", v.Phases},
			{"operations", v.Operations},
		} {
			if patch.t != nil {
				doc = setKey(doc, patch.key, merge(lookup(doc, patch.key), patch.t.Node()))
			}
		}

		vs, verrs := parseRoot(s.file, s.source, doc)
		for _, err := range verrs {
			var pe *yamlpos.Error
			if errors.As(err, &pe) {
				pe.Msg = fmt.Sprintf("%s (in variant %q)", pe.Msg, v.Name)
			}

			errs = append(errs, err)
		}

		if vs != nil {
			vs.Variant = v.Name
			vs.Variants, vs.Trials, vs.Targets = nil, s.Trials, s.Targets
			vs.Params = s.Params // substituted into the file the variants patch
			specs = append(specs, vs)
		}
	}

	if len(errs) > 0 {
		return nil, errs
	}

	return specs, nil
}

// parseRoot decodes, completes and validates a document node.
func parseRoot(file string, source []byte, root *yaml.Node) (*Spec, []error) {
	s := &Spec{file: file, source: source, root: root}
	d := &decoder{nodes: map[string]*yaml.Node{"": root}}
	d.decode(root, reflect.ValueOf(s).Elem(), "")

	if len(d.errs) > 0 {
		yamlpos.Sort(d.errs)
		return nil, yamlpos.WithFile(file, d.errs)
	}

	s.nodes = d.nodes
	s.applyDefaults()

	if errs := s.Validate(); len(errs) > 0 {
		return nil, errs
	}

	return s, nil
}

// merge returns patch merged over base without modifying either: mappings
// key by key; lists of named items item by item (an item whose op changes
// is replaced, since its fields belong to the other kind); anything else
// replaced by the patch.
func merge(base, patch *yaml.Node) *yaml.Node {
	base, patch = yamlpos.Resolve(base), yamlpos.Resolve(patch)

	switch {
	case base == nil:
		return patch
	case base.Kind == yaml.MappingNode && patch.Kind == yaml.MappingNode:
		if opOf(base) != opOf(patch) && opOf(patch) != "" {
			return patch
		}

		out := *base
		out.Content = slices.Clone(base.Content)

		for i := 0; i+1 < len(patch.Content); i += 2 {
			k, v := patch.Content[i], patch.Content[i+1]
			out = *setKey(&out, k.Value, merge(lookup(&out, k.Value), v))
		}

		return &out
	case base.Kind == yaml.SequenceNode && patch.Kind == yaml.SequenceNode && named(base) && named(patch):
		out := *base
		out.Content = slices.Clone(base.Content)

		for _, item := range patch.Content {
			key := itemKey(item)

			j := slices.IndexFunc(out.Content, func(n *yaml.Node) bool { return itemKey(n) == key })
			if j >= 0 {
				out.Content[j] = merge(out.Content[j], item)
			} else {
				out.Content = append(out.Content, item)
			}
		}

		return &out
	}

	return patch
}

// itemKey identifies an item of a list: its name, or its collection for
// load steps; "" when it has neither.
func itemKey(n *yaml.Node) string {
	if v := lookup(n, "name"); v != nil && v.Kind == yaml.ScalarNode {
		return "name:" + v.Value
	}

	if v := lookup(n, "collection"); v != nil && v.Kind == yaml.ScalarNode {
		return "collection:" + v.Value
	}

	return ""
}

func named(seq *yaml.Node) bool {
	for _, item := range seq.Content {
		if itemKey(item) == "" {
			return false
		}
	}

	return len(seq.Content) > 0
}

// opOf returns the kind of the operation n: its op, "steps" for a
// composite operation, or "" when n says neither.
func opOf(n *yaml.Node) string {
	if v := lookup(n, "op"); v != nil {
		return v.Value
	}

	if lookup(n, "steps") != nil {
		return "steps"
	}

	return ""
}

// lookup returns the value of key in mapping n, or nil.
func lookup(n *yaml.Node, key string) *yaml.Node {
	n = yamlpos.Resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}

	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}

	return nil
}

// setKey returns a copy of mapping n with key set to v.
func setKey(n *yaml.Node, key string, v *yaml.Node) *yaml.Node {
	out := *yamlpos.Resolve(n)
	out.Content = slices.Clone(out.Content)

	for i := 0; i+1 < len(out.Content); i += 2 {
		if out.Content[i].Value == key {
			out.Content[i+1] = v
			return &out
		}
	}

	out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: v.Line, Column: v.Column}, v)

	return &out
}

// withoutKeys returns a copy of mapping n without the given keys.
func withoutKeys(n *yaml.Node, keys []string) *yaml.Node {
	out := *n
	out.Content = nil

	for i := 0; i+1 < len(n.Content); i += 2 {
		if !slices.Contains(keys, n.Content[i].Value) {
			out.Content = append(out.Content, n.Content[i], n.Content[i+1])
		}
	}

	return &out
}

// comparison validates variants, trials and targets.
func (v *validator) comparison() {
	names := map[string]bool{}

	for i, va := range v.s.Variants {
		p := yamlpos.Index("variants", i)

		switch {
		case va.Name == "":
			v.at(yamlpos.Field(p, "name"), "is required")
		case !nameRe.MatchString(va.Name):
			v.at(yamlpos.Field(p, "name"), "%q: use letters, digits, '_', '.' and '-' only", va.Name)
		case names[va.Name]:
			v.at(yamlpos.Field(p, "name"), "variant %q is defined twice", va.Name)
		}

		names[va.Name] = true
	}

	// A comparison group ranks its variants among themselves: a group of
	// one compares nothing (a typo in a group's name, most likely).
	members := map[string]int{}
	for _, va := range v.s.Variants {
		members[va.Group]++
	}

	for i, va := range v.s.Variants {
		if va.Group != "" && members[va.Group] < 2 {
			v.at(yamlpos.Field(yamlpos.Index("variants", i), "group"),
				"group %q holds only variant %q: a group compares at least two variants", va.Group, va.Name)
		}
	}

	if r := v.s.Trials.Rounds; r < 0 || r > 1000 || (r == 0 && v.s.node("trials.rounds") != nil) {
		v.at("trials.rounds", "must be between 1 and 1000")
	}

	if r := v.s.Run.Rounds; r < 0 || r > 1000 || (r == 0 && v.s.node("run.rounds") != nil) {
		v.at("run.rounds", "must be between 1 and 1000")
	}

	v.targets()
}
