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
