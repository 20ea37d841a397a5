package plan

import (
	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// targetSpecs returns the workload's targets followed by the --target
// values, then --uri when there are others; none means the default
// (embedded, or --uri). Each is named, validated and given the request's
// mongod program.
func targetSpecs(spec *workload.Spec, r *Request) ([]targets.TargetSpec, error) {
	var out []targets.TargetSpec

	for _, t := range spec.Targets {
		out = append(out, t.Target())
	}

	for _, s := range r.Targets {
		ts, err := targets.ParseTargetFlag(s)
		if err != nil {
			return nil, badInput("--target %s", redact.Error(err, s))
		}

		out = append(out, ts)
	}

	if r.URI != "" && len(out) > 0 {
		out = append(out, targets.TargetSpec{Name: targets.KindURI, Kind: targets.KindURI, URI: r.URI})
	}

	seen := map[string]bool{}

	for i := range out {
		if out[i].Name == "" {
			out[i].Name = out[i].Label()
		}

		if err := targets.Validate(out[i]); err != nil {
			return nil, badInput("target %q: %s", out[i].Name, redact.Error(err, out[i].URI))
		}

		if seen[out[i].Name] {
			return nil, badInput("two targets are named %q; name them (name=... in --target)", out[i].Name)
		}

		seen[out[i].Name] = true
	}

	useMongodBinary(out, r.MongodBinary)

	return out, nil
}

// useMongodBinary gives the mongod targets that name no binary the one from
// --mongod-binary or MONGOBENCH_MONGOD (binary, empty for mongod from
// PATH). Workload files cannot name a program, so the binary of a mongod
// target comes from the command line (this, or --target
// mongod:binary=...), the environment or PATH. It runs after the targets
// are named, so that labels do not depend on where mongod was found.
func useMongodBinary(targetList []targets.TargetSpec, binary string) {
	if binary == "" {
		return
	}

	for i := range targetList {
		t := &targetList[i]
		if t.Kind != targets.KindMongod {
			continue
		}

		if t.Mongod == nil {
			t.Mongod = &targets.MongodSpec{}
		}

		if t.Mongod.Binary == "" {
			m := *t.Mongod
			m.Binary = binary
			t.Mongod = &m
		}
	}
}

// expandTargetURIs expands the ${NAME} references in the connection
// strings of the run's targets, as listed by targetSpecs: the workload's
// targets first, then the flags' --target values (flags of them), then
// --uri (expanded by the caller already). The workload keeps its text as
// written: the expanded strings live only in these specs, which are never
// saved. An error names the file, line and field, or the flag.
func expandTargetURIs(path string, spec *workload.Spec, targetList []targets.TargetSpec, flags int, getenv func(string) string) error {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}

	for i := range targetList {
		if i >= len(spec.Targets)+flags || targetList[i].URI == "" {
			continue
		}

		uri, err := targets.ExpandEnv(targetList[i].URI, getenv)
		if err == nil {
			targetList[i].URI = uri

			continue
		}

		if i >= len(spec.Targets) {
			return badInput("--target %q: %v", targetList[i].Name, err)
		}

		field := yamlpos.Field(yamlpos.Index("targets", i), "uri")
		pe := yamlpos.At(spec.Node(field), field, "%v", err)
		pe.File = path

		return badInput("%s", pe)
	}

	return nil
}
