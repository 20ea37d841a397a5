package result

import (
	"strings"
	"testing"
)

// cleanResult is buildResult with its connection string redacted, as
// WriteFile leaves it.
func cleanResult(t *testing.T) *Result {
	r := buildResult(t)
	r.Target.URI = "mongodb://localhost:27017/"

	return r
}

// matrixOf wraps trial results in a matrix result as run writes it.
func matrixOf(trials ...*Result) *Result {
	m := &Matrix{Rounds: 1, Variants: []string{"a"}}

	for i, tr := range trials {
		name := tr.Target.Kind
		if i > 0 {
			name += "-2"
		}

		m.Targets = append(m.Targets, MatrixTarget{Name: name, Kind: tr.Target.Kind})
		m.Trials = append(m.Trials, Trial{Target: name, Variant: "a", Round: 1, Result: tr})
	}

	return &Result{SchemaVersion: SchemaVersion, ResultKind: KindMatrix, Status: StatusCompleted, Matrix: m}
}

// TestCheckKinds checks that any target kind shaped as a name is a valid
// single-run kind (the contract does not know the launcher's registry, and
// a newer mongobench may name kinds this one lacks), that a matrix is
// checked with its trials, and that kinds and contents that do not fit are
// reported.
func TestCheckKinds(t *testing.T) {
	for _, k := range []string{"uri", "ferretdb-postgres", "a-kind-of-2030"} {
		r := cleanResult(t)
		r.Target.Kind = k

		if errs := r.Check(); len(errs) != 0 {
			t.Errorf("kind %q: Check() = %v", k, errs)
		}

		if r.Kind() != KindRun {
			t.Errorf("kind %q: Kind() = %q, want %q", k, r.Kind(), KindRun)
		}
	}

	a, b := cleanResult(t), cleanResult(t)
	a.Target.Kind, b.Target.Kind = "embedded", "embedded-memory"

	m := matrixOf(a, b)
	if errs := m.Check(); len(errs) != 0 {
		t.Errorf("matrix: Check() = %v", errs)
	}

	if m.Kind() != KindMatrix {
		t.Errorf("matrix: Kind() = %q", m.Kind())
	}

	if err := m.CheckContents(); err != nil {
		t.Errorf("matrix: CheckContents() = %v", err)
	}

	tests := []struct {
		name   string
		change func(r *Result)
		want   string
	}{
		{"empty target kind", func(r *Result) { r.Target.Kind = "" }, `target kind: empty`},
		{"target kind not a name", func(r *Result) { r.Target.Kind = "Ferret DB" }, `target kind: "Ferret DB" is not a name`},
		{"target kind ending in a hyphen", func(r *Result) { r.Target.Kind = "uri-" }, `target kind: "uri-" is not a name`},
		{"unknown result kind", func(r *Result) { r.ResultKind = "sweep" }, `kind "sweep" is not "run" or "matrix"`},
		{"matrix kind without matrix", func(r *Result) { r.ResultKind = KindMatrix }, `kind "matrix", but the result has no matrix`},
		{"legacy matrix target kind without matrix", func(r *Result) { r.Target.Kind = KindMatrix }, `kind "matrix", but the result has no matrix`},
		{"run kind with a matrix", func(r *Result) { *r = *matrixOf(cleanResult(t)); r.ResultKind = KindRun }, `kind "run", but the result has a matrix`},
		{"matrix naming a target kind", func(r *Result) { *r = *matrixOf(cleanResult(t)); r.Target.Kind = "uri" }, `target kind "uri", but a matrix result names its targets in the matrix`},
		{"trial holding a matrix", func(r *Result) {
			*r = *matrixOf(cleanResult(t))
			r.Matrix.Trials[0].Result.ResultKind = KindMatrix
		}, `matrix trial 0 (uri · a · round 1): a trial cannot hold a matrix`},
		{"trial of an unknown target", func(r *Result) { *r = *matrixOf(cleanResult(t)); r.Matrix.Trials[0].Target = "x" }, `matrix trial 0 (x · a · round 1): target "x" is not among the matrix's targets`},
		{"trial out of rounds", func(r *Result) { *r = *matrixOf(cleanResult(t)); r.Matrix.Trials[0].Round = 2 }, `matrix trial 0 (uri · a · round 2): round 2 is not between 1 and 1`},
		{"tampered trial", func(r *Result) {
			*r = *matrixOf(cleanResult(t))
			r.Matrix.Trials[0].Result.Phases[0].Operations[0].Count++
		}, "matrix trial 0 (uri · a · round 1): phase 0"},
		{"matrix target without a kind", func(r *Result) { *r = *matrixOf(cleanResult(t)); r.Matrix.Targets[0].Kind = "" }, `matrix target 0 (uri): kind: empty`},
	}

	for _, tt := range tests {
		r := cleanResult(t)
		tt.change(r)

		errs := r.Check()
		found := false

		for _, err := range errs {
			found = found || strings.HasPrefix(err.Error(), tt.want)
		}

		if !found {
			t.Errorf("%s: Check() = %v, want one starting %q", tt.name, errs, tt.want)
		}
	}
}

func TestCheckContents(t *testing.T) {
	if err := cleanResult(t).CheckContents(); err != nil {
		t.Errorf("single run: %v", err)
	}

	empty := cleanResult(t)
	empty.Phases = nil

	tests := []struct {
		name string
		r    *Result
		want string
	}{
		{"null phases", empty, `the file has no phases ("phases" is empty or null), so there is nothing to show`},
		{"matrix without trials", &Result{ResultKind: KindMatrix, Matrix: &Matrix{}}, "the matrix has no trials"},
		{"matrix kind, no matrix", &Result{ResultKind: KindMatrix}, `the result's kind is "matrix" but the file has no matrix`},
		{"legacy matrix target kind, no matrix", &Result{Target: Target{Kind: KindMatrix}}, `the result's kind is "matrix" but the file has no matrix`},
		{"trial without phases", matrixOf(empty), "matrix trial 0 (uri · a · round 1) has no phases"},
	}

	for _, tt := range tests {
		if err := tt.r.CheckContents(); err == nil || err.Error() != tt.want {
			t.Errorf("%s: CheckContents() = %v, want %s", tt.name, err, tt.want)
		}
	}
}
