//go:build e2e

package cli_test

// End-to-end tests of the built binary in a pseudo-terminal, as people run
// it: the live progress bar is drawn (CI is unset in the child), and the
// process must end by itself, stop on signals, and leave no temporary
// directory or child process behind. CI has no terminal, so the tests make
// their own with github.com/creack/pty.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets/pglaunch/pglaunchtest"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// Bounds of the terminal tests. They are generous because the machine may
// be busy; a hang lasts forever, so any bound tells it apart.
const (
	// runLimit bounds a whole run that must end by itself.
	runLimit = 2 * time.Minute

	// stopLimit bounds the exit after a stop signal; mongobench bounds its
	// own graceful stop to 10 s.
	stopLimit = 30 * time.Second
)

// nullWorkload runs findOne against the wiretest null server.
const nullWorkload = `name: terminal
database: mongobench_terminal
collections: [{name: items}]
run: {concurrency: 2, duration: 2s, warmup: 300ms, interval: 250ms}
operations:
  - {name: get, op: findOne, collection: items, filter: {_id: {^int: {min: 1, max: 100}}}}
`

// terminal is the binary under test and the scratch space of one test.
type terminal struct {
	bin string
}

// TestTerminal builds mongobench once and runs it under a pseudo-terminal.
func TestTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it end to end")
	}

	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("these tests look for leftover processes in /proc")
	}

	bin := filepath.Join(t.TempDir(), "mongobench")

	build := exec.Command("go", "build", "-o", bin, "../../cmd/mongobench")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	term := &terminal{bin: bin}

	t.Run("NullServerEndsByItself", term.testNullServer)
	t.Run("EmbeddedEndsByItself", term.testEmbedded)
	t.Run("SIGTERMStopsGracefully", term.testSIGTERM)
	t.Run("SignalsTogetherCountAsOne", term.testSignalsTogether)
	t.Run("LeftoverOfKilledRunRemoved", term.testLeftover)
	t.Run("PostgreSQLTargetStopped", term.testPostgreSQL)
	t.Run("ValidateFIFORefused", term.testValidateFIFO)
	t.Run("ValidateLargeStopsOnSIGINT", term.testValidateLargeStopsOnSIGINT)
	t.Run("ValidateEndlessFileRefused", term.testValidateDevZero)
	t.Run("ClosedOutputPipe", term.testClosedPipe)
	t.Run("ServeStopsOnSIGTERM", term.testServe)
	t.Run("CtrlCKeepsResultsAndSecondRunRefused", term.testCtrlCAndSameOut)
}

// session is one mongobench process in a pseudo-terminal.
type session struct {
	t      *testing.T
	cmd    *exec.Cmd
	tmp    string // the child's TMPDIR
	out    *screen
	ptmx   *os.File // the terminal's controlling side, to type into
	exited chan struct{}
	err    error         // Wait's error, once exited is closed
	copied chan struct{} // closed once the terminal's output is all read
}

// screen collects what the child writes to its terminal.
type screen struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()

	return s.b.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()

	return s.b.String()
}

// start runs mongobench with args in dir, in a 120-column pseudo-terminal,
// with CI unset and TMPDIR set to a directory of the test's own. The child
// is killed, with its process group, if the test ends first.
func (term *terminal) start(t *testing.T, dir string, args ...string) *session {
	t.Helper()

	tmp := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}

	return term.startIn(t, dir, tmp, args...)
}

// startIn is start with the child's TMPDIR given.
func (term *terminal) startIn(t *testing.T, dir, tmp string, args ...string) *session {
	t.Helper()

	cmd := exec.Command(term.bin, args...)
	cmd.Dir = dir

	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "TMPDIR=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}

	cmd.Env = append(cmd.Env, "TMPDIR="+tmp, "TERM=xterm")

	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		t.Fatalf("starting mongobench in a pseudo-terminal: %v", err)
	}

	s := &session{t: t, cmd: cmd, tmp: tmp, out: &screen{}, ptmx: ptmx, exited: make(chan struct{}), copied: make(chan struct{})}

	go func() {
		defer close(s.copied)

		// Ends with an error (EIO on Linux) once the child and all
		// holders of the terminal are gone.
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			_, _ = s.out.Write(buf[:n])

			if err != nil {
				return
			}
		}
	}()

	go func() {
		s.err = cmd.Wait()
		close(s.exited)
	}()

	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			// The child is a session leader: its process group has its PID.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-s.exited
		}

		_ = ptmx.Close()
		<-s.copied
	})

	return s
}

