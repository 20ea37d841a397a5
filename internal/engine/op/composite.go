package op

import (
	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// compileOne compiles operation i of the spec and, when it is composite,
// each of its steps, so that validation checks a step's templates as it
// checks any operation's.
func compileOne(spec *workload.Spec, env *datagen.Env, i int) (*Operation, []error) {
	p := yamlpos.Index("operations", i)
	o, errs := compileOperation(spec, env, &spec.Operations[i], p)

	for j := range o.Spec.Steps {
		st, e := compileOperation(spec, env, &o.Spec.Steps[j], yamlpos.Index(yamlpos.Field(p, "steps"), j))
		errs = append(errs, e...)
		o.Steps = append(o.Steps, st)
	}

	return o, errs
}

// Composite reports whether the operation is a group of steps.
func (o *Operation) Composite() bool { return len(o.Steps) > 0 }
