//go:build e2e

package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCapacityCommandResultsAreReadable runs a short capacity search with a
// sweep against the test server and reads its results file with report,
// compare and history: the capacity section is optional content of a run's
// file, so every reader of runs must take it.
func TestCapacityCommandResultsAreReadable(t *testing.T) {
	srv := startNullServer(t, time.Millisecond)

	path := capacityProbe(t, "capacity", "")
	dir := t.TempDir()
	out := filepath.Join(dir, "capacity.json")

	// A generous objective and a low ceiling: every step passes, so the
	// search ends at --max-rate whatever the machine's load.
	code, stdout, stderr := runMain(t, "capacity", path, "--uri", srv.URI(), "--out", out, "--report",
		"--slo", "p99 < 2s", "--slo", "error_rate < 1%", "--start-rate", "50", "--max-rate", "100",
		"--step-duration", "500ms", "--max-step-duration", "1s", "--warmup", "100ms", "--workers", "1,2,3,4")
	if code != 0 {
		t.Fatalf("capacity exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Maximum sustainable rate: 100.0 ops/s") {
		t.Errorf("last line %q, want the maximum sustainable rate, 100 ops/s (--max-rate)", last)
	}

	res := readResults(t, out)
	if c := res.Capacity; c == nil || len(c.Steps) < 3 || len(c.Sweep) != 4 || c.MaxRate != 100 || !c.Confirmed {
		t.Fatalf("capacity section %+v, want the steps, a confirmation at 100/s and a 4-step sweep", c)
	}

	html := filepath.Join(dir, "capacity.html")
	if code, _, stderr := runMain(t, "report", out, "-o", html); code != 0 {
		t.Errorf("report exit %d: %s", code, stderr)
	}

	code, stdout, stderr = runMain(t, "compare", out, out)
	if code != 0 || !strings.Contains(stdout, "Capacity B/A: 1.00×") {
		t.Errorf("compare exit %d, stdout:\n%s\nstderr:\n%s\nwant the capacity ratio 1.00×", code, stdout, stderr)
	}

	if code, _, stderr := runMain(t, "history", dir); code != 0 {
		t.Errorf("history exit %d: %s", code, stderr)
	}
}
