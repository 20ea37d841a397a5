package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

const (
	// signalBurst is how long after the first interrupt further signals
	// count as the same request. GNU timeout sends SIGTERM both to the
	// process and to its process group, and a terminal's Ctrl-C reaches
	// every process of the foreground group, so one request often arrives
	// as two signals at once; only a signal sent later means "exit now".
	signalBurst = time.Second

	// shutdownLimit bounds a graceful stop: after it, the process removes
	// its temporary directories, stops its servers and exits as on a
	// second interrupt.
	shutdownLimit = 10 * time.Second
)

// shutdownSteps says what a command is doing, so that an interrupt can tell
// the user what the stop waits for. Its zero value is ready to use.
type shutdownSteps struct {
	mu          sync.Mutex
	step        string
	interrupted bool

	// above, when not nil, is the live progress display: messages of the
	// stop go through it, above the bar, so that its redraw does not
	// erase them.
	above io.Writer

	// unsaved is the run log (or a comparison's trials directory) whose
	// results file is not written yet: a forced exit names it and the
	// finish command that builds the results from it.
	unsaved string

	// burst and limit override signalBurst and shutdownLimit when not
	// zero (tests use tiny ones).
	burst time.Duration
	limit time.Duration
}

// setStep records what the command does now; once interrupted, each step is
// printed as it starts, so that a slow stop is never silent.
func (st *State) setStep(format string, args ...any) {
	step := fmt.Sprintf(format, args...)

	st.steps.mu.Lock()
	st.steps.step = step
	interrupted := st.steps.interrupted
	st.steps.mu.Unlock()

	if interrupted {
		st.say("Stopping: %s\n", step)
	}
}

// setUnsaved records the run log a forced exit would leave without its
// results file; "" once the results are written.
func (st *State) setUnsaved(path string) {
	st.steps.mu.Lock()
	st.steps.unsaved = path
	st.steps.mu.Unlock()
}

// sayUnsaved tells, on a forced exit before the results were written (or
// a failure to write them), which run log keeps the measurements and how to
// build the results.
func (st *State) sayUnsaved() {
	st.steps.mu.Lock()
	path := st.steps.unsaved
	st.steps.mu.Unlock()

	if path != "" {
		st.say("No results file was written; the measurements are in %s. Build the results with:\n  mongobench finish %s\n", path, path)
	}
}

// say prints a message of the stop on standard error, above the progress
// bar while one is drawn.
func (st *State) say(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)

	st.steps.mu.Lock()
	above := st.steps.above
	st.steps.mu.Unlock()

	if above != nil {
		if _, err := above.Write([]byte(msg)); err == nil {
			return
		}
	}

	fmt.Fprint(st.Stderr, msg)
}

// drawAbove routes the messages of a stop through w, a live progress
// display, until the returned function is called.
func (st *State) drawAbove(w io.Writer) func() {
	st.steps.mu.Lock()
	st.steps.above = w
	st.steps.mu.Unlock()

	return func() {
		st.steps.mu.Lock()
		if st.steps.above == w {
			st.steps.above = nil
		}
		st.steps.mu.Unlock()
	}
}

// markInterrupted flags the command as stopping and returns its current
// step.
func (st *State) markInterrupted() string {
	st.steps.mu.Lock()
	defer st.steps.mu.Unlock()

	st.steps.interrupted = true

	return st.steps.step
}

// signalBurst returns the window in which signals count as one request.
func (st *State) signalBurst() time.Duration {
	if st.steps.burst > 0 {
		return st.steps.burst
	}

	return signalBurst
}

// shutdownLimit returns the bound of a graceful stop.
func (st *State) shutdownLimit() time.Duration {
	if st.steps.limit > 0 {
		return st.steps.limit
	}

	return shutdownLimit
}

// signalName names a signal as people type it (SIGINT, SIGTERM, SIGHUP).
func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	default:
		return s.String()
	}
}

// interruptContext returns a context cancelled by the first interrupt
// (SIGINT, SIGTERM or SIGHUP), which asks the command to stop gracefully.
// Signals within signalBurst of the first are the same request; a later
// one, or a stop that takes longer than shutdownLimit, runs the registered
// hard-exit cleanups and exits at once. The returned function ends the
// watch; call it when the command returns.
func interruptContext(st *State) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})

	if st.Signals != nil {
		go watchSignals(st, cancel, done)
	}

	var once sync.Once

	return ctx, func() {
		once.Do(func() { close(done) })
		cancel()
	}
}

// watchSignals is interruptContext's goroutine.
func watchSignals(st *State, cancel context.CancelFunc, done <-chan struct{}) {
	var first os.Signal

	select {
	case first = <-st.Signals:
	case <-done:
		return
	}

	at := time.Now()
	step := st.markInterrupted()

	msg := fmt.Sprintf("\nInterrupted (%s): stopping", signalName(first))
	if step != "" {
		msg += "; " + step
	}

	st.say("%s.\nSend the signal again (press Ctrl-C) to exit at once.\n", msg)
	cancel()

	limit := time.NewTimer(st.shutdownLimit())
	defer limit.Stop()

	for {
		select {
		case <-done:
			return
		case <-st.Signals:
			if time.Since(at) < st.signalBurst() {
				continue
			}

			st.say("Exiting at once.\n")
		case <-limit.C:
			if step := st.markInterrupted(); step != "" {
				st.say("The stop took longer than %s (still %s); exiting at once.\n", st.shutdownLimit(), step)
			} else {
				st.say("The stop took longer than %s; exiting at once.\n", st.shutdownLimit())
			}
		}

		st.sayUnsaved()
		st.runHardExitHooks()
		st.Exit(ExitForced)

		return
	}
}
