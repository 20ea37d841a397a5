//go:build linux

package pglaunch

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/base/freeport"
)

// fakeInstall creates dir with executable stand-ins for the named programs.
func fakeInstall(t *testing.T, dir string, programs ...string) {
	t.Helper()

	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	for _, p := range programs {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindBinaries(t *testing.T) {
	all := []string{"initdb", "postgres", "psql"}

	tests := []struct {
		name    string
		lib     map[string][]string // version directory -> programs in its bin/
		path    []string            // programs in a directory on PATH
		wantDir string              // relative to the lib directory, or "PATH"
		wantErr string
	}{
		{
			name:    "newest complete version wins",
			lib:     map[string][]string{"9.6": all, "13": all, "15": all, "16": {"initdb", "postgres"}, "devel": all},
			wantDir: "15/bin",
		},
		{
			name:    "numeric, not lexical, order",
			lib:     map[string][]string{"9.6": all, "10": all},
			wantDir: "10/bin",
		},
		{
			name:    "PATH when the lib directory has none",
			lib:     map[string][]string{"14": {"psql"}},
			path:    all,
			wantDir: "PATH",
		},
		{
			name:    "nothing installed",
			wantErr: "apt-get install postgresql",
		},
		{
			name:    "initdb without a server",
			path:    []string{"initdb"},
			wantErr: "no postgres",
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib := t.TempDir()
			for v, programs := range tt.lib {
				fakeInstall(t, filepath.Join(lib, v, "bin"), programs...)
			}

			pathDir := t.TempDir()
			fakeInstall(t, pathDir, tt.path...)
			t.Setenv("PATH", pathDir)

			b, err := findBinaries(lib)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("findBinaries = %+v, %v; want an error containing %q", b, err, tt.wantErr)
				}

				return
			}

			if err != nil {
				t.Fatal(err)
			}

			want := filepath.Join(lib, tt.wantDir)
			if tt.wantDir == "PATH" {
				want = pathDir
			}

			if b.dir != want || b.initdb != filepath.Join(want, "initdb") ||
				b.postgres != filepath.Join(want, "postgres") || b.psql != filepath.Join(want, "psql") {
				t.Errorf("findBinaries = %+v, want everything in %s", b, want)
			}
		})
	}
}

