// Package cli implements mongobench's commands: it parses flags, shows
// progress and messages, and prints what the other packages computed. A
// benchmark is run by package bench and analysed by package analysis; cli
// turns a workload and its flags into a bench.Plan and prints the result,
// and talks to no server itself. All access to the operating system
// (arguments, standard streams, environment, signals, exit) goes through a
// State, so that commands run end to end in-process in tests.
package cli

import (
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/mongobench/mongobench/internal/base/redact"
)

// State is everything a command may take from or give to the operating
// system.
type State struct {
	// Args are the command-line arguments without the program name.
	Args []string

	// Stdout receives results (tables); Stderr receives progress and
	// messages, so that results can be piped.
	Stdout io.Writer
	Stderr io.Writer

	// Getenv reads an environment variable.
	Getenv func(key string) string

	// StderrIsTerminal enables the live progress bar.
	StderrIsTerminal bool

	// Signals delivers interrupt requests (SIGINT from Ctrl-C, SIGTERM,
	// SIGHUP). The first one stops a command gracefully; one arriving more
	// than a second later exits at once through Exit.
	Signals <-chan os.Signal

	// StopSignals releases the signal subscription.
	StopSignals func()

	// Exit ends the process; only a second interrupt or a stop that takes
	// too long uses it, since commands otherwise return their exit code.
	Exit func(code int)

	// Now is the clock used for file names and timestamps.
	Now func() time.Time

	// ProcessCPU is this process's CPU time so far, with which capacity
	// judges whether mongobench's own process was the limit of a step; nil
	// reads it from the operating system. Tests, whose process also runs
	// the servers and several commands at once, pass their own.
	ProcessCPU func() time.Duration

	// Serve is the command that runs this program's serve command (the
	// running executable and "serve"), with which a run's durability
	// phase starts an embedded server it can crash; nil leaves the
	// embedded kinds out of that phase (tests of this package, whose
	// executable is the test binary).
	Serve []string

	// hooks run on a forced exit (second interrupt), when deferred cleanup
	// will not run: they remove temporary directories.
	hooksMu sync.Mutex
	hooks   []func()

	// steps says what the command is doing, for the messages of an
	// interrupt.
	steps shutdownSteps

	// masks wrap Stdout and Stderr (see Main) to mask values known to be
	// secret only once a command has read them: a workload's secret
	// parameters, which ${name} may have put into any message.
	masks []*redact.Stream
	// barStderr is Stderr unwrapped, for the live progress bar only: it
	// must be the terminal itself for the bar to find its size and
	// redraw, and it shows phase names and figures, never a parameter's
	// value; nothing it draws is kept.
	barStderr io.Writer
}

// maskStreams wraps Stdout and Stderr in masking streams; Main calls it
// before anything is printed.
func (st *State) maskStreams() {
	out, errOut := redact.NewStream(st.Stdout), redact.NewStream(st.Stderr)
	st.barStderr = st.Stderr
	st.Stdout, st.Stderr, st.masks = out, errOut, []*redact.Stream{out, errOut}
}

// maskValues masks values in everything printed from now on.
func (st *State) maskValues(values []string) {
	k := redact.KnownValues(values...)
	for _, m := range st.masks {
		m.Add(k)
	}
}

// onHardExit registers a cleanup for a forced exit and returns a function
// that unregisters it once the normal cleanup has run.
func (st *State) onHardExit(f func()) func() {
	st.hooksMu.Lock()
	defer st.hooksMu.Unlock()

	i := len(st.hooks)
	st.hooks = append(st.hooks, f)

	return func() {
		st.hooksMu.Lock()
		defer st.hooksMu.Unlock()

		// The hooks may have run (and been cleared) already.
		if i < len(st.hooks) {
			st.hooks[i] = nil
		}
	}
}

func (st *State) runHardExitHooks() {
	st.hooksMu.Lock()
	hooks := st.hooks
	st.hooks = nil
	st.hooksMu.Unlock()

	for _, f := range hooks {
		if f != nil {
			f()
		}
	}
}

// NewOSState returns the State of the real process.
func NewOSState() *State {
	// Room for a burst: timeout(1) and a terminal may deliver one request
	// as several signals at once.
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)

	// A closed output pipe (mongobench run ... | head) would otherwise kill
	// the process on its next message, leaving the embedded server's
	// directory behind. Subscribed to (the channel is never read, and a
	// full one drops signals), SIGPIPE only makes the write fail, and the
	// run goes on to its end and cleans up. Unlike ignoring it, this leaves
	// launched servers with the default disposition.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)

	return &State{
		Args:             os.Args[1:],
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		Getenv:           os.Getenv,
		StderrIsTerminal: barTerminal(os.Stderr),
		Signals:          sig,
		StopSignals:      func() { signal.Stop(sig) },
		Serve:            serveCommand(),
		Exit:             os.Exit,
		Now:              time.Now,
	}
}

// barTerminal reports whether f is a terminal a progress bar can be drawn
// on: one that knows its width. A pseudo-terminal whose parent is no
// terminal (script(1) run from a pipe, some CI runners) reports zero
// columns, and the bar would draw nothing at all; plain lines serve there.
func barTerminal(f *os.File) bool {
	fd := int(f.Fd()) //nolint:gosec // file descriptors fit in int
	if !term.IsTerminal(fd) {
		return false
	}

	width, _, err := term.GetSize(fd)

	return err == nil && width > 0
}

// serveCommand is this executable's serve command, nil when the executable
// cannot be found.
func serveCommand() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}

	return []string{exe, "serve"}
}
