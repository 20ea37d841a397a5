package cli

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mongobench/mongobench/internal/spec/workload"
)

// flagError is the message of a flag cobra could not parse. An unknown
// long flag close to a known one (a typo such as --durration) names it,
// as cobra does for commands.
func flagError(c *cobra.Command, err error) error {
	msg := err.Error()

	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		msg = "unknown flag --" + name
		if s := closestFlag(c, name); s != "" {
			msg += "; did you mean --" + s + "?"
		}
	}

	return badInput("%s\nRun '%s --help' for usage.", msg, c.CommandPath())
}

// closestFlag is the command's flag nearest to name, at most two edits
// away, or "" when none is.
func closestFlag(c *cobra.Command, name string) string {
	best, bestDist := "", 3

	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}

		if d := workload.Levenshtein(name, f.Name); d < bestDist {
			best, bestDist = f.Name, d
		}
	})

	return best
}

// oneWorkload is run's argument check: one workload file, and a message
// that says what is missing instead of counting arguments.
func oneWorkload(_ *cobra.Command, args []string) error {
	switch len(args) {
	case 1:
		return nil
	case 0:
		return badInput("run needs a workload file: mongobench run WORKLOAD.yaml")
	default:
		return badInput("run takes one workload file, got %d: %s (give each run its own command)", len(args), strings.Join(args, " "))
	}
}

// checkInputExists refuses an input file that is not there with one line
// saying so, rather than as an invalid file.
func checkInputExists(path string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return badInput("%s: no such file", path)
	}

	return nil
}
