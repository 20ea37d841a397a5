package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// Config is what starting an adapter needs.
type Config struct {
	// Stack is the stack to run; Command starts its adapter (nil: the
	// stack's family's installed command, see Installed).
	Stack   Stack
	Command []string

	// URI and Database are where the adapter connects; the URI is never
	// written anywhere but to the adapter's standard input.
	URI, Database string

	// Spec and Ops are the workload and its compiled operations; an
	// operation's protocol id is its index in Ops.
	Spec *workload.Spec
	Ops  []*op.Operation

	// Profile, when not empty, asks the adapter for a CPU profile written
	// with this path prefix.
	Profile string

	// LogDir receives the adapter's standard error, sanitized.
	LogDir string

	// Env are extra environment variables of the adapter.
	Env []string

	// Handshake bounds the wait for the adapter's ready line (0: 60s, a
	// cold interpreter that loads an ODM and connects).
	Handshake time.Duration
}

// Adapter is a running adapter process and the protocol's Go side. One
// goroutine drives it (the runner's external executor); replies are read
// by a goroutine of its own so that the adapter never blocks writing.
type Adapter struct {
	stack Stack
	cmd   *exec.Cmd

	inMu sync.Mutex
	in   *bufio.Writer
	pipe io.WriteCloser

	// replies are the adapter's lines not yet taken, in order; readErr
	// ends them (malformed line, end of output).
	mu      sync.Mutex
	queue   []Reply
	readErr error
	wake    chan struct{}

	exited  chan struct{} // closed when the process has exited
	waitErr error

	log *stderrLog

	// Versions are the runtime's and libraries' versions the adapter
	// reported at ready.
	Versions map[string]string

	ids map[string]int

	// failed is set once an error pointed to the log, which is then kept.
	failed atomic.Bool

	closeOnce sync.Once
}

// Reply is one line from the adapter, as the runner sees it.
type Reply struct {
	// Type is need, done, stopped or fatal.
	Type string

	// Worker is the worker of a need or done line.
	Worker int

	// Records are a done line's finished operations.
	Records []Record

	// Starved is a stopped line's count of waits on an empty queue.
	Starved int64

	// Message is a fatal line's message.
	Message string

	// Stack and Versions are a ready line's stack and versions.
	Stack    string
	Versions map[string]string
}

// Record is one finished operation: its protocol id, its start in
// nanoseconds since the phase line was received, its latency, the
// documents it returned or wrote, and its error (nil: success).
type Record = doneRecord

// FatalError is the adapter's own account of why it cannot go on.
type FatalError struct {
	Stack   string
	Message string
}

func (e *FatalError) Error() string { return fmt.Sprintf("client %s: %s", e.Stack, e.Message) }

// Start starts the adapter, sends init and waits for ready. On any failure
// the process is stopped and the error says why in one line (a fatal
// reply's message, or the last line of the adapter's standard error) and
// where the full log is.
func Start(ctx context.Context, cfg Config) (*Adapter, error) {
	if len(cfg.Command) == 0 {
		return nil, fmt.Errorf("client %s: no command to start its adapter", cfg.Stack.Name)
	}

	init, err := initOf(cfg)
	if err != nil {
		return nil, err
	}

	log, err := newStderrLog(cfg.LogDir, cfg.Stack.Name, cfg.URI)
	if err != nil {
		return nil, err
	}

	//nolint:gosec // the command is the installed adapter of a registered stack
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Stderr = log
	cmd.SysProcAttr = procAttr()
	cmd.Env = append(os.Environ(), cfg.Env...)

	// An adapter that never started has no log worth keeping.
	discard := func(err error) error {
		log.close()
		_ = os.Remove(log.path)

		return fmt.Errorf("client %s: starting %s: %w", cfg.Stack.Name, cfg.Command[0], err)
	}

	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, discard(err)
	}

	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, discard(err)
	}

	if err := cmd.Start(); err != nil {
		return nil, discard(err)
	}

	a := &Adapter{
		stack: cfg.Stack, cmd: cmd, in: bufio.NewWriterSize(stdin, 1<<16), pipe: stdin,
		wake: make(chan struct{}, 1), exited: make(chan struct{}), log: log, ids: map[string]int{},
	}
	for i, o := range cfg.Ops {
		a.ids[o.Name()] = i
	}

	// The reader waits for the process once it has read its output: Wait
	// closes the pipe, so it must not run while the output is read.
	go a.read(stdout)

	if err := a.handshake(ctx, init, orDefault(cfg.Handshake, 60*time.Second)); err != nil {
		a.Kill()
		return nil, err
	}

	return a, nil
}