// signal sends sig to the mongobench process.
func (s *session) signal(sig syscall.Signal) {
	s.t.Helper()

	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("sending %v: %v", sig, err)
	}
}

// typeCtrlC types Ctrl-C into the terminal: its line discipline sends
// SIGINT to the foreground process group, as when a person presses it.
func (s *session) typeCtrlC() {
	s.t.Helper()

	if _, err := s.ptmx.Write([]byte{3}); err != nil {
		s.t.Fatalf("typing Ctrl-C: %v", err)
	}
}

// waitOutput waits until the terminal shows text.
func (s *session) waitOutput(text string, limit time.Duration) {
	s.t.Helper()

	deadline := time.Now().Add(limit)
	for !strings.Contains(s.out.String(), text) {
		select {
		case <-s.exited:
			s.t.Fatalf("mongobench exited (%v) before printing %q\n%s", s.err, text, s.out)
		case <-time.After(50 * time.Millisecond):
		}

		if time.Now().After(deadline) {
			s.t.Fatalf("mongobench did not print %q within %s\n%s", text, limit, s.out)
		}
	}
}

// wait waits for the process to exit by itself and returns its exit code;
// past limit the process is killed and the test fails.
func (s *session) wait(limit time.Duration) int {
	s.t.Helper()

	select {
	case <-s.exited:
	case <-time.After(limit):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
		s.t.Fatalf("mongobench did not exit within %s; killed it\n%s", limit, s.out)
	}

	// The last output may still be in the terminal: read it all (the
	// read ends once no process holds the terminal any more).
	select {
	case <-s.copied:
	case <-time.After(10 * time.Second):
		s.t.Errorf("the terminal stayed open 10 s after mongobench exited: a process of its session holds it")
	}

	var ee *exec.ExitError
	if s.err != nil && !errors.As(s.err, &ee) {
		s.t.Fatalf("waiting for mongobench: %v", s.err)
	}

	return s.cmd.ProcessState.ExitCode()
}

// assertClean fails the test if mongobench left a temporary directory in
// its TMPDIR or a process in its session (a launched server, say).
func (s *session) assertClean() {
	s.t.Helper()

	entries, err := os.ReadDir(s.tmp)
	if err != nil {
		s.t.Fatal(err)
	}

	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "mongobench-") {
			s.t.Errorf("left behind in TMPDIR: %s", e.Name())
		}
	}

	// Children that died with mongobench may take a moment to be gone.
	deadline := time.Now().Add(10 * time.Second)

	for {
		left := sessionProcesses(s.cmd.Process.Pid)
		if len(left) == 0 {
			return
		}

		if time.Now().After(deadline) {
			s.t.Errorf("processes of mongobench's session still running: %s", strings.Join(left, "; "))
			return
		}

		time.Sleep(200 * time.Millisecond)
	}
}

// sessionProcesses lists the live processes of session sid (the
// mongobench process led it, as pty.Start makes the child a session
// leader), as "PID (command)".
func sessionProcesses(sid int) []string {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")

	var out []string

	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}

		s := string(b)

		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}

		// Fields after the command: state (3), ppid, pgrp, session (6).
		f := strings.Fields(s[i+1:])
		if len(f) < 4 || f[0] == "Z" || f[0] == "X" || f[3] != strconv.Itoa(sid) {
			continue
		}

		out = append(out, strings.TrimPrefix(s[:strings.IndexByte(s, ' ')], "/")+" "+s[strings.IndexByte(s, '('):i+1])
	}

	return out
}

// writeWorkload writes a workload file in a new directory and returns both.
func writeWorkload(t *testing.T, content string) (dir, path string) {
	t.Helper()

	dir = t.TempDir()
	path = filepath.Join(dir, "w.yaml")

	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}

	return dir, path
}

// startNullServer starts the wiretest server for the test.
func startNullServer(t *testing.T) string {
	t.Helper()

	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	return srv.URI()
}

// readStatus reads a results file and returns its status.
func readStatus(t *testing.T, path string, screen fmt.Stringer) string {
	t.Helper()

	res, err := result.Read(context.Background(), path)
	if err != nil {
		t.Fatalf("no results file: %v\n%s", err, screen)
	}

	return res.Status
}

// assertCompleted checks a run that ended by itself.
func assertCompleted(t *testing.T, s *session, code int, out string) {
	t.Helper()

	screen := s.out.String()

	if code != 0 {
		t.Errorf("exit code %d, want 0\n%s", code, screen)
	}

	if !strings.Contains(screen, "operation") || !strings.Contains(screen, "p99") {
		t.Errorf("the terminal shows no results table\n%s", screen)
	}

	if st := readStatus(t, out, s.out); st != result.StatusCompleted {
		t.Errorf("status %q, want %q", st, result.StatusCompleted)
	}

	s.assertClean()
}

