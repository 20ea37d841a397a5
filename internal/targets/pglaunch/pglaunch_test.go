//go:build linux

package pglaunch_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/pglaunch"
	"github.com/mongobench/mongobench/internal/targets/pglaunch/pglaunchtest"
)

// reachableTempDir returns a fresh directory that the postgres user can
// enter even when the test runs as root (t.TempDir's parent is 0700).
func reachableTempDir(t *testing.T) string {
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

// assertEmptyDir fails the test unless dir exists and is empty.
func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Errorf("read %s: %v", dir, err)
		return
	}

	for _, e := range entries {
		t.Errorf("%s: left behind: %s", dir, e.Name())
	}
}

// processUID returns the real uid of process pid from /proc.
func processUID(t *testing.T, pid int) string {
	t.Helper()

	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}

	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			return strings.Fields(rest)[0]
		}
	}

	t.Fatalf("no Uid line in /proc/%d/status", pid)

	return ""
}

func TestStartStop(t *testing.T) {
	pglaunchtest.Require(t)

	parent := reachableTempDir(t)

	s, err := pglaunch.Start(t.Context(), pglaunch.Options{
		TempDir:  parent,
		Logf:     t.Logf,
		Settings: map[string]string{"synchronous_commit": "off", "fsync": "off", "shared_buffers": "32MB", "cluster_name": "it's"},
	})
	if err != nil {
		t.Fatal(err)
	}

	stopped := false

	t.Cleanup(func() {
		if !stopped {
			_ = s.Stop()
		}
	})

	url := s.URL("ferretdb")
	if !regexp.MustCompile(`^postgres://postgres@127\.0\.0\.1:[1-9][0-9]*/ferretdb$`).MatchString(url) {
		t.Errorf("URL = %q", url)
	}

	if want := fmt.Sprintf(":%d/", s.Port()); !strings.Contains(url, want) {
		t.Errorf("URL %q does not use Port %d", url, s.Port())
	}

	pid := s.PID()
	if pid <= 0 {
		t.Fatalf("PID = %d", pid)
	}

	if os.Geteuid() == 0 && processUID(t, pid) == "0" {
		t.Error("the postmaster runs as root")
	}

	// The settings are in force, as the server itself reports them.
	shows := []struct{ setting, want string }{
		{"synchronous_commit", "off"},
		{"fsync", "off"},
		{"shared_buffers", "32MB"},
		{"cluster_name", "it's"},
		{"listen_addresses", "127.0.0.1"},
		{"unix_socket_directories", s.Dir()},
		{"server_encoding", "UTF8"},
		{"port", fmt.Sprint(s.Port())},
	}
	for _, sh := range shows {
		got, err := s.Psql(t.Context(), pglaunch.DefaultDatabase, "SHOW "+sh.setting)
		if err != nil {
			t.Fatal(err)
		}

		if got != sh.want {
			t.Errorf("SHOW %s = %q, want %q", sh.setting, got, sh.want)
		}
	}

	if v := s.Version(); v != "" {
		got, err := s.Psql(t.Context(), "postgres", "SHOW server_version")
		if err != nil {
			t.Fatal(err)
		}

		if !strings.HasPrefix(got, v+".") {
			t.Errorf("Version = %q, but the server says %q", v, got)
		}
	}

	// FerretDB works on it.
	e, err := targets.StartEmbedded(t.Context(), targets.EmbeddedOptions{TempDir: t.TempDir(), PostgreSQLURL: url})
	if err != nil {
		t.Fatal(err)
	}

	client, err := targets.Connect(t.Context(), e.URI(), targets.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}

	coll := client.Database("bench").Collection("items")
	if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: "x"}, {Key: "v", Value: "hello"}}); err != nil {
		t.Fatal(err)
	}

	var got bson.M
	if err := coll.FindOne(t.Context(), bson.D{{Key: "_id", Value: "x"}}).Decode(&got); err != nil {
		t.Fatal(err)
	}

	if got["v"] != "hello" {
		t.Errorf("found %v", got)
	}

	if err := client.Disconnect(t.Context()); err != nil {
		t.Fatal(err)
	}

	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// Stop, concurrently and more than once: every call gets the result.
	dir := s.Dir()
	stopped = true

	var wg sync.WaitGroup

	for range 3 {
		wg.Go(func() {
			if err := s.Stop(); err != nil {
				t.Errorf("Stop: %v", err)
			}
		})
	}

	wg.Wait()

	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Stop (stat: %v)", dir, err)
	}

	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("postmaster %d still exists after Stop (kill -0: %v)", pid, err)
	}

	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("processes of group %d still exist after Stop (kill -0: %v)", pid, err)
	}

	assertEmptyDir(t, parent)

	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStartFailuresCleanUp(t *testing.T) {
	pglaunchtest.Require(t)

	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name     string
		ctx      context.Context
		settings map[string]string
		want     string // in the error
	}{
		{"canceled context", canceled, nil, "context canceled"},
		{"managed port", context.Background(), map[string]string{"port": "5432"}, `"port" is managed`},
		{"managed listen_addresses", context.Background(), map[string]string{"Listen_Addresses": "*"}, "is managed"},
		{"bad name", context.Background(), map[string]string{"fsync = off\nport": "1"}, "invalid setting name"},
		{"multi-line value", context.Background(), map[string]string{"work_mem": "4MB\nport = 1"}, "single line"},
		{"unknown setting", context.Background(), map[string]string{"no_such_setting": "1"}, "no_such_setting"},
		{"invalid value", context.Background(), map[string]string{"shared_buffers": "lots"}, "shared_buffers"},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := reachableTempDir(t)

			s, err := pglaunch.Start(tt.ctx, pglaunch.Options{TempDir: parent, Settings: tt.settings})
			if err == nil {
				_ = s.Stop()
				t.Fatal("Start succeeded")
			}

			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}

			assertEmptyDir(t, parent)
		})
	}
}

func TestStartDeadlineCleansUp(t *testing.T) {
	pglaunchtest.Require(t)

	// Deadlines that expire during initdb, around the server's start-up
	// and right after it: whatever was reached must be undone.
	for _, d := range []time.Duration{50 * time.Millisecond, 400 * time.Millisecond, 900 * time.Millisecond, 1500 * time.Millisecond} {
		t.Run(d.String(), func(t *testing.T) {
			parent := reachableTempDir(t)

			ctx, cancel := context.WithTimeout(t.Context(), d)
			defer cancel()

			s, err := pglaunch.Start(ctx, pglaunch.Options{TempDir: parent})
			t.Logf("Start: %v", err)

			if err == nil {
				t.Logf("started within %s", d)

				if err := s.Stop(); err != nil {
					t.Fatal(err)
				}
			}

			assertEmptyDir(t, parent)
		})
	}
}

func TestStartUnreachableDirAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root hands the directory to the postgres user")
	}

	pglaunchtest.Require(t)

	parent := t.TempDir() // below a 0700 directory owned by root

	_, err := pglaunch.Start(t.Context(), pglaunch.Options{TempDir: parent})
	if err == nil || !strings.Contains(err.Error(), "cannot enter") {
		t.Errorf("Start = %v, want an error saying the postgres user cannot enter the directory", err)
	}

	assertEmptyDir(t, parent)
}

func TestAvailable(t *testing.T) {
	err := pglaunch.Available()
	if err != nil && !strings.Contains(err.Error(), "apt-get install postgresql") {
		t.Errorf("Available = %v, want an error with an install hint", err)
	}
}
