package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/embeddedtest"
)

// mainTimeout bounds every Main call of these tests: a command that has not
// returned by then is hung, which is a failure, not a slow machine.
const mainTimeout = 3 * time.Minute

// setupLimit bounds how long a test waits for a run to get through its
// set-up (embedded server, load phase, client adapter) to a measured
// interval: a hang guard, not a speed limit, since a loaded machine under
// the race detector takes tens of seconds where an idle one takes two.
const setupLimit = 4 * time.Minute

// countedWorkload writes testdata/small.yaml with its measured phase
// bounded by max_operations n instead of its 1.5 s, for a test that needs
// operations of every kind whatever the machine's speed (a loaded machine
// can spend 1.5 s on the first few operations), and returns its path.
func countedWorkload(t *testing.T, n int) string {
	t.Helper()

	src, err := os.ReadFile("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}

	counted := strings.Replace(string(src), "  duration: 1500ms\n", fmt.Sprintf("  max_operations: %d\n", n), 1)
	if counted == string(src) {
		t.Fatal("testdata/small.yaml has no run.duration of 1500ms to replace")
	}

	path := filepath.Join(t.TempDir(), "small.yaml")
	if err := os.WriteFile(path, []byte(counted), 0o600); err != nil {
		t.Fatal(err)
	}

	return path
}

// lockedBuffer is a bytes.Buffer safe for the concurrent writes of a run
// (progress from the ticker, messages from the signal goroutine) and for a
// test reading it while Main is still running.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()

	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()

	return b.b.String()
}

// cliRun is one in-process invocation of mongobench.
type cliRun struct {
	st      *State
	stdout  *lockedBuffer
	stderr  *lockedBuffer
	signals chan os.Signal

	mu       sync.Mutex
	exits    []int
	panicked string // Main's panic with its stack, if it panicked
	// onExit, when set, runs inside State.Exit (on the signal goroutine).
	onExit func(code int)
}

// newCLIRun builds a test State: plain progress lines (CI=1), no terminal,
// signals under the test's control and an Exit that only records the code.
func newCLIRun(args ...string) *cliRun {
	r := &cliRun{
		stdout:  &lockedBuffer{},
		stderr:  &lockedBuffer{},
		signals: make(chan os.Signal, 2),
	}

	env := map[string]string{"CI": "1"}

	r.st = &State{
		Args:             args,
		Stdout:           r.stdout,
		Stderr:           r.stderr,
		Getenv:           func(k string) string { return env[k] },
		StderrIsTerminal: false,
		Signals:          r.signals,
		StopSignals:      func() {},
		Exit: func(code int) {
			r.mu.Lock()
			r.exits = append(r.exits, code)
			f := r.onExit
			r.mu.Unlock()

			if f != nil {
				f(code)
			}
		},
		Now: time.Now,
		// The test process runs the servers and, for sharded commands,
		// several commands at once (under -race, at several times the
		// CPU): its CPU time is no client's, and capacity's client check
		// would blame it for every step.
		ProcessCPU: func() time.Duration { return 0 },
	}

	return r
}

// exitCodes returns the codes passed to State.Exit so far.
func (r *cliRun) exitCodes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()

	return append([]int(nil), r.exits...)
}

// panicCode is what start delivers when Main panicked.
const panicCode = -2

// start runs Main in a goroutine; the channel delivers its exit code, or
// panicCode if it panicked (the panic is kept, not let crash the tests).
func (r *cliRun) start() <-chan int {
	done := make(chan int, 1)

	go func() {
		defer func() {
			if p := recover(); p != nil {
				r.mu.Lock()
				r.panicked = fmt.Sprintf("%v\n%s", p, debug.Stack())
				r.mu.Unlock()

				done <- panicCode
			}
		}()

		done <- Main(r.st)
	}()

	return done
}

// panicValue returns Main's panic and stack, or "".
func (r *cliRun) panicValue() string {
	r.mu.Lock()
	defer r.mu.Unlock()

	return r.panicked
}

// waitAllowPanic waits for the exit code of a started run, failing the test
// if Main does not return within limit. A panic yields panicCode.
func (r *cliRun) waitAllowPanic(t *testing.T, done <-chan int, limit time.Duration) int {
	t.Helper()

	select {
	case code := <-done:
		return code
	case <-time.After(limit):
		t.Fatalf("Main did not return within %s\nstdout:\n%s\nstderr:\n%s", limit, r.stdout, r.stderr)
		return -1
	}
}