// initOf is the init message of cfg.
func initOf(cfg Config) (*initMessage, error) {
	colls, err := collectionsInit(cfg.Spec, cfg.Stack.ODM)
	if err != nil {
		return nil, err
	}

	names := make([]string, len(cfg.Ops))
	for i, o := range cfg.Ops {
		names[i] = o.Name()
	}

	init := &initMessage{
		Type: msgInit, Protocol: ProtocolVersion, Stack: cfg.Stack.Name, URI: cfg.URI, Database: cfg.Database,
		TimeoutMS: cfg.Spec.Run.Timeout.D().Milliseconds(), Collections: colls, Operations: operationsInit(cfg.Ops, names),
	}
	if cfg.Profile != "" {
		init.Profile = &cfg.Profile
	}

	return init, nil
}

// orDefault is d, or def when d is not positive.
func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}

	return def
}

// handshake sends init and waits for ready.
func (a *Adapter) handshake(ctx context.Context, init *initMessage, bound time.Duration) error {
	if err := a.send(init); err != nil {
		return a.failure("sending init", err)
	}

	timer := time.NewTimer(bound)
	defer timer.Stop()

	for {
		r, ok, err := a.next()

		switch {
		case err != nil:
			return a.failure("during the handshake", err)
		case ok && r.Type == msgReady && r.Stack != a.stack.Name:
			return a.failure("during the handshake", fmt.Errorf("the adapter is ready for stack %q instead", r.Stack))
		case ok && r.Type == msgReady:
			a.Versions = r.Versions
			return nil
		case ok && r.Type == msgFatal:
			return &FatalError{Stack: a.stack.Name, Message: a.log.mask(r.Message)}
		case ok:
			return a.failure("during the handshake", fmt.Errorf("expected ready, got %q", r.Type))
		}

		select {
		case <-ctx.Done():
			return fmt.Errorf("client %s: interrupted while its adapter started", a.stack.Name)
		case <-timer.C:
			return a.failure("", fmt.Errorf("no ready line within %s", bound))
		case <-a.wake:
		}
	}
}

// Stack is the adapter's stack.
func (a *Adapter) Stack() Stack { return a.stack }

// OpID returns the protocol id of the operation called name.
func (a *Adapter) OpID(name string) (int, bool) {
	id, ok := a.ids[name]
	return id, ok
}

// Wake is signalled when replies may be waiting (or the adapter ended).
func (a *Adapter) Wake() <-chan struct{} { return a.wake }

// Next returns the next reply when one is waiting (ok), or the error that
// ended the adapter's output: a malformed line, or the process's end with
// the last line of its log.
func (a *Adapter) Next() (Reply, bool, error) {
	r, ok, err := a.next()
	if err != nil {
		return r, ok, a.failure("", err)
	}

	if ok && r.Type == msgFatal {
		return r, ok, &FatalError{Stack: a.stack.Name, Message: a.log.mask(r.Message)}
	}

	return r, ok, nil
}

func (a *Adapter) next() (Reply, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()

	if len(a.queue) > 0 {
		r := a.queue[0]
		a.queue = a.queue[1:]

		return r, true, nil
	}

	return Reply{}, false, a.readErr
}

