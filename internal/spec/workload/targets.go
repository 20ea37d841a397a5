package workload

import (
	"errors"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/targets"
)

// MongodBinaryFlag and MongodBinaryEnv are where the mongod program of
// mongod targets comes from, named by the error that rejects a workload's
// mongod.binary.
const (
	MongodBinaryFlag = "--mongod-binary"
	MongodBinaryEnv  = "MONGOBENCH_MONGOD"
)

// Target returns the target as package target describes it, for
// validation and launching. A workload names no programs, so the mongod
// binary is never taken from it (see targets).
func (t TargetSpec) Target() targets.TargetSpec {
	out := targets.TargetSpec{Name: t.Name, Kind: t.Kind, URI: t.URI, Settings: t.Settings}

	if m := t.Mongod; m != nil {
		out.Mongod = &targets.MongodSpec{
			StorageEngine: m.StorageEngine, Journal: m.Journal,
			CacheSizeGB: m.CacheSizeGB, ReplicaSet: m.ReplicaSet, Args: m.Args,
		}
	}

	return out
}

// targets validates the workload's targets as package target's registry of
// kinds does for --target flags, positioning each problem at the field it
// concerns, so that a bad target is reported before anything runs. A
// workload file is data: it may not name a program to run (mongod.binary).
func (v *validator) targets() {
	labels := map[string]bool{}

	for i, t := range v.s.Targets {
		p := yamlpos.Index("targets", i)

		if t.Mongod != nil && t.Mongod.Binary != "" {
			v.at(yamlpos.Field(yamlpos.Field(p, "mongod"), "binary"),
				"a workload file cannot name a program to run; give the mongod binary on the command line with %s (or the environment variable %s), or put mongod on PATH",
				MongodBinaryFlag, MongodBinaryEnv)
		}

		spec := t.Target()

		if err := spec.Validate(); err != nil {
			field := "kind"

			var fe *targets.FieldError
			if errors.As(err, &fe) {
				field = fe.Field
			}

			v.at(yamlpos.Field(p, field), "%s", err)
		}

		label := spec.Label()
		if labels[label] {
			v.at(yamlpos.Field(p, "name"), "target %q is named twice; give each a name", label)
		}

		labels[label] = true
	}
}
