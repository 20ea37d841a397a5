package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunConcurrencyOverBudget checks that --concurrency cannot take a
// workload past the memory caps it was validated against: 200 operations are
// fine at 2 workers, not at 10,000.
func TestRunConcurrencyOverBudget(t *testing.T) {
	t.Parallel()

	var b strings.Builder

	b.WriteString("name: wide\ndatabase: mongobench_wide\ncollections:\n  - name: c\nrun:\n  concurrency: 2\n  duration: 1s\noperations:\n")

	for i := range 200 {
		fmt.Fprintf(&b, "  - name: op%d\n    op: findOne\n    collection: c\n", i)
	}

	path := filepath.Join(t.TempDir(), "wide.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	// Nothing listens on port 1: the check must come before any connection.
	code, _, stderr := runMain(t, "run", path, "--concurrency", "10000", "--uri", "mongodb://127.0.0.1:1/?connectTimeoutMS=100")
	if code != ExitBadInput {
		t.Errorf("exit code %d, want %d\nstderr:\n%s", code, ExitBadInput, stderr)
	}

	want := "with --concurrency 10000: " + path + ":6:16: run.concurrency: 200 operations × 10000 workers would hold about 1.9 GiB"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}

	if strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("want a one-line message, got:\n%s", stderr)
	}
}
