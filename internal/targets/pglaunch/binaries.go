package pglaunch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// debianLibDir is where Debian's postgresql-NN packages put each major
// version's server binaries (/usr/lib/postgresql/15/bin/postgres, ...); they
// are not on PATH there, only the client wrappers are.
const debianLibDir = "/usr/lib/postgresql"

// installHint is the advice every "not installed" error ends with.
const installHint = "install PostgreSQL's server binaries, e.g. `apt-get install postgresql`"

// systemUser is the account PostgreSQL runs as when mongobench runs as root,
// because the server refuses to run with root's privileges. Debian's
// postgresql-common package creates it.
const systemUser = "postgres"

// binaries are the programs one PostgreSQL installation provides.
type binaries struct {
	dir      string // directory holding them, e.g. /usr/lib/postgresql/15/bin
	initdb   string
	postgres string
	psql     string
}

// Available reports whether Start can work on this machine: it returns nil
// when PostgreSQL's server binaries (initdb, postgres and psql) are
// installed and, when the process runs as root, the postgres system user to
// run them as exists; otherwise the error says what is missing and how to
// install it. Tests call it to skip, and the CLI to explain a missing
// prerequisite before it starts anything.
func Available() error {
	if err := platformCheck(); err != nil {
		return err
	}

	if _, err := findBinaries(debianLibDir); err != nil {
		return err
	}

	if os.Geteuid() == 0 {
		if _, err := lookupSystemUser(); err != nil {
			return err
		}
	}

	return nil
}

// findBinaries returns the newest installation under libDir (one directory
// per major version, each with a bin/ subdirectory), or, when there is none,
// the installation whose initdb is first on PATH.
func findBinaries(libDir string) (binaries, error) {
	dirs, _ := filepath.Glob(filepath.Join(libDir, "*", "bin"))

	type candidate struct {
		version []int
		bin     binaries
	}

	var found []candidate

	for _, dir := range dirs {
		b, ok := binariesIn(dir)
		if !ok {
			continue
		}

		v, ok := parseVersion(filepath.Base(filepath.Dir(dir)))
		if !ok {
			continue
		}

		found = append(found, candidate{version: v, bin: b})
	}

	if len(found) > 0 {
		newest := slices.MaxFunc(found, func(a, b candidate) int { return slices.Compare(a.version, b.version) })

		return newest.bin, nil
	}

	initdb, err := exec.LookPath("initdb")
	if err != nil {
		return binaries{}, fmt.Errorf("PostgreSQL is not installed: no initdb in %s/*/bin or on PATH; %s", libDir, installHint)
	}

	// Follow symbolic links such as /usr/local/bin/initdb ->
	// /usr/lib/postgresql/15/bin/initdb so that postgres and psql come
	// from the same installation.
	if resolved, err := filepath.EvalSymlinks(initdb); err == nil {
		initdb = resolved
	}

	b := binaries{dir: filepath.Dir(initdb), initdb: initdb}

	for _, p := range []struct {
		name string
		dst  *string
	}{{"postgres", &b.postgres}, {"psql", &b.psql}} {
		if path := filepath.Join(b.dir, p.name); isExecutable(path) {
			*p.dst = path
			continue
		}

		path, err := exec.LookPath(p.name)
		if err != nil {
			return binaries{}, fmt.Errorf("PostgreSQL is incompletely installed: found %s but no %s; %s", initdb, p.name, installHint)
		}

		*p.dst = path
	}

	return b, nil
}

// binariesIn returns the installation in dir if it has all three programs.
func binariesIn(dir string) (binaries, bool) {
	b := binaries{
		dir:      dir,
		initdb:   filepath.Join(dir, "initdb"),
		postgres: filepath.Join(dir, "postgres"),
		psql:     filepath.Join(dir, "psql"),
	}

	return b, isExecutable(b.initdb) && isExecutable(b.postgres) && isExecutable(b.psql)
}

// parseVersion parses a major-version directory name such as "15" or "9.6"
// into numbers that compare in version order.
func parseVersion(s string) ([]int, bool) {
	var v []int

	for part := range strings.SplitSeq(s, ".") {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return nil, false
		}

		v = append(v, n)
	}

	return v, true
}

// isExecutable reports whether path is a regular file someone may execute.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)

	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
