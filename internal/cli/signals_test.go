package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadersStopOnSignal runs validate, report and compare on a named pipe
// that nobody writes to, and run on one as its workload: each blocks in
// reading it until a signal, then stops with exit code 1 and says so.
func TestReadersStopOnSignal(t *testing.T) {
	for name, args := range map[string]func(pipe, dir string) []string{
		"validate": func(pipe, _ string) []string { return []string{"validate", pipe} },
		"report": func(pipe, dir string) []string {
			return []string{"report", pipe, "-o", filepath.Join(dir, "report.html")}
		},
		"compare": func(pipe, _ string) []string { return []string{"compare", pipe, pipe} },
		"run":     func(pipe, dir string) []string { return []string{"run", pipe, "--out", filepath.Join(dir, "r.json")} },
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

			cmdArgs := args(pipe, dir)

			r := newCLIRun(cmdArgs...)
			done := r.start()

			// The command is blocked on the pipe by now, or will be.
			time.Sleep(200 * time.Millisecond)
			r.signals <- syscall.SIGTERM

			code := r.wait(t, done, 10*time.Second)
			stderr := r.stderr.String()

			if code != ExitFailed {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", code, ExitFailed, stderr)
			}

			if !strings.Contains(stderr, "Interrupted (SIGTERM)") || !strings.Contains(stderr, "interrupted while reading "+pipe) {
				t.Errorf("stderr does not say that reading %s was interrupted:\n%s", pipe, stderr)
			}

			if codes := r.exitCodes(); len(codes) > 0 {
				t.Errorf("State.Exit called with %v: the command did not stop by itself", codes)
			}
		})
	}
}

// TestValidateRefusesEndlessFile validates /dev/zero: the size limit stops
// it with a one-line message and exit code 2.
func TestValidateRefusesEndlessFile(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero on this system")
	}

	code, _, stderr := runMain(t, "validate", "/dev/zero")
	if code != ExitBadInput {
		t.Errorf("exit code %d, want %d\nstderr:\n%s", code, ExitBadInput, stderr)
	}

	if !strings.Contains(stderr, "/dev/zero: more than 4 MiB") {
		t.Errorf("stderr does not name the file and the limit:\n%s", stderr)
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
func TestStopWithinBoundDoesNotExit(t *testing.T) {
	r := newCLIRun()
	r.st.steps.limit = 100 * time.Millisecond

	ctx, stop := interruptContext(r.st)
	r.signals <- os.Interrupt
	<-ctx.Done()
	stop()
	stop() // twice is harmless

	time.Sleep(300 * time.Millisecond)

	if codes := r.exitCodes(); len(codes) > 0 {
		t.Errorf("Exit called with %v after the command returned", codes)
	}
}
