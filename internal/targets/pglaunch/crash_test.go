//go:build linux

package pglaunch_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mongobench/mongobench/internal/targets/pglaunch"
	"github.com/mongobench/mongobench/internal/targets/pglaunch/pglaunchtest"
)

// TestKillRestart crashes a server with Kill and restarts it on the same
// data directory: a row committed before the crash is there afterwards (a
// process crash keeps what reached the operating system), no process of the
// old group is left, and the server keeps its port.
func TestKillRestart(t *testing.T) {
	s := pglaunchtest.Start(t, pglaunch.Options{TempDir: reachableTempDir(t)})

	for _, sql := range []string{"CREATE TABLE t (n int)", "INSERT INTO t VALUES (41), (42)"} {
		if _, err := s.Psql(t.Context(), pglaunch.DefaultDatabase, sql); err != nil {
			t.Fatal(err)
		}
	}

	oldPID, port := s.PID(), s.Port()

	// The postmaster's children (checkpointer, WAL writer, ...), each in a
	// process group of its own, must die with it.
	children := childrenOf(t, oldPID)
	if len(children) == 0 {
		t.Fatalf("the postmaster (pid %d) has no children in /proc", oldPID)
	}

	if err := s.Restart(t.Context()); err == nil {
		t.Error("Restart of a running server succeeded")
	}

	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}

	if err := syscall.Kill(-oldPID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d after Kill: %v, want ESRCH", oldPID, err)
	}

	for _, c := range children {
		if state := procState(c); state != "" && state != "Z" {
			t.Errorf("child %d of the postmaster is still running after Kill (state %s)", c, state)
		}
	}

	if _, err := s.Psql(t.Context(), pglaunch.DefaultDatabase, "SELECT 1"); err == nil {
		t.Error("a killed server answered")
	}

	if err := s.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}

	if s.PID() == oldPID || s.Port() != port {
		t.Errorf("after Restart: pid %d (was %d), port %d (was %d)", s.PID(), oldPID, s.Port(), port)
	}

	got, err := s.Psql(t.Context(), pglaunch.DefaultDatabase, "SELECT sum(n) FROM t")
	if err != nil {
		t.Fatal(err)
	}

	if got != "83" {
		t.Errorf("sum after the crash = %q, want 83", got)
	}
}

// statFields returns the fields of /proc/PID/stat after the command name
// (state, ppid, ...), nil when the process is gone.
func statFields(pid string) []string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil
	}

	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}

	return strings.Fields(string(b[i+1:]))
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()

	paths, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}

	var out []int

	for _, p := range paths {
		name := filepath.Base(filepath.Dir(p))
		if f := statFields(name); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			n, _ := strconv.Atoi(name)
			out = append(out, n)
		}
	}

	return out
}

// procState is the state letter of process pid, "" when it is gone.
func procState(pid int) string {
	if f := statFields(strconv.Itoa(pid)); len(f) > 0 {
		return f[0]
	}

	return ""
}
