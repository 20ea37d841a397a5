package cli

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/lab/bench"
	benchplan "github.com/mongobench/mongobench/internal/lab/plan"
)

// stateMessages shows a run's messages through the State: lines on
// standard error, and steps for the messages of an interrupt.
type stateMessages struct{ st *State }

func (m stateMessages) Printf(format string, args ...any) { fmt.Fprintf(m.st.Stderr, format, args...) }
func (m stateMessages) Step(format string, args ...any)   { m.st.setStep(format, args...) }

// benchHooks connects a run to the terminal: progress, messages, cleanups
// for a forced exit and the embedded server's log.
func benchHooks(st *State, f *runFlags) bench.Hooks {
	return bench.Hooks{
		Messages:      stateMessages{st},
		Observer:      func() runner.Observer { return newObserver(st, f.quiet) },
		CloseObserver: closeObserver,
		OnHardExit:    st.onHardExit,
		Logger:        ferretDBLogger(st),
		Now:           st.Now,
	}
}

// benchError gives a run's error its exit code: bad input, or a failed run.
func benchError(err error) error {
	var ie *bench.InputError
	if errors.As(err, &ie) {
		return badInput("%s", ie.Error())
	}

	return failed("%s", err.Error())
}

// ferretDBLogger returns the embedded server's logger: nil (discard) unless
// MONGOBENCH_FERRETDB_LOG names a level (debug, info, warn, error), which
// helps to see what the server did during a surprising run.
func ferretDBLogger(st *State) *slog.Logger {
	level := st.Getenv("MONGOBENCH_FERRETDB_LOG")
	if level == "" {
		return nil
	}

	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}

	return slog.New(slog.NewTextHandler(redact.Writer(st.Stderr), &slog.HandlerOptions{Level: l}))
}

// planError turns an error of planning a run into the exit code: a request
// to fix is bad input, its individual problems printed first, one a line;
// anything else is a failed run.
func planError(st *State, err error) error {
	var ie *benchplan.InputError
	if errors.As(err, &ie) {
		for _, d := range ie.Details {
			fmt.Fprintln(st.Stderr, redact.Text(d.Error()))
		}

		return &exitError{code: ExitBadInput, msg: ie.Msg}
	}

	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}

	return failed("%v", err)
}
