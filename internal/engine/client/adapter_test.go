package client

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/engine/client/clienttest"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/spec/datagen"
)

func TestMain(m *testing.M) {
	clienttest.MaybeRun()
	os.Exit(m.Run())
}

// secretURI carries a password that must never reach the adapter's log.
const secretURI = "mongodb://bench:s3cr3tpass@127.0.0.1:1/"

// startPeer starts the protocol peer in mode as the adapter of a small
// workload.
func startPeer(t *testing.T, mode string, handshake time.Duration) (*Adapter, error) {
	t.Helper()

	spec := parseSpec(t, `name: t
database: d
collections:
  - name: c
operations:
  - name: get
    op: findOne
    collection: c
    filter: {n: 1}
run:
  duration: 1s
`)

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	ops, errs := op.Compile(spec, env)
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	args, penv := clienttest.Command(mode)
	s, _ := Lookup("node-driver")

	a, err := Start(context.Background(), Config{
		Stack: s, Command: args, Env: []string{penv}, URI: secretURI, Database: "d",
		Spec: spec, Ops: ops, LogDir: t.TempDir(), Handshake: handshake,
	})
	if a != nil {
		t.Cleanup(func() { a.Kill() })
	}

	return a, err
}

// TestHandshakeTimeout checks that an adapter that never answers is a
// clear, bounded error, and that its process is gone afterwards.
func TestHandshakeTimeout(t *testing.T) {
	t.Parallel()

	start := time.Now()

	_, err := startPeer(t, "silent", time.Second)
	if err == nil {
		t.Fatal("no error from an adapter that never answers")
	}

	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the handshake bound of 1s took %s", d)
	}

	for _, want := range []string{"client node-driver", "no ready line within 1s", "full log: "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	if strings.Contains(err.Error(), "s3cr3tpass") {
		t.Errorf("error shows the password: %v", err)
	}
}

// TestFatalAtInit checks that a fatal reply is a FatalError with the
// adapter's message.
func TestFatalAtInit(t *testing.T) {
	t.Parallel()

	_, err := startPeer(t, "fatal", 20*time.Second)

	var fe *FatalError
	if !errors.As(err, &fe) || !strings.Contains(fe.Message, "kind drop has no idiomatic call") {
		t.Fatalf("got %v, want the adapter's fatal message", err)
	}
}

// TestMalformedLine checks that a line that is not JSON ends the
// conversation with an error quoting it.
func TestMalformedLine(t *testing.T) {
	t.Parallel()

	a, err := startPeer(t, "malformed", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}

	if a.Versions["peer"] != "1" {
		t.Errorf("versions %v", a.Versions)
	}

	err = waitError(t, a)
	if !strings.Contains(err.Error(), `malformed line from the adapter: "this is not JSON"`) {
		t.Errorf("got %v", err)
	}
}

// TestProcessDeath checks that an adapter dying mid-run is an error with
// the last line of its log and the log's path, and that the log is
// sanitized.
func TestProcessDeath(t *testing.T) {
	t.Parallel()

	a, err := startPeer(t, "die", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}

	if err := a.Phase("run", 2); err != nil {
		t.Fatal(err)
	}

	err = waitError(t, a)
	for _, want := range []string{"the adapter exited: exit status 4", "peer: dying at phase start", a.LogPath()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	log, rerr := os.ReadFile(a.LogPath())
	if rerr != nil {
		t.Fatal(rerr)
	}

	if strings.Contains(string(log), "s3cr3tpass") || !strings.Contains(string(log), "peer: connecting to mongodb://bench:xxxxx@127.0.0.1:1/") {
		t.Errorf("log not sanitized as expected:\n%s", log)
	}
}

// TestKillLeavesNoProcess checks that Kill ends the adapter's process.
func TestKillLeavesNoProcess(t *testing.T) {
	t.Parallel()

	a, err := startPeer(t, "ok", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}

	pid := a.PID()
	a.Kill()

	select {
	case <-a.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the adapter did not exit after Kill")
	}

	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still exists after Kill: %v", pid, err)
	}
}

// waitError waits for the error that ends the adapter's replies.
func waitError(t *testing.T, a *Adapter) error {
	t.Helper()

	deadline := time.After(20 * time.Second)

	for {
		_, ok, err := a.Next()
		if err != nil {
			return err
		}

		if ok {
			continue
		}

		select {
		case <-a.Wake():
		case <-deadline:
			t.Fatal("no error within 20s")
		}
	}
}

// TestWrongStack checks that an adapter ready for another stack than the
// one asked for is refused: the numbers would be labelled wrong.
func TestWrongStack(t *testing.T) {
	t.Parallel()

	_, err := startPeer(t, "wrongstack", 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), `the adapter is ready for stack "other-stack" instead`) {
		t.Fatalf("got %v", err)
	}
}

// TestCloseRemovesCleanLog checks that the log of an adapter that ran and
// exited cleanly is removed, while a failed adapter's stays (see
// TestProcessDeath).
func TestCloseRemovesCleanLog(t *testing.T) {
	t.Parallel()

	a, err := startPeer(t, "ok", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := os.Stat(a.LogPath()); err != nil {
		t.Fatalf("no log while the adapter runs: %v", err)
	}

	a.Close(10 * time.Second)

	if _, err := os.Stat(a.LogPath()); !os.IsNotExist(err) {
		t.Errorf("the log of a clean run is still there: %v", err)
	}
}
