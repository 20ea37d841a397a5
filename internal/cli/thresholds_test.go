package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// thresholdWorkload inserts one document at a time against the wiretest
// null server, with the given thresholds.
func thresholdWorkload(t *testing.T, thresholds string) string {
	t.Helper()

	src := `name: thresholds
database: mongobench_cli_thresholds
collections: [{name: items}]
run: {concurrency: 1, duration: 1s, interval: 250ms}
operations:
  - {name: add, op: insertOne, collection: items, document: {n: 1}}
thresholds:
` + thresholds

	path := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}

	return path
}

// TestRunThresholdBroken runs against a server that holds every reply 5 ms:
// "p50 < 1ms" cannot hold, so the run exits with ExitThresholds, naming the
// threshold and the value measured, and the results file records it.
func TestRunThresholdBroken(t *testing.T) {
	srv := startNullServer(t, 5*time.Millisecond)
	out := outPath(t)

	code, stdout, stderr := runMain(t, "run", thresholdWorkload(t, "  add: [\"p50 < 1ms\"]\n  all: [\"error_rate < 1%\"]\n"),
		"--uri", srv.URI(), "--out", out, "--quiet", "--no-explain", "--server-stats-interval", "0")
	if code != ExitThresholds {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitThresholds, stdout, stderr)
	}

	// The measured p50 is at least the server's 5 ms delay.
	line := regexp.MustCompile(`✗ add p50 < 1ms \(p50 = ([0-9.]+)ms\)`).FindStringSubmatch(stdout)
	if line == nil || parseFloat(t, line[1]) < 5 {
		t.Errorf("no failed line for the p50 threshold with a value of 5 ms or more:\n%s", stdout)
	}

	if !regexp.MustCompile(`✓ all error_rate < 1% \(error_rate = 0%\)`).MatchString(stdout) {
		t.Errorf("no passed line for the error rate:\n%s", stdout)
	}

	if !strings.Contains(stderr, "Error: 1 of 2 thresholds failed") {
		t.Errorf("stderr does not say a threshold failed:\n%s", stderr)
	}

	res := readResults(t, out)
	if len(res.Thresholds) != 2 {
		t.Fatalf("results file holds %d threshold outcomes, want 2: %+v", len(res.Thresholds), res.Thresholds)
	}

	if o := res.Thresholds[0]; o.Passed || !o.Measurable || o.Measured < 5000 || o.Limit != 1000 || o.Phase != "run" || o.Condition != "p50 < 1ms" {
		t.Errorf("p50 outcome %+v", o)
	}

	if o := res.Thresholds[1]; !o.Passed || o.Operation != "all" || o.Measured != 0 {
		t.Errorf("error rate outcome %+v", o)
	}
}

// TestRunThresholdHolds runs the same server with thresholds its delay
// keeps: the run exits 0 and prints each as passed.
func TestRunThresholdHolds(t *testing.T) {
	srv := startNullServer(t, 5*time.Millisecond)

	code, stdout, stderr := runMain(t, "run", thresholdWorkload(t, "  add: [\"p50 < 1s\", \"max <= 10s\"]\n  all: [\"throughput > 1\"]\n"),
		"--uri", srv.URI(), "--out", outPath(t), "--quiet", "--no-explain", "--server-stats-interval", "0")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	for _, want := range []string{`✓ add p50 < 1s \(p50 = [0-9.]+ms\)`, `✓ add max <= 10s \(max = [0-9.]+ms\)`, `✓ all throughput > 1/s \(throughput = [0-9.]+/s\)`} {
		if !regexp.MustCompile(want).MatchString(stdout) {
			t.Errorf("no line %s:\n%s", want, stdout)
		}
	}
}

// TestRunThresholdInvalid refuses a workload whose threshold names an
// unknown operation, before any run, with file:line:field and exit 2.
func TestRunThresholdInvalid(t *testing.T) {
	path := thresholdWorkload(t, "  get: [\"p99 < 20ms\"]\n")

	code, stdout, stderr := runMain(t, "run", path, "--uri", "mongodb://127.0.0.1:1/", "--out", outPath(t), "--quiet")
	if code != ExitBadInput {
		t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	if !strings.Contains(stderr, path+`:8:3: thresholds.get: no operation "get"`) {
		t.Errorf("stderr lacks the positioned error:\n%s", stderr)
	}
}

// TestRunThresholdFailedRunWins: a run whose every operation fails (the
// null server knows no such command) exits 1, the failed run, although its
// threshold failed too: a broken run is not reported as a slow one.
func TestRunThresholdFailedRunWins(t *testing.T) {
	srv := startNullServer(t, 0)

	path := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(path, []byte(`name: thresholds_failed
database: mongobench_cli_thresholds_failed
collections: [{name: items}]
run: {concurrency: 1, duration: 500ms, interval: 250ms}
operations:
  - {name: bad, op: runCommand, command: {noSuchCommand: 1}}
thresholds:
  all: ["error_rate < 1%"]
`), 0o600); err != nil {
		t.Fatal(err)
	}

	out := outPath(t)

	code, stdout, stderr := runMain(t, "run", path, "--uri", srv.URI(), "--out", out, "--quiet", "--no-explain", "--server-stats-interval", "0")
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitFailed, stdout, stderr)
	}

	if !strings.Contains(stdout, "✗ all error_rate < 1% (error_rate = 100%)") {
		t.Errorf("the failed threshold is not printed:\n%s", stdout)
	}

	if strings.Contains(stderr, "thresholds failed") {
		t.Errorf("the threshold message hides the failed run:\n%s", stderr)
	}

	if res := readResults(t, out); len(res.Thresholds) != 1 || res.Thresholds[0].Passed {
		t.Errorf("results file thresholds %+v", res.Thresholds)
	}
}