func TestFindBinariesFollowsSymlink(t *testing.T) {
	install := filepath.Join(t.TempDir(), "15", "bin")
	fakeInstall(t, install, "initdb", "postgres", "psql")

	pathDir := t.TempDir()
	if err := os.Symlink(filepath.Join(install, "initdb"), filepath.Join(pathDir, "initdb")); err != nil {
		t.Fatal(err)
	}

	t.Setenv("PATH", pathDir)

	b, err := findBinaries(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	if b.postgres != filepath.Join(install, "postgres") || b.psql != filepath.Join(install, "psql") {
		t.Errorf("findBinaries = %+v, want the programs next to initdb's target %s", b, install)
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		ok   bool
	}{
		{"15", []int{15}, true},
		{"9.6", []int{9, 6}, true},
		{"devel", nil, false},
		{"15.", nil, false},
		{"-1", nil, false},
	}

	for _, tt := range tests {
		got, ok := parseVersion(tt.in)
		if ok != tt.ok || !slicesEqual(got, tt.want) {
			t.Errorf("parseVersion(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}

	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}

	return true
}

func TestQuoteSetting(t *testing.T) {
	tests := []struct{ in, want string }{
		{"off", "'off'"},
		{"128MB", "'128MB'"},
		{"it's", "'it''s'"},
		{`C:\dir`, `'C:\\dir'`},
		{"", "''"},
	}

	for _, tt := range tests {
		if got := quoteSetting(tt.in); got != tt.want {
			t.Errorf("quoteSetting(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestValidateSettings(t *testing.T) {
	tests := []struct {
		name     string
		settings map[string]string
		wantErr  string
	}{
		{"none", nil, ""},
		{"ordinary", map[string]string{"fsync": "off", "shared_buffers": "128MB", "auto_explain.log_min_duration": "0"}, ""},
		{"managed", map[string]string{"PORT": "1"}, "managed"},
		{"socket directories", map[string]string{"unix_socket_directories": "/tmp"}, "managed"},
		{"injection in name", map[string]string{"a = 1\nport": "2"}, "invalid setting name"},
		{"empty name", map[string]string{"": "2"}, "invalid setting name"},
		{"newline in value", map[string]string{"work_mem": "1MB\nport=1"}, "single line"},
		{"NUL in value", map[string]string{"work_mem": "1MB\x00"}, "single line"},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validateSettings(tt.settings)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("validateSettings = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

// startInternal starts a server for an internal test, skipping when
// PostgreSQL is missing (failing under CI), in a directory the postgres user
// can reach.
func startInternal(t *testing.T) *Server {
	t.Helper()

	if err := Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}

		t.Skip(err)
	}

	parent := reachableDir(t)

	s, err := Start(t.Context(), Options{TempDir: parent, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = s.Stop() })

	return s
}

// reachableDir returns a fresh directory that the postgres user can enter.
func reachableDir(t *testing.T) string {
	t.Helper()

	dir, err := os.MkdirTemp("", "pglaunch-test-")
	if err != nil {
		t.Fatal(err)
	}

	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = os.RemoveAll(dir) })

	return dir
}

func TestStopEscalates(t *testing.T) {
	s := startInternal(t)

	s.stopTimeouts = [3]time.Duration{200 * time.Millisecond, 200 * time.Millisecond, 5 * time.Second}

	pid := s.PID()

	// A stopped postmaster handles neither SIGINT nor SIGQUIT; only
	// SIGKILL ends it.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}

	err := s.Stop()
	if err == nil || !strings.Contains(err.Error(), "SIGKILL") {
		t.Errorf("Stop = %v, want it to report the escalation to SIGKILL", err)
	}

	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) && !onlyZombies(pid) {
		t.Errorf("processes of group %d survived Stop (kill -0: %v)", pid, err)
	}

	if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("%s survived Stop (stat: %v)", s.Dir(), err)
	}
}

// TestOrphanHelper is not a test: TestNoOrphanWhenParentDies runs the test
// binary with it to get a process that starts a server and then is killed.
func TestOrphanHelper(t *testing.T) {
	parent := os.Getenv("PGLAUNCH_ORPHAN_HELPER_DIR")
	if parent == "" {
		t.Skip("helper process for TestNoOrphanWhenParentDies")
	}

	s, err := Start(t.Context(), Options{TempDir: parent})
	if err != nil {
		t.Fatal(err)
	}

	os.Stdout.WriteString("PID " + strconv.Itoa(s.PID()) + "\n")

	time.Sleep(time.Minute) // killed long before
}

func TestNoOrphanWhenParentDies(t *testing.T) {
	if err := Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}

		t.Skip(err)
	}

	parent := reachableDir(t)

	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestOrphanHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "PGLAUNCH_ORPHAN_HELPER_DIR="+parent)

	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}

	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}

	pid := 0

	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "PID "); ok {
			pid, _ = strconv.Atoi(rest)
			break
		}

		t.Log("helper:", sc.Text())
	}

	if pid == 0 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("the helper did not start a server")
	}

	// Kill the parent the hard way: no Stop, no cleanup.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}

	_ = cmd.Wait()

	deadline := time.Now().Add(15 * time.Second)

	for groupAlive(pid) {
		if time.Now().After(deadline) {
			killGroup(pid)
			t.Fatalf("PostgreSQL (pid %d) outlived its killed parent", pid)
		}

		time.Sleep(20 * time.Millisecond)
	}
}

func TestStopAfterCrash(t *testing.T) {
	s := startInternal(t)
	pid := s.PID()

	// Killed from outside, as the OOM killer would.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	if !waitClosed(s.done, 10*time.Second) {
		t.Fatal("the postmaster was not reaped")
	}

	err := s.Stop()
	if err == nil || !strings.Contains(err.Error(), "had exited before Stop") {
		t.Errorf("Stop = %v, want it to report the crash", err)
	}

	if groupAlive(pid) {
		t.Errorf("processes of group %d survived Stop", pid)
	}

	if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("%s survived Stop (stat: %v)", s.Dir(), err)
	}
}

func TestStartRetriesTakenPort(t *testing.T) {
	if err := Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}

		t.Skip(err)
	}

	// Someone else holds the first port handed out.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	taken := l.Addr().(*net.TCPAddr).Port

	calls := 0
	pickPort := func() (int, error) {
		calls++
		if calls == 1 {
			return taken, nil
		}

		return freeport.Loopback()
	}

	var retried atomic.Bool

	s, err := Start(t.Context(), Options{TempDir: reachableDir(t), pickPort: pickPort, Logf: func(format string, args ...any) {
		if strings.Contains(format, "was taken") {
			retried.Store(true)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}

	if err := s.Stop(); err != nil {
		t.Error(err)
	}

	if s.Port() == taken || calls != 2 || !retried.Load() {
		t.Errorf("port %d (taken %d), %d picks, retry logged %v; want a second, free port", s.Port(), taken, calls, retried.Load())
	}
}
