package atomicfile

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/base/tempdir"
)

// TestCheck checks that every kind of path that is not a regular file is
// refused, and that a missing path and a regular file are not.
func TestCheck(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	regular := filepath.Join(dir, "r.json")
	link := filepath.Join(dir, "link.json")
	fifo := filepath.Join(dir, "fifo")

	if err := os.WriteFile(regular, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}

	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}

	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		path, what string
	}{
		{regular, ""},
		{filepath.Join(dir, "missing.json"), ""},
		{link, "a symbolic link"},
		{dir, "a directory"},
		{fifo, "a named pipe"},
		{"/dev/null", "a device"},
	} {
		err := Check(tc.path)

		var nr *NotRegularError

		switch {
		case tc.what == "" && err != nil:
			t.Errorf("Check(%s) = %v, want nil", tc.path, err)
		case tc.what != "" && (!errors.As(err, &nr) || nr.What != tc.what):
			t.Errorf("Check(%s) = %v, want %s", tc.path, err, tc.what)
		}
	}
}

// TestWriteRefusesNonRegular checks that Write never replaces a link or a
// named pipe with a regular file, even when its caller did not Check.
func TestWriteRefusesNonRegular(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	link := filepath.Join(dir, "link.json")

	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}

	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}

	var nr *NotRegularError
	if err := WriteBytes(link, []byte("new")); !errors.As(err, &nr) {
		t.Fatalf("WriteBytes through a link: %v, want a NotRegularError", err)
	}

	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}

	if data, _ := os.ReadFile(target); string(data) != "old" {
		t.Errorf("the link's target holds %q, want old", data)
	}

	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left %d entries, want the target and the link", len(entries))
	}
}

// TestReserve checks that a reserved path cannot be reserved again, by
// this process or another, until it is released, and that the lock file
// goes with the release.
func TestReserve(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "sub", "r.json")

	r, err := Reserve(path)
	if err != nil {
		t.Fatal(err)
	}

	var busy *BusyError
	if _, err := Reserve(path); !errors.As(err, &busy) || busy.PID != os.Getpid() {
		t.Fatalf("second Reserve: %v, want a BusyError naming PID %d", err, os.Getpid())
	}

	// Another process (flock(1), where installed) sees the lock too.
	if flock, err := exec.LookPath("flock"); err == nil {
		if err := exec.Command(flock, "-n", lockPath(path), "true").Run(); err == nil {
			t.Errorf("another process took the lock of a reserved path")
		}
	}

	r.Release()
	r.Release() // harmless

	if _, err := os.Stat(lockPath(path)); !os.IsNotExist(err) {
		t.Errorf("the lock file stayed after Release: %v", err)
	}

	r2, err := Reserve(path)
	if err != nil {
		t.Fatalf("Reserve after Release: %v", err)
	}
	r2.Release()

	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("Reserve created the reserved file: %v", err)
	}
}

// TestReserveTakesOverStaleLock checks that the lock file a killed holder
// left (present, held by no one) does not block the next writer.
func TestReserveTakesOverStaleLock(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(lockPath(path), []byte("pid 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	r, err := Reserve(path)
	if err != nil {
		t.Fatalf("Reserve over a stale lock file: %v", err)
	}
	r.Release()
}

// deadPID returns the PID of a process that has ended and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()

	cmd := exec.Command(os.Args[0], "-test.run=^$") // the test binary, running no test
	if err := cmd.Run(); err != nil {
		t.Fatalf("cannot start a process: %v", err)
	}

	return cmd.Process.Pid
}

// TestSweep checks which leftovers Sweep removes: temporary files of dead
// writers on this machine and any older than StaleAfter, and stale lock
// files; never a live writer's file, one of another machine, or files
// that are not mongobench's.
func TestSweep(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	self := tempdir.Self()
	tag := hostTag(self.Namespace)
	dead := deadPID(t)

	// A still-running child stands for a live writer that is not us.
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatalf("cannot start a process: %v", err)
	}

	t.Cleanup(func() { _ = live.Process.Kill(); _ = live.Wait() })

	livePID := live.Process.Pid

	name := func(pid int, start, tag string) string {
		return ".r.json.tmp-P" + strconv.Itoa(pid) + "-S" + start + "-H" + tag + "-123456"
	}

	// A tag that is not this machine's stands for another machine.
	foreign := "0badc0de"
	if foreign == tag {
		foreign = "0badc0df"
	}

	files := map[string]bool{ // name → removed
		name(dead, "", tag):                true,
		name(livePID, "", tag):             false,
		name(os.Getpid(), self.Start, tag): false,
		name(dead, "", foreign):            false, // another machine: unknown
		".r.json.tmp-987654":               false, // older version, recent
		".old.json.tmp-987654":             true,  // older version, aged below
		".r.json":                          false,
		"r.json":                           false,
		".notes.tmp-x":                     false,
	}

	for n := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	aged := time.Now().Add(-StaleAfter - time.Hour)
	if err := os.Chtimes(filepath.Join(dir, ".old.json.tmp-987654"), aged, aged); err != nil {
		t.Fatal(err)
	}

	// A stale lock file, and a held one.
	if err := os.WriteFile(filepath.Join(dir, ".stale.json.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	held, err := Reserve(filepath.Join(dir, "held.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()

	removed := Sweep(dir, time.Now())

	got := map[string]bool{}
	for _, l := range removed {
		if l.Err != nil {
			t.Errorf("%s: %v", l.Path, l.Err)
		}

		got[filepath.Base(l.Path)] = true
	}

	for n, want := range files {
		_, err := os.Stat(filepath.Join(dir, n))
		if gone := os.IsNotExist(err); gone != want || got[n] != want {
			t.Errorf("%s: removed %v (reported %v), want %v", n, gone, got[n], want)
		}
	}

	if _, err := os.Stat(filepath.Join(dir, ".stale.json.lock")); !os.IsNotExist(err) {
		t.Errorf("the stale lock file stayed: %v", err)
	}

	if _, err := os.Stat(lockPath(filepath.Join(dir, "held.json"))); err != nil {
		t.Errorf("the held lock file was removed: %v", err)
	}
}

// TestWriteNamesItsWriter checks that Write's temporary file carries this
// process, so that Sweep can tell whether its writer is gone, and that a
// Sweep during the write leaves it alone.
func TestWriteNamesItsWriter(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")

	var temps []string

	err := Write(path, func(w io.Writer) error {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			temps = append(temps, e.Name())
		}

		if removed := Sweep(dir, time.Now()); len(removed) > 0 {
			t.Errorf("Sweep during the write removed %v", removed)
		}

		_, err := w.Write([]byte("data"))

		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	if len(temps) != 1 {
		t.Fatalf("during the write the directory held %v, want one temporary file", temps)
	}

	m := tempName.FindStringSubmatch(temps[0])
	if m == nil || m[1] != strconv.Itoa(os.Getpid()) {
		t.Errorf("temporary file %q does not name this process (PID %d)", temps[0], os.Getpid())
	}
}
