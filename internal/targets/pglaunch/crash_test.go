//go:build linux

package pglaunch_test

import (
	"errors"
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

	if err := s.Restart(t.Context()); err == nil {
		t.Error("Restart of a running server succeeded")
	}

	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}

	if err := syscall.Kill(-oldPID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d after Kill: %v, want ESRCH", oldPID, err)
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
