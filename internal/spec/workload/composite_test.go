package workload

import (
	"slices"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// compositeBase is a valid workload with a composite read-modify-write
// beside a plain insert, in the shape of YCSB workload F.
const compositeBase = `name: t
database: bench
vars:
  key: {^int: {min: 1, max: 100}}
collections:
  - name: c
run:
  duration: 1s
  timeout: 3s
operations:
  - name: ins
    op: insertOne
    collection: c
    document: {a: 1}
  - name: rmw
    weight: 50
    steps:
      - {name: read, op: findOne, collection: c, filter: {_id: {^var: key}}}
      - {name: update, op: updateOne, collection: c, filter: {_id: {^var: key}}, update: {$set: {a: 2}}, timeout: 1s}
`

func TestCompositeParses(t *testing.T) {
	t.Parallel()

	s, errs := Parse("w.yaml", []byte(compositeBase))
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}

	rmw := s.Operations[1]
	if !rmw.Composite() || s.Operations[0].Composite() {
		t.Fatalf("Composite() = %v, %v; want false, true", s.Operations[0].Composite(), rmw.Composite())
	}

	if len(rmw.Steps) != 2 || rmw.Steps[0].Op != opkind.FindOne || rmw.Steps[1].Op != opkind.UpdateOne || rmw.WeightOf() != 50 {
		t.Fatalf("steps = %+v weight %v", rmw.Steps, rmw.WeightOf())
	}

	if got := rmw.Steps[0].Timeout.D().String(); got != "3s" {
		t.Errorf("step without timeout got %s, want the run's 3s", got)
	}

	if got := rmw.Steps[1].Timeout.D().String(); got != "1s" {
		t.Errorf("step timeout = %s, want its own 1s", got)
	}

	want := []string{"ins", "rmw", "rmw/read", "rmw/update"}
	if got := s.FigureNames(); !slices.Equal(got, want) {
		t.Errorf("FigureNames() = %v, want %v", got, want)
	}
}

func TestCompositeValidation(t *testing.T) {
	t.Parallel()

	for name, tc := range map[string]struct {
		yaml string
		want []string
	}{
		"composite sets an op field": {
			yaml: strings.Replace(compositeBase, "    weight: 50\n", "    weight: 50\n    collection: c\n", 1),
			want: []string{"w.yaml:17:17: operations[1].collection: a composite operation sets only name, weight, steps; set collection on its steps"},
		},
		"composite sets op": {
			yaml: strings.Replace(compositeBase, "    weight: 50\n", "    weight: 50\n    op: findOne\n", 1),
			want: []string{"w.yaml:17:9: operations[1].op: a composite operation sets only name, weight, steps; set op on its steps"},
		},
		"empty steps": {
			yaml: strings.Split(compositeBase, "    steps:\n")[0] + "    steps: []\n",
			want: []string{"operations[1].steps: a composite operation needs at least one step"},
		},
		"step weight": {
			yaml: strings.Replace(compositeBase, "{name: read,", "{name: read, weight: 2,", 1),
			want: []string{"w.yaml:18:30: operations[1].steps[0].weight: a step runs every time its composite does; set weight on the composite"},
		},
		"duplicate step": {
			yaml: strings.Replace(compositeBase, "{name: update,", "{name: read,", 1),
			want: []string{`w.yaml:19:16: operations[1].steps[1].name: operation "read" is defined twice`},
		},
		"step without name": {
			yaml: strings.Replace(compositeBase, "{name: read, ", "{", 1),
			want: []string{"operations[1].steps[0].name: is required"},
		},
		"step with unknown kind": {
			yaml: strings.Replace(compositeBase, "op: findOne", "op: find_one", 1),
			want: []string{`w.yaml:18:26: operations[1].steps[0].op: unknown operation "find_one"`},
		},
		"step field not used by its kind": {
			yaml: strings.Replace(compositeBase, "op: findOne,", "op: findOne, upsert: true,", 1),
			want: []string{"operations[1].steps[0].upsert: is not used by findOne"},
		},
		"step on an undeclared collection": {
			yaml: strings.Replace(compositeBase, "collection: c, filter: {_id: {^var: key}}}", "collection: nope, filter: {_id: {^var: key}}}", 1),
			want: []string{`operations[1].steps[0].collection: collection "nope" is not declared in collections`},
		},
		"step document not a document": {
			yaml: strings.Replace(compositeBase, "filter: {_id: {^var: key}}, update", "filter: [1], update", 1),
			want: []string{"operations[1].steps[1].filter: must be a mapping"},
		},
		"nested steps": {
			yaml: compositeBase + "      - {name: inner, steps: [{name: x, op: drop, collection: c}]}\n",
			want: []string{"operations[1].steps[2].steps: steps cannot be nested"},
		},
		"reserved name": {
			yaml: strings.Replace(compositeBase, "name: ins\n", "name: iteration\n", 1),
			want: []string{`operations[0].name: "iteration" is reserved for a sequence's whole iteration`},
		},
		"composite background job": {
			yaml: strings.Replace(compositeBase, "  timeout: 3s\n", "  timeout: 3s\n  operations: [ins]\n  background: [{operation: rmw, rate: 10/s}]\n", 1),
			want: []string{`run.background[0].operation: operation "rmw" is composite; a background job runs a single operation`},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkMessages(t, tc.yaml, tc.want)
		})
	}
}

