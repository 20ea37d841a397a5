package workload

import (
	"errors"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/spec/targetspec"
)

// MongodBinaryFlag and MongodBinaryEnv are where the mongod program of
// mongod targets comes from, named by the error that rejects a workload's
// mongod.binary.
const (
	MongodBinaryFlag = "--mongod-binary"
	MongodBinaryEnv  = "MONGOBENCH_MONGOD"
)

// targets checks what the workload file itself rules on, positioning each
// problem at the field it concerns: a workload file is data, so it may not
// name a program to run (mongod.binary), and each target's label must be
// unique. What each kind accepts is the registry's to say; see
// CheckTargets.
func (v *validator) targets() {
	labels := map[string]bool{}

	for i, t := range v.s.Targets {
		p := yamlpos.Index("targets", i)

		if t.Mongod != nil && t.Mongod.Binary != "" {
			v.at(yamlpos.Field(yamlpos.Field(p, "mongod"), "binary"),
				"a workload file cannot name a program to run; give the mongod binary on the command line with %s (or the environment variable %s), or put mongod on PATH",
				MongodBinaryFlag, MongodBinaryEnv)
		}

		label := t.Target().Label()
		if labels[label] {
			v.at(yamlpos.Field(p, "name"), "target %q is named twice; give each a name", label)
		}

		labels[label] = true
	}
}

// CheckTargets validates the workload's targets with validate, the registry
// of target kinds (targets.Validate), as it validates --target flags, and
// positions each problem at the field it concerns (file, line and field),
// so that a bad target is reported before anything runs. The registry
// lives above the spec layer, next to the launcher, so the caller that can
// see it passes it in, as it runs CheckBudget.
func (s *Spec) CheckTargets(validate targetspec.Validator) []error {
	v := &validator{s: s}

	for i, t := range s.Targets {
		err := validate(t.Target())
		if err == nil {
			continue
		}

		field := "kind"

		var fe *targetspec.FieldError
		if errors.As(err, &fe) {
			field = fe.Field
		}

		v.at(yamlpos.Field(yamlpos.Index("targets", i), field), "%s", err)
	}

	yamlpos.Sort(v.errs)

	return v.errs
}
