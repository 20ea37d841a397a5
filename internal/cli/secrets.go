package cli

import (
	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// uriEnvVar is the environment variable read when --uri is not given, so
// that a connection string with a password need not appear on the command
// line (where ps and shell history would see it).
const uriEnvVar = "MONGOBENCH_URI"

// resolveURIFlag gives --uri its final value: the flag if given, else
// MONGOBENCH_URI, with ${NAME} references expanded (see target.ExpandEnv).
// Only the expanded value is used to connect; what is printed and saved is
// always redacted.
func resolveURIFlag(st *State, f *runFlags) error {
	from := "--uri"

	if f.uri == "" {
		f.uri, from = st.Getenv(uriEnvVar), uriEnvVar
	}

	uri, err := targets.ExpandEnv(f.uri, st.Getenv)
	if err != nil {
		return badInput("%s: %v", from, err)
	}

	f.uri = uri

	return nil
}

// expandTargetURIs expands the ${NAME} references in the connection strings
// of the run's targets, as listed by targetSpecs: the workload's targets
// first, then the flags --target values, then --uri (already expanded by
// resolveURIFlag). The workload keeps its text as written: the expanded
// strings live only in these specs, which are never saved. An error names
// the file, line and field, or the flag.
func expandTargetURIs(st *State, path string, spec *workload.Spec, targetList []targets.TargetSpec, flags int) error {
	for i := range targetList {
		if i >= len(spec.Targets)+flags || targetList[i].URI == "" {
			continue
		}

		uri, err := targets.ExpandEnv(targetList[i].URI, st.Getenv)
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
