package cli

import (
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
