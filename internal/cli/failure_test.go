package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// writeWorkload writes src to a workload file in a fresh directory.
func writeWorkload(t *testing.T, src string) string {
	t.Helper()

	path := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}

	return path
}

// TestRunServerKilled closes the wiretest server and every connection to it
// abruptly two measured intervals into a 10-minute run, as kill -9 would,
// so that only the kill can end the run however slow the machine: the run
// must stop as aborted (its status says so, not completed), say why and
// when, keep the results so far, give up cleaning up after a bounded time
// and exit 1.
func TestRunServerKilled(t *testing.T) {
	t.Parallel() // mostly waits

	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	path := writeWorkload(t, `
name: killed
database: mongobench_cli_killed
collections: [{name: items}]
run: {concurrency: 4, warmup: 0s, duration: 10m, timeout: 5s}
operations:
  - name: get
    op: findOne
    collection: items
    filter: {_id: 1}
  - name: put
    op: insertOne
    collection: items
    document: {x: 1}
`)
	out := outPath(t)

	r := newCLIRun("run", path, "--uri", srv.URI(), "--out", out, "--server-selection-timeout", "2s", "--no-explain")
	done := r.start()

	// Two measured intervals with operations in them, so that the results
	// have measurements from before the kill and the run is well under way.
	waitFor(t, time.Minute, "two measured intervals", func() bool {
		return len(busyIntervalRe.FindAllString(r.stderr.String(), -1)) >= 2
	})

	_ = srv.Close()

	code := r.wait(t, done, time.Minute)
	stderr := r.stderr.String()

	if code != ExitFailed {
		t.Errorf("exit code %d, want %d\nstderr:\n%s", code, ExitFailed, stderr)
	}

	res := readResults(t, out)
	if res.Status != result.StatusAborted {
		t.Errorf("status %q, want %q", res.Status, result.StatusAborted)
	}

	for _, want := range []string{"unreachable", "network errors", "no operation succeeded since 00:0"} {
		if !strings.Contains(res.StatusReason, want) {
			t.Errorf("status reason %q does not contain %q", res.StatusReason, want)
		}
	}

	if ok, _ := totals(res.Operations); ok == 0 {
		t.Error("the operations measured before the kill are not in the results")
	}

	if !strings.Contains(stderr, "run aborted: the server is unreachable") {
		t.Errorf("stderr does not report the abort and its cause:\n%s", stderr)
	}

	if !strings.Contains(stderr, "gave up after") {
		t.Errorf("the clean-up against the dead server does not say it gave up:\n%s", stderr)
	}

	assertNoStackTrace(t, stderr)
}

// TestRunAllOperationsFail runs a workload whose only operation the server
// rejects every time, with an error budget that tolerates any error rate:
// a run that measured no success must still fail, and say so.
func TestRunAllOperationsFail(t *testing.T) {
	t.Parallel()

	srv, err := wiretest.Start(wiretest.Config{})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	path := writeWorkload(t, `
name: allfail
database: mongobench_cli_allfail
run: {concurrency: 2, warmup: 0s, duration: 1s, max_error_rate: 1}
operations:
  - name: nope
    op: runCommand
    command: {noSuchCommand: 1}
`)
	out := outPath(t)

	code, _, stderr := runMain(t, "run", path, "--uri", srv.URI(), "--out", out, "--no-explain")
	if code != ExitFailed {
		t.Errorf("exit code %d, want %d\nstderr:\n%s", code, ExitFailed, stderr)
	}

	if !strings.Contains(stderr, "no operation succeeded") || !strings.Contains(stderr, "CommandNotFound") {
		t.Errorf("stderr does not say that nothing succeeded, and why:\n%s", stderr)
	}

	if lines := errorLines(stderr); len(lines) != 1 {
		t.Errorf("want one Error: line, got %q", lines)
	}
}