func (term *terminal) testNullServer(t *testing.T) {
	dir, w := writeWorkload(t, nullWorkload)
	out := filepath.Join(dir, "r.json")

	s := term.start(t, dir, "run", w, "--uri", startNullServer(t), "--no-explain", "--server-stats-interval", "0", "--out", out)
	code := s.wait(runLimit)

	assertCompleted(t, s, code, out)
}

func (term *terminal) testEmbedded(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	w, err := filepath.Abs("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}

	s := term.start(t, dir, "run", w, "--out", out)
	code := s.wait(runLimit)

	assertCompleted(t, s, code, out)

	if !strings.Contains(s.out.String(), "embedded FerretDB") {
		t.Errorf("the run did not use the embedded server\n%s", s.out)
	}
}

// interruptedRun starts a 30 s run on the embedded server, waits for a
// measured interval, sends sigs at once, and checks that it stopped
// gracefully: exit code 1, results written with status interrupted, and
// nothing left behind.
func (term *terminal) interruptedRun(t *testing.T, sigs ...syscall.Signal) *session {
	t.Helper()

	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	w, err := filepath.Abs("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}

	s := term.start(t, dir, "run", w, "--duration", "30s", "--out", out)

	// "ops/s" appears in the bar once an interval has been measured.
	s.waitOutput("ops/s", runLimit)

	started := time.Now()
	for _, sig := range sigs {
		s.signal(sig)
	}

	code := s.wait(stopLimit)
	screen := s.out.String()

	if code != 1 {
		t.Errorf("exit code %d, want 1\n%s", code, screen)
	}

	if strings.Contains(screen, "Exiting at once") {
		t.Errorf("the stop was not graceful\n%s", screen)
	}

	if d := time.Since(started); d > 20*time.Second {
		t.Errorf("the stop took %s, more than mongobench's own bound", d)
	}

	if st := readStatus(t, out, s.out); st != result.StatusInterrupted {
		t.Errorf("status %q, want %q", st, result.StatusInterrupted)
	}

	s.assertClean()

	return s
}

func (term *terminal) testSIGTERM(t *testing.T) {
	s := term.interruptedRun(t, syscall.SIGTERM)

	if screen := s.out.String(); !strings.Contains(screen, "Interrupted (SIGTERM)") || !strings.Contains(screen, "Stopping: stopping the embedded server") {
		t.Errorf("the terminal does not say what the stop does\n%s", screen)
	}
}

// testSignalsTogether sends SIGINT and SIGTERM at once, as Ctrl-C under GNU
// timeout does: one request, so the run still stops gracefully.
func (term *terminal) testSignalsTogether(t *testing.T) {
	term.interruptedRun(t, syscall.SIGINT, syscall.SIGTERM)
}

// testLeftover plants the directory a SIGKILLed run would leave (marked with
// a PID that no longer runs) and one without a mark: the next run removes
// the first and names the second with the command to remove it.
func (term *terminal) testLeftover(t *testing.T) {
	tmp := filepath.Join(t.TempDir(), "tmp")

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}

	stale := filepath.Join(tmp, "mongobench-ferretdb-4242")
	unmarked := filepath.Join(tmp, "mongobench-postgres-17")

	for _, d := range []string{stale, unmarked} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}

		if err := os.WriteFile(filepath.Join(d, "data.sqlite"), make([]byte, 64<<10), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	mark := fmt.Sprintf("pid %d\nstart 1\n", dead.Process.Pid)
	if err := os.WriteFile(filepath.Join(stale, ".mongobench-owner"), []byte(mark), 0o600); err != nil {
		t.Fatal(err)
	}

	dir, w := writeWorkload(t, nullWorkload)
	out := filepath.Join(dir, "r.json")

	s := term.startIn(t, dir, tmp, "run", w, "--uri", startNullServer(t), "--no-explain", "--server-stats-interval", "0", "--out", out)
	if code := s.wait(runLimit); code != 0 {
		t.Fatalf("exit code %d\n%s", code, s.out)
	}

	screen := s.out.String()

	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the leftover of a dead process is still there (%v)\n%s", err, screen)
	}

	if !strings.Contains(screen, "Removed 1 temporary directory left by killed mongobench runs (64.0 KiB): "+stale) {
		t.Errorf("the run does not say what it removed\n%s", screen)
	}

	if _, err := os.Stat(unmarked); err != nil {
		t.Errorf("the unmarked directory was removed: %v", err)
	}

	if !strings.Contains(screen, "rm -rf -- "+unmarked) {
		t.Errorf("the run does not give the command to remove the unmarked directory\n%s", screen)
	}
}

