package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
)

// notifyWriter passes writes on to a buffer and, the first time what was
// written contains want, calls then: a test's hook into "the command has
// printed this", without polling.
type notifyWriter struct {
	inner *lockedBuffer
	want  string
	then  func()

	mu   sync.Mutex
	seen bytes.Buffer
	done bool
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	n, err := w.inner.Write(p)

	w.mu.Lock()
	w.seen.Write(p)
	fire := !w.done && strings.Contains(w.seen.String(), w.want)
	w.done = w.done || fire
	w.mu.Unlock()

	if fire {
		w.then()
	}

	return n, err
}

// A capacity search stopped by SIGINT after its first step writes a whole
// results file holding that step, with status interrupted and a verdict
// saying so, and exits 1 as an interrupted run does.
func TestCapacityInterruptedBySignal(t *testing.T) {
	srv := startNullServer(t, time.Millisecond)

	path := capacityProbe(t, "capacity_signal", "")
	out := filepath.Join(t.TempDir(), "capacity.json")

	r := newCLIRun("capacity", path, "--uri", srv.URI(), "--out", out, "--slo", "p99 < 2s",
		"--start-rate", "50", "--max-rate", "100", "--step-duration", "300ms", "--max-step-duration", "600ms", "--warmup", "50ms")

	// The first step's line is printed from inside the search, before
	// the next step starts; it waits there until the signal has been
	// taken (the stop message is printed just before the context is
	// cancelled), so the second step is the one interrupted.
	taken := make(chan struct{})
	r.st.Stderr = &notifyWriter{inner: r.stderr, want: "Interrupted (SIGINT)", then: func() { close(taken) }}
	r.st.Stdout = &notifyWriter{inner: r.stdout, want: "achieved", then: func() {
		r.signals <- os.Interrupt
		<-taken
	}}

	code := r.wait(t, r.start(), mainTimeout)
	stdout, stderr := r.stdout.String(), r.stderr.String()

	if code != ExitFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitFailed, stdout, stderr)
	}

	if !strings.Contains(stderr, "capacity search interrupted by the user") {
		t.Errorf("stderr %q, want the interrupted search named", stderr)
	}

	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if last := lines[len(lines)-1]; last != "Maximum sustainable rate: not found: the search was interrupted" {
		t.Errorf("last line %q, want that the search was interrupted", last)
	}

	res := readResults(t, out)
	if res.Status != result.StatusInterrupted || res.Capacity == nil || !res.Capacity.Interrupted {
		t.Fatalf("status %q, capacity %+v: want an interrupted capacity result", res.Status, res.Capacity)
	}

	if c := res.Capacity; len(c.Steps) != 1 || c.Steps[0].OfferedRate != 50 || c.MaxRate != 0 {
		t.Errorf("steps %+v, max rate %v: want the one step done (50/s) and no rate claimed", c.Steps, c.MaxRate)
	}

	// Nothing half-written: the results file alone, no temporary file.
	if entries, err := os.ReadDir(filepath.Dir(out)); err != nil || len(entries) != 1 {
		t.Errorf("the results directory holds %v (%v), want the results file alone", entries, err)
	}
}
