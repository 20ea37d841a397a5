package targets

import (
	"fmt"
	"regexp"
	"strings"
)

// envNameRe is the form of an environment variable name in ${NAME}.
var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// EnvError reports a ${NAME} reference in a connection string that cannot be
// expanded. Its message names the variable but never holds a value.
type EnvError struct {
	// Name is the variable's name; it is empty for a malformed reference,
	// whose text is not repeated because it may be part of a password.
	Name string

	// Malformed is true when the reference is not of the form ${NAME}.
	Malformed bool
}

// Error implements error.
func (e *EnvError) Error() string {
	if e.Malformed {
		return `malformed environment reference: "${" must be followed by a name made of letters, digits and '_', and "}"`
	}

	return fmt.Sprintf("environment variable %s is not set (the connection string refers to ${%s})", e.Name, e.Name)
}

// ExpandEnv replaces every ${NAME} in the connection string s by the value
// getenv returns for NAME, so that passwords can stay out of workload files
// and command lines: uri: mongodb://bench:${BENCH_PASSWORD}@db:27017/. Only
// the braced form is expanded; a '$' not followed by '{' is kept, so
// passwords with a '$' need no escaping. Values are inserted as they are:
// a password with '@', ':', '/' or '%' must be percent-encoded in the
// variable (%40 for '@'), as anywhere in a connection string.
//
// A variable that is unset or empty is an *EnvError naming it, as is a
// reference that is not of the form ${NAME}; an empty password is never
// what the user meant.
func ExpandEnv(s string, getenv func(string) string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}

	var b strings.Builder

	rest := s

	for {
		i := strings.Index(rest, "${")
		if i < 0 {
			b.WriteString(rest)

			return b.String(), nil
		}

		b.WriteString(rest[:i])

		end := strings.IndexByte(rest[i:], '}')
		if end < 0 {
			return "", &EnvError{Malformed: true}
		}

		name := rest[i+2 : i+end]
		if !envNameRe.MatchString(name) {
			return "", &EnvError{Malformed: true}
		}

		value := getenv(name)
		if value == "" {
			return "", &EnvError{Name: name}
		}

		b.WriteString(value)
		rest = rest[i+end+1:]
	}
}