// testPostgreSQL stops a ferretdb-postgres run with SIGTERM: PostgreSQL,
// a child process, must be stopped and its directory removed.
func (term *terminal) testPostgreSQL(t *testing.T) {
	pglaunchtest.Require(t) // fails instead of skipping under CI

	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	w, err := filepath.Abs("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}

	// PostgreSQL, when mongobench runs as root, runs as the postgres user,
	// which must be able to enter the temporary directory.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}

	for d := tmp; d != "/"; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
			_ = os.Chmod(d, st.Mode().Perm()|0o001)
		}
	}

	s := term.startIn(t, dir, tmp, "run", w, "--target", "ferretdb-postgres", "--duration", "30s", "--no-explain", "--out", out)
	s.waitOutput("ops/s", runLimit)
	s.signal(syscall.SIGTERM)

	if code := s.wait(stopLimit); code != 1 {
		t.Errorf("exit code %d, want 1\n%s", code, s.out)
	}

	s.assertClean()
}

// testValidateFIFO validates a named pipe nobody writes to: validate must
// refuse it at once with a one-line error and exit code 2, not wait on it
// until Ctrl-C.
func (term *terminal) testValidateFIFO(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "w.yaml")

	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}

	t.Cleanup(func() {
		if w, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})

	s := term.start(t, dir, "validate", pipe)
	if code := s.wait(stopLimit); code != 2 {
		t.Errorf("exit code %d, want 2\n%s", code, s.out)
	}

	if !strings.Contains(s.out.String(), pipe+": is a named pipe, not a file") {
		t.Errorf("no one-line message naming the pipe\n%s", s.out)
	}
}

// testValidateDevZero validates /dev/zero, endless: it must be refused
// at once with a one-line message, not read.
func (term *terminal) testValidateDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}

	s := term.start(t, t.TempDir(), "validate", "/dev/zero")
	if code := s.wait(stopLimit); code != 2 {
		t.Errorf("exit code %d, want 2\n%s", code, s.out)
	}

	if !strings.Contains(s.out.String(), "/dev/zero: is a device, not a file") {
		t.Errorf("no message naming the file as a device\n%s", s.out)
	}
}

// testValidateLargeStopsOnSIGINT validates a workload of nearly the 4 MiB
// limit, whose parsing and compiling take seconds, and presses Ctrl-C once
// validate says it is working on it: validate must stop then, with exit
// code 1 and a line saying so, not finish the validation first (it used to
// ignore the signal until done, and say "ok").
func (term *terminal) testValidateLargeStopsOnSIGINT(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "large.yaml")

	var b strings.Builder

	b.WriteString("name: large\ndatabase: mongobench_large\ncollections: [{name: items}]\noperations:\n")

	for i := 0; b.Len() < 3900<<10; i++ {
		fmt.Fprintf(&b, "  - name: op%d\n    op: insertOne\n    collection: items\n    document: {a: {^int: {min: 1, max: 9}}, b: {^string: {length: 8}}, c: [1, 2, 3]}\n", i)
	}

	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	s := term.start(t, dir, "validate", path)
	s.waitOutput("Validating "+path, runLimit)
	s.signal(syscall.SIGINT)

	if code := s.wait(stopLimit); code != 1 {
		t.Errorf("exit code %d, want 1\n%s", code, s.out)
	}

	out := s.out.String()
	if !strings.Contains(out, "Interrupted (SIGINT): stopping; validating "+path) || !strings.Contains(out, "interrupted while reading "+path) {
		t.Errorf("validate does not say what it stopped\n%s", out)
	}

	if strings.Contains(out, path+": ok") {
		t.Errorf("validate finished despite the interrupt\n%s", out)
	}
}

