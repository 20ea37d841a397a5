package tempdir_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/mongobench/mongobench/internal/base/tempdir"
)

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatalf("running a short-lived process: %v", err)
	}

	return cmd.Process.Pid
}

// leftover makes a directory as a killed run would have left it: marked
// with pid and start, holding a file of n bytes.
func leftover(t *testing.T, parent, prefix string, pid int, start string, n int) string {
	t.Helper()

	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		t.Fatal(err)
	}

	if pid > 0 {
		mark := fmt.Sprintf("pid %d\nstart %s\n", pid, start)
		if err := os.WriteFile(filepath.Join(dir, ".mongobench-owner"), []byte(mark), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	if err := os.WriteFile(filepath.Join(dir, "data.sqlite"), make([]byte, n), 0o600); err != nil {
		t.Fatal(err)
	}

	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}

	return abs
}

func paths(ls []tempdir.Leftover) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Path)
	}

	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestCreateMarksOwner(t *testing.T) {
	parent := t.TempDir()

	dir, err := tempdir.Create(parent, "mongobench-ferretdb-")
	if err != nil {
		t.Fatal(err)
	}

	if filepath.Dir(dir) != parent || !filepath.IsAbs(dir) {
		t.Errorf("Create made %s, want an absolute path in %s", dir, parent)
	}

	// The owner is alive: Sweep keeps the directory.
	s, err := tempdir.Sweep(parent)
	if err != nil {
		t.Fatal(err)
	}

	if len(s.Removed)+len(s.Failed)+len(s.Unmarked) != 0 || !exists(dir) {
		t.Errorf("Sweep touched the directory of a live process: %+v", s)
	}
}

func TestSweepRemovesDeadOwners(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("liveness is not known on Windows; Sweep keeps everything")
	}

	parent := t.TempDir()
	self := tempdir.Self()

	dead := leftover(t, parent, "mongobench-ferretdb-", deadPID(t), "", 5<<10)
	live := leftover(t, parent, "mongobench-postgres-", self.PID, self.Start, 10)
	unmarked := leftover(t, parent, "mongobench-mongod-", 0, "", 7)
	other := leftover(t, parent, "mongobench-memory.", deadPID(t), "", 1)

	// A dead PID, but of another PID namespace (another container sharing
	// the directory): it cannot be checked, so the directory stays.
	foreign := leftover(t, parent, "mongobench-mongod-", deadPID(t), "", 1)
	if err := os.WriteFile(filepath.Join(foreign, ".mongobench-owner"),
		[]byte(fmt.Sprintf("pid %d\nstart 1\nnamespace pid:[1]\n", deadPID(t))), 0o600); err != nil {
		t.Fatal(err)
	}

	var reused string
	if self.Start != "" {
		// This process's PID, but a different start time: the PID was
		// reused after the owner died.
		reused = leftover(t, parent, "mongobench-ferretdb-", self.PID, self.Start+"1", 3)
	}

	s, err := tempdir.Sweep(parent)
	if err != nil {
		t.Fatal(err)
	}

	wantRemoved := []string{dead}
	if reused != "" {
		wantRemoved = append(wantRemoved, reused)
	}

	slices.Sort(wantRemoved)

	if got := paths(s.Removed); !slices.Equal(got, wantRemoved) {
		t.Errorf("removed %v, want %v", got, wantRemoved)
	}

	for _, p := range wantRemoved {
		if exists(p) {
			t.Errorf("%s still exists", p)
		}
	}

	if tempdir.Total(s.Removed) < 5<<10 {
		t.Errorf("removed %d bytes, want at least the 5 KiB file", tempdir.Total(s.Removed))
	}

	if got := paths(s.Unmarked); !slices.Equal(got, []string{unmarked}) || !exists(unmarked) {
		t.Errorf("unmarked %v, want %v and kept", got, unmarked)
	}

	if !exists(live) || !exists(other) || (self.Namespace != "" && !exists(foreign)) {
		t.Errorf("Sweep removed a directory of a live process or not named like mongobench's")
	}

	if len(s.Failed) > 0 {
		t.Errorf("failed: %+v", s.Failed)
	}
}

func TestRemoveCommandQuotes(t *testing.T) {
	got := tempdir.RemoveCommand([]tempdir.Leftover{{Path: "/tmp/mongobench-ferretdb-1"}, {Path: "/tmp/it's here"}})
	want := `rm -rf -- /tmp/mongobench-ferretdb-1 '/tmp/it'\''s here'`

	if got != want {
		t.Errorf("RemoveCommand = %s, want %s", got, want)
	}
}
