package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mongobench/mongobench/internal/base/blocked"
)

// TestReadersStopOnSignal runs validate, report and compare on a pipe that
// nothing is written to, and run on one as its workload: each blocks in
// reading it until a signal, then stops with exit code 1 and says so.
// Report and compare read a named pipe; a workload named pipe is refused
// (TestWorkloadNotAFile), so validate and run read the pipe through a
// descriptor path, as the shell's <(command) gives it.
func TestReadersStopOnSignal(t *testing.T) {
	for name, args := range map[string]func(pipe, fd, dir string) []string{
		"validate": func(_, fd, _ string) []string { return []string{"validate", fd} },
		"report": func(pipe, _, dir string) []string {
			return []string{"report", pipe, "-o", filepath.Join(dir, "report.html")}
		},
		"compare": func(pipe, _, _ string) []string { return []string{"compare", pipe, pipe} },
		"run":     func(_, fd, dir string) []string { return []string{"run", fd, "--out", filepath.Join(dir, "r.json")} },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			pipe := filepath.Join(dir, "input")

			if err := syscall.Mkfifo(pipe, 0o600); err != nil {
				t.Skipf("no named pipes here: %v", err)
			}

			// Ends the open left blocked on the pipe.
			t.Cleanup(func() {
				if w, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
			})

			// An anonymous pipe whose writer stays open and silent.
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}

			t.Cleanup(func() { pw.Close(); pr.Close() })

			fd := fmt.Sprintf("/proc/self/fd/%d", pr.Fd())
			if _, err := os.Stat(fd); err != nil {
				t.Skipf("no /proc/self/fd here: %v", err)
			}

			cmdArgs := args(pipe, fd, dir)
			input := cmdArgs[1]

			r := newCLIRun(cmdArgs...)
			done := r.start()

			// The signal is sent once the command is blocked reading
			// its input (the pipe's writer stays silent).
			blocked.In(t, "inputfile.ReadLimit", 10*time.Second)
			r.signals <- syscall.SIGTERM

			code := r.wait(t, done, 10*time.Second)
			stderr := r.stderr.String()

			if code != ExitFailed {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", code, ExitFailed, stderr)
			}

			if !strings.Contains(stderr, "Interrupted (SIGTERM)") || !strings.Contains(stderr, "interrupted while reading "+input) {
				t.Errorf("stderr does not say that reading %s was interrupted:\n%s", input, stderr)
			}

			if codes := r.exitCodes(); len(codes) > 0 {
				t.Errorf("State.Exit called with %v: the command did not stop by itself", codes)
			}
		})
	}
}

// TestWorkloadNotAFile gives validate and run a named pipe nobody writes to
// and a device as the workload: each is refused at once, before opening it,
// with a one-line error naming the file and exit code 2 (validate used to
// wait on the pipe until Ctrl-C).
func TestWorkloadNotAFile(t *testing.T) {
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

	for _, c := range []struct{ path, what string }{
		{pipe, "is a named pipe"},
		{"/dev/zero", "is a device"},
	} {
		if _, err := os.Stat(c.path); err != nil {
			continue
		}

		for _, args := range [][]string{
			{"validate", c.path},
			{"run", c.path, "--out", filepath.Join(dir, "r.json")},
		} {
			r := newCLIRun(args...)
			code := r.wait(t, r.start(), 10*time.Second)
			stderr := r.stderr.String()

			if code != ExitBadInput {
				t.Errorf("%v: exit code %d, want %d\nstderr:\n%s", args, code, ExitBadInput, stderr)
			}

			if !strings.Contains(stderr, c.path+": "+c.what+", not a file") {
				t.Errorf("%v: stderr does not say %q:\n%s", args, c.what, stderr)
			}
		}
	}
}

// TestStopIsBounded interrupts a command whose stop never finishes: once
// the bound has passed, the hard-exit cleanups run and the process exits
// with ExitForced, after saying what it was still doing.
func TestStopIsBounded(t *testing.T) {
	r := newCLIRun()
	r.st.steps.limit = 200 * time.Millisecond

	cleaned := make(chan struct{})
	unhook := r.st.onHardExit(func() { close(cleaned) })
	defer unhook()

	exited := make(chan int, 1)
	r.onExit = func(code int) { exited <- code }

	ctx, stop := interruptContext(r.st)
	defer stop()

	r.st.setStep("stopping the embedded server")
	r.st.setUnsaved("results/x.runlog.jsonl")
	r.signals <- syscall.SIGHUP

	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGHUP did not cancel the context")
	}

	// The command never returns (stop is not called): the bound ends it.
	select {
	case code := <-exited:
		if code != ExitForced {
			t.Errorf("exit code %d, want %d", code, ExitForced)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no forced exit after the bound\nstderr:\n%s", r.stderr)
	}

	select {
	case <-cleaned:
	default:
		t.Error("the hard-exit cleanups did not run before Exit")
	}

	stderr := r.stderr.String()
	for _, want := range []string{
		"Interrupted (SIGHUP): stopping; stopping the embedded server.", "(still stopping the embedded server); exiting at once",
		"No results file was written; the measurements are in results/x.runlog.jsonl", "mongobench finish results/x.runlog.jsonl",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestStopWithinBoundDoesNotExit interrupts a command that returns in
// time: no forced exit follows, even after the bound.
//
// It runs in a synctest bubble: the bubble's clock moves only when every
// goroutine in it is blocked, so the sleep past the bound below is exact
// and instant, and synctest.Wait makes sure the signal watcher has done
// whatever it was going to do before the exit codes are read.
func TestStopWithinBoundDoesNotExit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newCLIRun()
		r.st.steps.limit = 100 * time.Millisecond

		ctx, stop := interruptContext(r.st)
		r.signals <- os.Interrupt
		<-ctx.Done()
		stop()
		stop() // twice is harmless

		time.Sleep(3 * r.st.steps.limit) // the bubble's clock: past the bound
		synctest.Wait()

		if codes := r.exitCodes(); len(codes) > 0 {
			t.Errorf("Exit called with %v after the command returned", codes)
		}
	})
}

// TestStopIsBoundedWithoutStep is TestStopIsBounded for a command that
// never said what it does: the message must not print an empty "(still )".
func TestStopIsBoundedWithoutStep(t *testing.T) {
	r := newCLIRun()
	r.st.steps.limit = 200 * time.Millisecond

	exited := make(chan int, 1)
	r.onExit = func(code int) { exited <- code }

	_, stop := interruptContext(r.st)
	defer stop()

	r.signals <- syscall.SIGINT

	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("no forced exit after the bound\nstderr:\n%s", r.stderr)
	}

	stderr := r.stderr.String()
	if !strings.Contains(stderr, "The stop took longer than 200ms; exiting at once.") || strings.Contains(stderr, "still )") {
		t.Errorf("the bound's message is not one clean line:\n%s", stderr)
	}
}