// wait is waitAllowPanic, failing the test if Main panicked.
func (r *cliRun) wait(t *testing.T, done <-chan int, limit time.Duration) int {
	t.Helper()

	code := r.waitAllowPanic(t, done, limit)
	if code == panicCode {
		t.Fatalf("Main panicked: %s\nstderr:\n%s", r.panicValue(), r.stderr)
	}

	return code
}

// runMain runs mongobench with args and returns its exit code and output.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()

	r := newCLIRun(args...)
	code = r.wait(t, r.start(), mainTimeout)

	if codes := r.exitCodes(); len(codes) > 0 {
		t.Errorf("State.Exit called with %v; only a second interrupt may call it", codes)
	}

	return code, r.stdout.String(), r.stderr.String()
}

// waitFor polls until cond holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()

	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}

		time.Sleep(20 * time.Millisecond)
	}
}

// measuredIntervalRe matches a progress line of a measured interval of the
// run phase (not warm-up, not load).
var measuredIntervalRe = regexp.MustCompile(`(?m)^\[run\] \S+  \d+ ops/s  worst p99 `)

// busyIntervalRe matches a measured interval in which operations completed.
var busyIntervalRe = regexp.MustCompile(`(?m)^\[run\] \S+  [1-9]\d* ops/s  worst p99 `)

// embeddedDirRe finds the embedded server's data directory in stderr.
var embeddedDirRe = regexp.MustCompile(`started embedded FerretDB [^\n]*\(SQLite, file-backed, ([^\n]+)\)\.`)

// embeddedDir returns the data directory named in stderr.
func embeddedDir(t *testing.T, stderr string) string {
	t.Helper()

	m := embeddedDirRe.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr does not name the embedded FerretDB's directory:\n%s", stderr)
	}

	return m[1]
}

// assertGone fails the test if path still exists.
func assertGone(t *testing.T, path string) {
	t.Helper()

	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Main returned (stat: %v)", path, err)
	}
}

// readResults reads a results file and fails the test on any inconsistency
// that result.Check finds.
func readResults(t *testing.T, path string) *result.Result {
	t.Helper()

	res, err := result.Read(context.Background(), path)
	if err != nil {
		t.Fatalf("reading results: %v", err)
	}

	for _, err := range res.Check() {
		t.Errorf("results file %s: %v", path, err)
	}

	return res
}

// phase returns the named phase of res, or nil.
func phase(res *result.Result, name string) *result.Phase {
	for i := range res.Phases {
		if res.Phases[i].Name == name {
			return &res.Phases[i]
		}
	}

	return nil
}

// totals sums successful and failed operations of a list.
func totals(ops []result.Operation) (ok, failed int64) {
	for _, o := range ops {
		if o.Unit != "" {
			continue // a unit is made of the operations counted here
		}

		ok += o.Count

		for _, n := range o.Errors {
			failed += n
		}
	}

	return ok, failed
}

// outPath is a results file path in a fresh temporary directory.
func outPath(t *testing.T) string {
	t.Helper()

	return filepath.Join(t.TempDir(), "results.json")
}

// startServer starts an embedded FerretDB that is not mongobench's, as a
// user's server would be, and stops it when the test ends.
func startServer(t *testing.T) *targets.Embedded {
	t.Helper()

	return embeddedtest.Start(t, targets.EmbeddedOptions{ShutdownTimeout: 5 * time.Second})
}

// connectClient connects to uri as a user's application would and
// disconnects when the test ends.
func connectClient(t *testing.T, uri string) *mongo.Client {
	t.Helper()

	client, err := targets.Connect(t.Context(), uri, targets.ConnectOptions{})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}

	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()

		_ = client.Disconnect(ctx)
	})

	return client
}

// errorLines returns the lines of s that start with "Error:".
func errorLines(s string) []string {
	var out []string

	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "Error:") {
			out = append(out, l)
		}
	}

	return out
}

// assertNoStackTrace fails the test if output looks like a panic.
func assertNoStackTrace(t *testing.T, output string) {
	t.Helper()

	for _, s := range []string{"goroutine ", "panic:", "runtime error"} {
		if strings.Contains(output, s) {
			t.Errorf("output contains %q, like a Go stack trace:\n%s", s, output)
		}
	}
}

// closedPort returns a port of 127.0.0.1 on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}

	_, port, err := net.SplitHostPort(l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	return port
}