// testClosedPipe runs mongobench with its output into a pipe whose reader
// goes away after the first line (mongobench run ... | head -1): the run
// must neither die of SIGPIPE nor leave its directory behind, and still
// write its results.
func (term *terminal) testClosedPipe(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	tmp := filepath.Join(dir, "tmp")

	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}

	w, err := filepath.Abs("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}

	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(term.bin, "run", w, "--out", out)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "CI=1")
	cmd.Stdout, cmd.Stderr = pw, pw

	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}

	pw.Close()

	// Read one byte, then close the reading end: later writes fail.
	if _, err := r.Read(make([]byte, 1)); err != nil {
		t.Fatalf("no output: %v", err)
	}

	r.Close()

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("mongobench with a closed output pipe: %v (%s)", err, cmd.ProcessState)
		}
	case <-time.After(runLimit):
		_ = cmd.Process.Kill()
		if err := <-exited; err == nil {
			t.Errorf("mongobench exited cleanly only when killed after %s", runLimit)
		}
		t.Fatalf("mongobench did not exit within %s", runLimit)
	}

	if st := readStatus(t, out, &screen{}); st != result.StatusCompleted {
		t.Errorf("status %q, want %q", st, result.StatusCompleted)
	}

	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}

	for _, e := range entries {
		t.Errorf("left behind in TMPDIR: %s", e.Name())
	}
}

// testServe starts `mongobench serve`, stores a document through the
// connection string it prints, and stops it with SIGTERM: exit 0, and
// neither its data directory nor a process is left.
func (term *terminal) testServe(t *testing.T) {
	s := term.start(t, t.TempDir(), "serve")
	s.waitOutput("Ctrl-C stops it", 60*time.Second)

	uri := ""

	for _, line := range strings.Split(s.out.String(), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "mongodb://") {
			uri = line
		}
	}

	if uri == "" {
		t.Fatalf("serve printed no connection string\n%s", s.out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}

	coll := client.Database("servetest").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: "x"}}); err != nil {
		t.Fatalf("inserting through %s: %v", uri, err)
	}

	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("counting through %s: %d, %v", uri, n, err)
	}

	_ = client.Disconnect(ctx)

	s.signal(syscall.SIGTERM)

	if code := s.wait(stopLimit); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0\n%s", code, s.out)
	}

	s.assertClean()
}

// lines returns the non-empty lines a terminal showed, without carriage
// returns.
func lines(screen string) []string {
	var out []string

	for _, l := range strings.Split(strings.ReplaceAll(screen, "\r", ""), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}

	return out
}

// testCtrlCAndSameOut meets three of a person's ways to lose a run (issue
// "Nothing lost"), in terminals: a second run given the --out of a run in
// progress is refused at once with exit 2 and one line, leaving the first
// run's files alone; Ctrl-C typed into the first run's terminal stops it
// gracefully with a results file, and the terminal says where it is; and
// `report r.json -o r.json` is refused instead of replacing its input.
func (term *terminal) testCtrlCAndSameOut(t *testing.T) {
	dir, w := writeWorkload(t, strings.Replace(nullWorkload, "duration: 2s", "duration: 5m", 1))
	out := filepath.Join(dir, "r.json")
	uri := startNullServer(t)

	first := term.start(t, dir, "run", w, "--uri", uri, "--no-explain", "--server-stats-interval", "0", "--out", out)

	// "ops/s" appears in the bar once an interval has been measured.
	first.waitOutput("ops/s", runLimit)

	second := term.start(t, dir, "run", w, "--uri", uri, "--no-explain", "--server-stats-interval", "0", "--out", out)
	if code := second.wait(stopLimit); code != 2 {
		t.Errorf("a second run with the same --out: exit code %d, want 2\n%s", code, second.out)
	}

	if l := lines(second.out.String()); len(l) != 1 || !strings.Contains(l[0], "r.json") {
		t.Errorf("a second run with the same --out: want one line naming the file, got %d:\n%s", len(l), second.out)
	}

	first.typeCtrlC()

	if code := first.wait(stopLimit); code != 1 {
		t.Errorf("Ctrl-C: exit code %d, want 1\n%s", code, first.out)
	}

	if st := readStatus(t, out, first.out); st != result.StatusInterrupted {
		t.Errorf("Ctrl-C: status %q, want %q", st, result.StatusInterrupted)
	}

	if screen := first.out.String(); !strings.Contains(screen, "Results written to "+out) {
		t.Errorf("Ctrl-C: the terminal does not say where the results are\n%s", screen)
	}

	first.assertClean()

	before, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}

	rep := term.start(t, dir, "report", out, "-o", out)
	if code := rep.wait(runLimit); code != 2 {
		t.Errorf("report r.json -o r.json: exit code %d, want 2\n%s", code, rep.out)
	}

	if after, err := os.ReadFile(out); err != nil || string(after) != string(before) {
		t.Errorf("report r.json -o r.json changed its input (%v)", err)
	}
}
