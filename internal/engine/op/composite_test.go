package op

import (
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

const compositeSpec = `name: t
database: bench
vars:
  key: {^int: {min: 1, max: 100}}
collections:
  - name: c
run:
  duration: 1s
operations:
  - name: rmw
    steps:
      - {name: read, op: findOne, collection: c, filter: {_id: {^var: key}}}
      - {name: update, op: updateOne, collection: c, filter: {_id: {^var: KEY}}, update: {$set: {a: 1}}}
`

func compileText(t *testing.T, text string) ([]*Operation, []error) {
	t.Helper()

	spec, errs := workload.Parse("w.yaml", []byte(text))
	if len(errs) > 0 {
		t.Fatalf("parse: %v", errs)
	}

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		t.Fatalf("env: %v", errs)
	}

	return Compile(spec, env)
}

// A step's templates are compiled like any operation's, so validate reports
// a step's mistakes at the step's position.
func TestCompositeStepsCompiled(t *testing.T) {
	t.Parallel()

	_, errs := compileText(t, compositeSpec)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "w.yaml:13:") ||
		!strings.Contains(errs[0].Error(), "operations[0].steps[1].filter") {
		t.Fatalf("errors = %v, want one at operations[0].steps[1].filter on line 13", errs)
	}

	ops, errs := compileText(t, strings.Replace(compositeSpec, "KEY", "key", 1))
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}

	if len(ops) != 1 || !ops[0].Composite() || len(ops[0].Steps) != 2 ||
		ops[0].Steps[0].Name() != "read" || ops[0].Steps[1].Spec.Op != opkind.UpdateOne {
		t.Fatalf("compiled %+v", ops)
	}
}
