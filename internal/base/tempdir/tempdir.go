// Package tempdir creates mongobench's temporary directories (the embedded
// server's SQLite files, a launched PostgreSQL or mongod) marked with the
// process that owns them, and finds and removes those whose owner is gone.
//
// A run removes its directories on every exit it sees; only a SIGKILL (or a
// power cut) leaves them behind, up to tens of megabytes each. The mark
// lets the next run tell such leftovers from the directories of runs still
// going, so that it can remove them safely.
package tempdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Prefixes are the names mongobench's temporary directories start with: one
// per kind of server it launches, and the temporary run logs of trials that
// write no results file of their own (a matrix's).
var Prefixes = []string{"mongobench-ferretdb-", "mongobench-postgres-", "mongobench-mongod-", "mongobench-runlog-"}

// MarkFile is the name of the owner mark inside each directory. It does not
// end in .sqlite, so the embedded server never takes it for a database.
const MarkFile = ".mongobench-owner"

// Owner identifies a process across PID reuse: its PID and, where the
// system tells, its start time.
type Owner struct {
	// PID is the process ID.
	PID int

	// Start is the process's start time in the system's own terms (clock
	// ticks after boot on Linux), or "" where unknown.
	Start string

	// Namespace names the PID namespace the PID belongs to (Linux), or ""
	// where unknown. A directory shared between containers may be owned
	// by a process whose PID means nothing here.
	Namespace string
}

// Self returns the current process as an Owner.
func Self() Owner {
	pid := os.Getpid()

	return Owner{PID: pid, Start: startTime(pid), Namespace: pidNamespace()}
}

// Alive reports whether the owner is still running: a process with its PID
// exists and, when both start times are known, started when the owner did.
// An owner of another PID namespace counts as alive, since its PID cannot
// be checked from here.
func (o Owner) Alive() bool {
	if ns := pidNamespace(); o.Namespace != "" && ns != "" && o.Namespace != ns {
		return true
	}

	return alive(o)
}

// Create makes a new directory in parent (os.TempDir() when empty) whose
// name is prefix followed by a random string, as os.MkdirTemp does, marks it
// as owned by this process and returns its absolute path. prefix should be
// one of Prefixes, so that Sweep finds the directory.
func Create(parent, prefix string) (string, error) {
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return "", err
	}

	abs, err := filepath.Abs(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}

	self := Self()
	mark := fmt.Sprintf("pid %d\nstart %s\nnamespace %s\n", self.PID, self.Start, self.Namespace)

	if err := os.WriteFile(filepath.Join(abs, MarkFile), []byte(mark), 0o644); err != nil { //nolint:gosec // the mark holds no secret, and a launched server's account reads it
		_ = os.RemoveAll(abs)
		return "", fmt.Errorf("mark %s with its owner: %w", abs, err)
	}

	return abs, nil
}

// readMark returns a directory's owner, or false when it carries no
// readable mark.
func readMark(dir string) (Owner, bool) {
	b, err := os.ReadFile(filepath.Join(dir, MarkFile))
	if err != nil {
		return Owner{}, false
	}

	var o Owner

	for line := range strings.Lines(string(b)) {
		key, value, _ := strings.Cut(strings.TrimSpace(line), " ")

		switch key {
		case "pid":
			o.PID, err = strconv.Atoi(value)
			if err != nil || o.PID <= 0 {
				return Owner{}, false
			}
		case "start":
			o.Start = value
		case "namespace":
			o.Namespace = value
		}
	}

	return o, o.PID > 0
}

// Leftover is a mongobench temporary directory whose owner is gone, or
// that carries no owner mark.
type Leftover struct {
	// Path is the directory's absolute path.
	Path string

	// Bytes is the size of its files.
	Bytes int64

	// Owner is the process that created it; nil when it has no mark (a
	// mongobench older than the mark, or a process killed between creating
	// the directory and marking it).
	Owner *Owner

	// Err is why Sweep could not remove it.
	Err error
}

// Swept is what Sweep found.
type Swept struct {
	// Removed are the directories of dead owners that Sweep removed.
	Removed []Leftover

	// Failed are the directories of dead owners that Sweep could not
	// remove, with the reason.
	Failed []Leftover

	// Unmarked are directories named like mongobench's that carry no owner
	// mark: Sweep cannot tell whether a run still uses them, so it leaves
	// them for the user.
	Unmarked []Leftover
}

// Sweep looks in parent (os.TempDir() when empty) for mongobench's
// temporary directories and removes those whose owner process is gone.
// Directories of live owners, including this process, are left alone.
func Sweep(parent string) (Swept, error) {
	if parent == "" {
		parent = os.TempDir()
	}

	entries, err := os.ReadDir(parent)
	if err != nil {
		return Swept{}, err
	}

	var s Swept

	for _, e := range entries {
		if !e.IsDir() || !slices.ContainsFunc(Prefixes, func(p string) bool { return strings.HasPrefix(e.Name(), p) }) {
			continue
		}

		dir := filepath.Join(parent, e.Name())
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}

		owner, marked := readMark(dir)

		switch {
		case !marked:
			s.Unmarked = append(s.Unmarked, Leftover{Path: dir, Bytes: size(dir)})
		case owner.Alive():
		default:
			l := Leftover{Path: dir, Bytes: size(dir), Owner: &owner}

			if l.Err = os.RemoveAll(dir); l.Err != nil {
				s.Failed = append(s.Failed, l)
			} else {
				s.Removed = append(s.Removed, l)
			}
		}
	}

	return s, nil
}

// size adds up the sizes of the files under dir, ignoring what it cannot
// read.
func size(dir string) int64 {
	var n int64

	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return nil
			}

			return err
		}

		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}

		return nil
	})

	return n
}

// Total adds up the sizes of leftovers.
func Total(ls []Leftover) int64 {
	var n int64
	for _, l := range ls {
		n += l.Bytes
	}

	return n
}

// RemoveCommand is the shell command that removes the leftovers, for
// messages; paths are quoted for a POSIX shell.
func RemoveCommand(ls []Leftover) string {
	parts := []string{"rm", "-rf", "--"}
	for _, l := range ls {
		parts = append(parts, shellQuote(l.Path))
	}

	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		plain := r == '/' || r == '-' || r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		return !plain
	}) < 0 {
		return s
	}

	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
