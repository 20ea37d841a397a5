package datagen

import (
	"testing"

	"go.yaml.in/yaml/v4"
)

// FuzzCompile compiles arbitrary YAML, which must never panic, and neither
// may generating values from what compiled. A document that is a mapping
// with keys vars and t is compiled as variables and a template.
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		"{a: 1, b: [x, 2.5, true, ~]}",
		"{^int: {min: -5, max: 5}}",
		"{^float: {min: 0, max: 1}}",
		"{^choice: {values: [{^pool: {size: 3, of: {^sentence: 4}}}, {^words: 2}], weights: [9, 1]}}",
		"{^array: {length: {^zipf: {max: 4}}, of: {^hotspot: {min: 0, max: 99}}}}",
		"{^array: {length: {^var: n}, of: {^string: 3}}}",
		"{vars: {n: {^int: {min: 0, max: 3}}, m: {^var: n}}, t: {x: {^var: m}, y: {^seq: {}}}}",
		"{vars: {a: {^var: b}, b: {^var: a}}, t: 1}",
		"{^date: {from: 2020-01-01, to: 2021-01-01}}",
		"{a: &x {^bool: 0.2}, b: *x, c: {<<: {k: 1}}}",
		"{^name: {}, x: 1}",
		"{^uuid: {}}",
		"&a [*a]",
		"{^objectId: }",
	} {
		f.Add(seed, int64(1))
	}

	f.Fuzz(func(t *testing.T, src string, seed int64) {
		if len(src) > 4096 {
			return // long inputs only exercise the YAML parser
		}

		var doc yaml.Node
		if yaml.Unmarshal([]byte(src), &doc) != nil {
			return
		}

		vars, tmpl := (*yaml.Node)(nil), &doc
		if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
			m := doc.Content[0]
			for i := 0; i+1 < len(m.Content); i += 2 {
				switch m.Content[i].Value {
				case "vars":
					vars = m.Content[i+1]
				case "t":
					tmpl = m.Content[i+1]
				}
			}
		}

		e, errs := NewEnv(seed, vars, "vars")
		if errs != nil {
			return
		}

		compiled, errs := e.Compile(tmpl, "t")
		if errs != nil {
			for _, err := range errs {
				if err.Error() == "" {
					t.Errorf("empty error message")
				}
			}

			return
		}

		s := e.NewScope(0)
		for range 3 {
			s.NextIteration()
			_ = compiled.Value(s)
		}
	})
}