// read parses the adapter's lines into the queue until its output ends.
func (a *Adapter) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<16), 256<<20)

	var err error

	for sc.Scan() {
		if r, ok := parseReply(sc.Bytes()); ok {
			a.push(r)
			continue
		}

		var r reply
		if jerr := json.Unmarshal(sc.Bytes(), &r); jerr != nil || r.Type == "" {
			line := sc.Text()
			if len(line) > 200 {
				line = line[:200] + "…"
			}

			// Masked as the log is: the exact connection string first,
			// which catches a password the generic masking cannot.
			err = fmt.Errorf("malformed line from the adapter: %q", a.log.mask(line))

			break
		}

		a.push(Reply{Type: r.Type, Worker: r.Worker, Records: r.R, Starved: r.Starved, Message: r.Message, Versions: r.Versions, Stack: r.Stack})
	}

	if err == nil {
		err = sc.Err()
	}

	if err != nil {
		// A malformed line or a read error: say so now, then drain the
		// output so that the adapter never blocks writing, until it ends
		// (exit, or the kill that follows the error).
		a.setReadErr(err)
		_, _ = io.Copy(io.Discard, stdout)
	}

	a.waitErr = a.cmd.Wait()
	a.log.close()
	close(a.exited)

	if err == nil {
		// The output ended with the process: the error says how.
		err = errors.New("the adapter exited")
		if a.waitErr != nil {
			err = fmt.Errorf("the adapter exited: %w", a.waitErr)
		}

		a.setReadErr(err)
	}
}

// setReadErr ends the replies with err and wakes the reader of Next.
func (a *Adapter) setReadErr(err error) {
	a.mu.Lock()
	a.readErr = err
	a.mu.Unlock()
	a.signal()
}

func (a *Adapter) push(r Reply) {
	a.mu.Lock()
	a.queue = append(a.queue, r)
	a.mu.Unlock()
	a.signal()
}

func (a *Adapter) signal() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// send writes one message as a line.
func (a *Adapter) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}

	return a.writeLine(b)
}

func (a *Adapter) writeLine(b []byte) error {
	a.inMu.Lock()
	defer a.inMu.Unlock()

	_, err := a.in.Write(b)
	if err == nil {
		err = a.in.WriteByte('\n')
	}

	if err == nil {
		err = a.in.Flush()
	}

	if err != nil {
		return a.writeFailure(err)
	}

	return nil
}

// writeFailure describes a failed write: most often the adapter has
// exited (its standard input is closed), which is what the message must
// say, with its log, rather than the pipe's error.
func (a *Adapter) writeFailure(err error) error {
	select {
	case <-a.exited:
		err = errors.New("the adapter exited")
		if a.waitErr != nil {
			err = fmt.Errorf("the adapter exited: %w", a.waitErr)
		}
	case <-time.After(2 * time.Second):
		err = fmt.Errorf("writing to the adapter: %w", err)
	}

	return a.failure("", err)
}

// Phase starts a measured phase of workers closed-loop workers.
func (a *Adapter) Phase(name string, workers int) error {
	return a.send(phaseMessage(name, workers))
}

// OpsLine builds the ops line of worker from encoded operations: each
// entry is an operation's protocol id and its arguments as AppendJSON
// wrote them.
type OpsLine struct {
	buf []byte
	n   int
}

// Begin starts a line for worker, reusing the buffer.
func (l *OpsLine) Begin(worker int) {
	l.buf = append(l.buf[:0], `{"type":"ops","worker":`...)
	l.buf = strconv.AppendInt(l.buf, int64(worker), 10)
	l.buf = append(l.buf, `,"ops":[`...)
	l.n = 0
}

// Add appends one operation.
func (l *OpsLine) Add(id int, args *op.Args) error {
	mark := len(l.buf)
	if l.n > 0 {
		l.buf = append(l.buf, ',')
	}

	l.buf = append(l.buf, '[')
	l.buf = strconv.AppendInt(l.buf, int64(id), 10)
	l.buf = append(l.buf, ',')

	if b, ok := appendArgs(l.buf, args); ok {
		l.buf = b
	} else {
		b, err := args.AppendJSON(l.buf)
		if err != nil {
			l.buf = l.buf[:mark]
			return err
		}

		l.buf = b
	}

	l.buf = append(l.buf, ']')
	l.n++

	return nil
}

// Len is the number of operations and the size of the line so far.
func (l *OpsLine) Len() (ops, bytes int) { return l.n, len(l.buf) }

// SendOps sends the line.
func (a *Adapter) SendOps(l *OpsLine) error {
	l.buf = append(l.buf, ']', '}')
	return a.writeLine(l.buf)
}

// Stop asks the adapter to finish the phase; its stopped reply follows the
// last done lines.
func (a *Adapter) Stop() error {
	return a.send(typeOnly{msgStop})
}

