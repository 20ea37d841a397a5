package cli

import (
	"fmt"
	"strings"

	"github.com/mongobench/mongobench/internal/base/tempdir"
	"github.com/mongobench/mongobench/internal/base/units"
)

// sweepLeftovers removes the temporary directories of mongobench runs that
// were killed (SIGKILL leaves them behind: a few megabytes for the embedded
// server, tens for PostgreSQL) and says what it did; what it cannot remove,
// or cannot tell is unused, it lists with the command that removes it.
// Directories of runs still going are left alone.
func sweepLeftovers(st *State) {
	s, err := tempdir.Sweep("")
	if err != nil {
		return
	}

	if n := len(s.Removed); n > 0 {
		fmt.Fprintf(st.Stderr, "Removed %s left by killed mongobench runs (%s): %s\n",
			dirCount(n), units.Bytes(tempdir.Total(s.Removed)), leftoverPaths(s.Removed))
	}

	if n := len(s.Failed); n > 0 {
		fmt.Fprintf(st.Stderr, "Warning: could not remove %s left by killed mongobench runs (%s): %v\nRemove them with: %s\n",
			dirCount(n), units.Bytes(tempdir.Total(s.Failed)), s.Failed[0].Err, tempdir.RemoveCommand(s.Failed))
	}

	if n := len(s.Unmarked); n > 0 {
		fmt.Fprintf(st.Stderr, "Note: found %s named like mongobench's without an owner mark (%s), left by an older "+
			"mongobench that may still be running; if none is, remove with: %s\n",
			dirCount(n), units.Bytes(tempdir.Total(s.Unmarked)), tempdir.RemoveCommand(s.Unmarked))
	}
}

// dirCount is "1 temporary directory" or "3 temporary directories".
func dirCount(n int) string {
	if n == 1 {
		return "1 temporary directory"
	}

	return fmt.Sprintf("%d temporary directories", n)
}

// leftoverPaths lists the paths of leftovers.
func leftoverPaths(ls []tempdir.Leftover) string {
	paths := make([]string, len(ls))
	for i, l := range ls {
		paths[i] = l.Path
	}

	return strings.Join(paths, ", ")
}
