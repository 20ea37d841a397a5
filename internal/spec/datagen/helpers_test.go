package datagen

import (
	"testing"

	"go.yaml.in/yaml/v4"
)

// parseYAML returns the document node of src.
func parseYAML(tb testing.TB, src string) *yaml.Node {
	tb.Helper()

	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		tb.Fatalf("parsing YAML: %v", err)
	}

	return &n
}

// newEnv returns an Env with the variables of YAML mapping vars ("" for none).
func newEnv(tb testing.TB, seed int64, vars string) *Env {
	tb.Helper()

	var n *yaml.Node
	if vars != "" {
		n = parseYAML(tb, vars)
	}

	e, errs := NewEnv(seed, n, "vars")
	if errs != nil {
		tb.Fatalf("NewEnv: %v", errs)
	}

	return e
}

// compileYAML compiles template src in e.
func compileYAML(tb testing.TB, e *Env, src string) *Template {
	tb.Helper()

	t, errs := e.Compile(parseYAML(tb, src), "t")
	if errs != nil {
		tb.Fatalf("Compile: %v", errs)
	}

	return t
}

// errStrings formats errs for comparison.
func errStrings(errs []error) []string {
	s := make([]string, len(errs))
	for i, err := range errs {
		s[i] = err.Error()
	}

	return s
}