func TestCompareOn(t *testing.T) {
	t.Parallel()

	// A sequence runs each of its operations once per pass: a weight there
	// is refused, so the composite's is taken out.
	seq := strings.Replace(strings.Replace(compositeBase, "    weight: 50\n", "", 1), "  timeout: 3s\n", "  timeout: 3s\n  sequence: [ins, rmw]\n", 1)

	for name, tc := range map[string]struct {
		yaml string
		want []string // nil: valid
	}{
		"an operation": {yaml: strings.Replace(compositeBase, "  timeout: 3s\n", "  timeout: 3s\n  compare_on: ins\n", 1)},
		"a step":       {yaml: strings.Replace(compositeBase, "  timeout: 3s\n", "  timeout: 3s\n  compare_on: rmw/update\n", 1)},
		"iteration":    {yaml: strings.Replace(seq, "  timeout: 3s\n", "  timeout: 3s\n  compare_on: iteration\n", 1)},
		"iteration without a sequence": {
			yaml: strings.Replace(compositeBase, "  timeout: 3s\n", "  timeout: 3s\n  compare_on: iteration\n", 1),
			want: []string{`w.yaml:10:15: run.compare_on: "iteration" needs a phase that runs a sequence`},
		},
		"unknown name": {
			yaml: strings.Replace(compositeBase, "  timeout: 3s\n", "  timeout: 3s\n  compare_on: rwm\n", 1),
			want: []string{`w.yaml:10:15: run.compare_on: "rwm" is neither an operation nor "iteration" (one of ins, rmw, rmw/read, rmw/update)`},
		},
		"empty": {
			yaml: strings.Replace(compositeBase, "  timeout: 3s\n", "  timeout: 3s\n  compare_on: \"\"\n", 1),
			want: []string{"run.compare_on: must not be empty"},
		},
		"a metric and a cost": {
			yaml: strings.Replace(compositeBase, "  timeout: 3s\n", "  timeout: 3s\n  compare_on: ins\n  compare_by: p99.9\n  compare_cost: true\n", 1),
		},
		"per document": {
			yaml: strings.Replace(compositeBase, "  timeout: 3s\n", "  timeout: 3s\n  compare_on: ins\n  compare_by: per_doc\n", 1),
		},
		"operations of a mix ranked": {
			yaml: strings.Replace(compositeBase, "  timeout: 3s\n", "  timeout: 3s\n  compare_on: ins\n  compare_operations: true\n", 1),
		},
		"operations ranked where a phase runs one": {
			yaml: strings.Replace(compositeBase, "  timeout: 3s\n", "  timeout: 3s\n  compare_operations: true\nphases:\n  - {name: only, operations: [ins]}\n", 1),
			want: []string{`w.yaml:10:23: run.compare_operations: no measured phase runs two operations or more to rank against each other`},
		},
		"unknown metric": {
			yaml: strings.Replace(compositeBase, "  timeout: 3s\n", "  timeout: 3s\n  compare_by: p50ms\n", 1),
			want: []string{`run.compare_by: bad percentile "p50ms"`, `(or "per_doc" for the latency per returned document, "decode" for the client's decode time per document)`},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			if tc.want == nil {
				s, errs := Parse("w.yaml", []byte(tc.yaml))
				if len(errs) > 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}

				if s.Run.CompareOn == "" {
					t.Fatal("compare_on not kept")
				}

				return
			}

			checkMessages(t, tc.yaml, tc.want)
		})
	}
}

// checkMessages parses text and requires every wanted message among the
// errors, each as a substring of one error.
func checkMessages(t *testing.T, text string, want []string) {
	t.Helper()

	_, errs := Parse("w.yaml", []byte(text))
	if len(errs) == 0 {
		t.Fatalf("no error, want %q", want)
	}

	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}

	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("missing %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// A variant may turn an operation into a composite (or back): the patched
// item is replaced, since its fields belong to the other kind, while a patch
// that names neither op nor steps merges into the composite.
func TestCompositeVariants(t *testing.T) {
	t.Parallel()

	text := compositeBase + `variants:
  - name: split
    operations:
      - name: ins
        steps:
          - {name: one, op: insertOne, collection: c, document: {a: 1}}
          - {name: two, op: insertOne, collection: c, document: {a: 2}}
  - name: heavier
    operations:
      - {name: rmw, weight: 80}
  - name: flat
    operations:
      - {name: rmw, op: findOne, collection: c}
`

	s, errs := Parse("w.yaml", []byte(text))
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}

	vs, errs := s.VariantSpecs()
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	byName := map[string]*Spec{}
	for _, v := range vs {
		byName[v.Variant] = v
	}

	if ins := byName["split"].Operations[0]; !ins.Composite() || ins.Op != "" || len(ins.Steps) != 2 {
		t.Errorf("split: ins = %+v, want a composite of two steps", ins)
	}

	if rmw := byName["heavier"].Operations[1]; !rmw.Composite() || rmw.WeightOf() != 80 || len(rmw.Steps) != 2 {
		t.Errorf("heavier: rmw weight %v steps %d, want 80 and its 2 steps", rmw.WeightOf(), len(rmw.Steps))
	}

	if rmw := byName["flat"].Operations[1]; rmw.Composite() || rmw.Op != opkind.FindOne {
		t.Errorf("flat: rmw = %+v, want a plain findOne", rmw)
	}
}