// Close ends the adapter: exit, then a kill if it has not exited within
// bound (its profile is written before it exits). The log of an adapter
// that never failed and exited cleanly is removed: logs are kept for the
// failures that messages point to.
func (a *Adapter) Close(bound time.Duration) {
	a.closeOnce.Do(func() {
		// The timer runs from now: an adapter that stopped reading its
		// input would block the write of exit, which Kill (closing the
		// pipe) then ends.
		deadline := time.After(bound)

		go func() {
			_ = a.send(typeOnly{msgExit})
			_ = a.pipe.Close()
		}()

		select {
		case <-a.exited:
			if a.waitErr == nil && !a.failed.Load() {
				_ = os.Remove(a.log.path)
			}
		case <-deadline:
			a.Kill()
		}
	})
}

// Kill kills the adapter's process (and, on Unix, its process group) and
// waits for it, at most a few seconds.
func (a *Adapter) Kill() {
	killProcess(a.cmd)
	_ = a.pipe.Close()

	select {
	case <-a.exited:
	case <-time.After(5 * time.Second):
	}
}

// Exited is closed when the adapter's process has ended.
func (a *Adapter) Exited() <-chan struct{} { return a.exited }

// PID is the adapter's process id.
func (a *Adapter) PID() int { return a.cmd.Process.Pid }

// LogPath is the file holding the adapter's standard error, sanitized.
func (a *Adapter) LogPath() string { return a.log.path }

// failure describes an adapter failure in one line: what happened, the
// last line of its log, and where the full log is.
func (a *Adapter) failure(when string, err error) error {
	a.failed.Store(true)

	msg := fmt.Sprintf("client %s: %v", a.stack.Name, err)
	if when != "" {
		msg = fmt.Sprintf("client %s: %s: %v", a.stack.Name, when, err)
	}

	if last := a.log.lastLine(); last != "" {
		msg += ": " + last
	}

	return fmt.Errorf("%s (full log: %s)", msg, a.log.path)
}

// stderrLog writes the adapter's standard error to a file, sanitized line
// by line, and keeps its last non-empty line for messages.
type stderrLog struct {
	path string
	uri  string

	mu      sync.Mutex
	f       *os.File
	partial []byte
	last    string
}

func newStderrLog(dir, stack, uri string) (*stderrLog, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("client %s: creating the log directory: %w", stack, err)
	}

	f, err := os.CreateTemp(dir, stack+"-"+time.Now().UTC().Format("20060102T150405Z")+"-*.log")
	if err != nil {
		return nil, fmt.Errorf("client %s: creating its log: %w", stack, err)
	}

	return &stderrLog{path: f.Name(), uri: uri, f: f}, nil
}

// Write masks and writes whole lines, keeping a partial line for later.
func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()

	l.partial = append(l.partial, p...)

	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}

		l.line(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}

	return len(p), nil
}

// line writes one sanitized line.
func (l *stderrLog) line(s string) {
	s = l.mask(s)
	if t := strings.TrimSpace(s); t != "" {
		l.last = t
		if len(l.last) > 300 {
			l.last = l.last[:300] + "…"
		}
	}

	if l.f != nil {
		_, _ = l.f.WriteString(s + "\n")
	}
}

// mask removes the connection string's secrets: the exact URI first (a
// password with spaces would escape the generic masking), then anything
// that looks like a secret.
func (l *stderrLog) mask(s string) string {
	if l.uri != "" {
		s = strings.ReplaceAll(s, l.uri, redact.URI(l.uri))
	}

	return redact.Text(s)
}

func (l *stderrLog) lastLine() string {
	l.mu.Lock()
	defer l.mu.Unlock()

	if len(l.partial) > 0 {
		if t := strings.TrimSpace(l.mask(string(l.partial))); t != "" {
			return t
		}
	}

	return l.last
}

func (l *stderrLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()

	if len(l.partial) > 0 {
		l.line(string(l.partial))
		l.partial = nil
	}

	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

// DefaultLogDir is where adapters' logs go: the cache's logs directory.
func DefaultLogDir(cache string) string { return filepath.Join(cache, "logs") }
