//go:build e2e

package cli

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/results/runlog"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// buildBinary returns mongobench built for the end-to-end tests, built by
// the first test that asks and shared by the rest (see builtMongobench).
func buildBinary(t *testing.T) string {
	t.Helper()

	b := &builtMongobench
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "mongobench-cli-test-bin-"); b.err != nil {
			return
		}

		b.path = filepath.Join(b.dir, "mongobench")

		if out, err := exec.Command("go", "build", "-o", b.path, "../../cmd/mongobench").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})

	if b.err != nil {
		t.Fatal(b.err)
	}

	return b.path
}

// startChild starts bin with args in dir and returns a channel that gets
// Wait's error; the child is killed if the test ends first.
func startChild(t *testing.T, dir, bin string, stderr *bytes.Buffer, args ...string) (*exec.Cmd, <-chan error) {
	t.Helper()

	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "CI=1")
	cmd.Stderr = stderr

	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	t.Cleanup(func() { _ = cmd.Process.Kill() })

	return cmd, exited
}

// waitForChild waits for cond as waitFor does, failing at once if the
// child exits first.
func waitForChild(t *testing.T, exited <-chan error, stderr *bytes.Buffer, what string, cond func() bool) {
	t.Helper()

	waitFor(t, killLimit, what, func() bool {
		select {
		case err := <-exited:
			t.Fatalf("mongobench exited (%v) before %s; stderr:\n%s", err, what, stderr.String())
		default:
		}

		return cond()
	})
}

// manyOpsWorkload has 200 operations, so that its results keep
// runlog.MaxIntervals = 60 points, and runs for ten minutes unless stopped.
func manyOpsWorkload() string {
	var b strings.Builder

	b.WriteString("name: many\ndatabase: mongobench_many\ncollections: [{name: items}]\n")
	b.WriteString("run: {concurrency: 16, duration: 10m, warmup: 0s, interval: 100ms}\noperations:\n")

	for i := range 200 {
		b.WriteString("  - {name: op" + strconv.Itoa(i) + ", op: findOne, collection: items, filter: {_id: 1}}\n")
	}

	return b.String()
}

// TestInterruptedLongRunKeepsResults interrupts (SIGINT) a run of 200
// operations once its run log holds 130 intervals, more than twice the
// points its results keep: the run exits with code 1 after writing a
// results file of status interrupted that is consistent (result.Check),
// whose main phase has at most runlog.MaxIntervals points, and whose counts
// are those finish rebuilds from the run log; report reads it.
func TestInterruptedLongRunKeepsResults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it end to end")
	}

	bin := buildBinary(t)

	srv, err := wiretest.Start(wiretest.Config{})
	if err != nil {
		t.Fatal(err)
	}

	defer srv.Close()

	dir := t.TempDir()
	w := filepath.Join(dir, "many.yaml")

	if err := os.WriteFile(w, []byte(manyOpsWorkload()), 0o600); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "results", "many.json")
	logPath := runlog.PathFor(out)

	var stderr bytes.Buffer

	cmd, exited := startChild(t, dir, bin, &stderr, "run", w, "--uri", srv.URI(), "--out", out, "-q", "--no-explain", "--server-stats-interval", "0")

	waitForChild(t, exited, &stderr, "130 intervals in the run log", func() bool {
		data, _ := os.ReadFile(logPath)
		return bytes.Count(data, []byte(`{"type":"interval"`)) >= 130
	})

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}

	select {
	case err := <-exited:
		if err == nil {
			t.Fatalf("an interrupted run exited 0; stderr:\n%s", stderr.String())
		}
	case <-time.After(killLimit):
		t.Fatalf("mongobench did not exit after SIGINT")
	}

	if code := cmd.ProcessState.ExitCode(); code != ExitFailed {
		t.Fatalf("exit code %d, want %d; stderr:\n%s", code, ExitFailed, stderr.String())
	}

	res := readResults(t, out)
	main := res.MainPhase()

	if res.Status != result.StatusInterrupted || main == nil || len(main.Operations) != 200 {
		t.Fatalf("status %q, main phase %v; want interrupted with 200 operations", res.Status, main != nil)
	}

	// At most PointCells operation entries in all the points.
	if n, most := len(main.Intervals), runlog.PointCells/len(main.Operations); n > most || n < 2 {
		t.Errorf("%d interval points, want 2 to %d", n, most)
	}

	built, err := runlog.Build(context.Background(), logPath)
	if err != nil {
		t.Fatal(err)
	}

	for i, op := range built.MainPhase().Operations {
		if got := main.Operations[i]; got.Count != op.Count || got.Histogram != op.Histogram {
			t.Fatalf("operation %s: the results file has count %d, the run log %d (or their histograms differ)", op.Name, got.Count, op.Count)
		}
	}

	if code, _, errOut := runMain(t, "report", out, "-o", filepath.Join(dir, "r.html")); code != 0 {
		t.Fatalf("report exited %d:\n%s", code, errOut)
	}
}

// comparisonWorkload is compared in 20 rounds of 1 s trials unless killed.
const comparisonWorkload = `name: cmp
database: mongobench_cmp
collections: [{name: items}]
run: {concurrency: 2, duration: 1s, warmup: 0s, interval: 100ms, rounds: 20}
operations:
  - {name: get, op: findOne, collection: items, filter: {_id: 1}}
`

// TestKilledComparisonFinished kills (SIGKILL) a comparison once a trial
// has completed: the trials' run logs are beside --out (results/cmp.trials),
// no results file is, and finish of the directory writes results/cmp.json, a
// comparison of the completed trials with status incomplete that report
// reads. A second comparison with the same --out is refused while the
// directory is there (its trials would be lost); a comparison that ends
// removes its directory.
func TestKilledComparisonFinished(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it end to end")
	}

	bin := buildBinary(t)

	srv, err := wiretest.Start(wiretest.Config{})
	if err != nil {
		t.Fatal(err)
	}

	defer srv.Close()

	dir := t.TempDir()
	w := filepath.Join(dir, "cmp.yaml")

	if err := os.WriteFile(w, []byte(comparisonWorkload), 0o600); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "results", "cmp.json")
	trials := bench.TrialsDirFor(out)
	args := []string{"run", w, "--uri", srv.URI(), "--out", out, "-q", "--no-explain", "--server-stats-interval", "0"}

	var stderr bytes.Buffer

	cmd, exited := startChild(t, dir, bin, &stderr, args...)

	completed := func() int {
		logs, _ := filepath.Glob(filepath.Join(trials, "trial-*"+runlog.Suffix))
		n := 0

		for _, l := range logs {
			if data, _ := os.ReadFile(l); bytes.Contains(data, []byte(`{"type":"end"`)) {
				n++
			}
		}

		return n
	}

	waitForChild(t, exited, &stderr, "a completed trial's run log beside --out", func() bool { return completed() >= 1 })

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	select {
	case err := <-exited:
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("mongobench ended with %v, not killed by SIGKILL; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(killLimit):
		t.Fatalf("mongobench did not die of SIGKILL")
	}

	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a killed comparison left a results file (%v)", err)
	}

	done := completed()

	if code, _, errOut := runMain(t, args...); code != ExitBadInput || !strings.Contains(errOut, "mongobench finish "+trials) {
		t.Fatalf("a comparison over the kept trials exited %d, want %d naming finish:\n%s", code, ExitBadInput, errOut)
	}

	if code, _, errOut := runMain(t, "finish", trials); code != 0 || !strings.Contains(errOut, "Results written to "+out) {
		t.Fatalf("finish exited %d:\n%s", code, errOut)
	}

	res := readResults(t, out)
	if res.Status != result.StatusIncomplete || res.Matrix == nil || len(res.Matrix.Trials) != done {
		t.Fatalf("status %q, matrix %v; want incomplete with the %d completed trials", res.Status, res.Matrix != nil, done)
	}

	for _, tr := range res.Matrix.Trials {
		if tr.Target == "" || tr.Variant != "cmp" || tr.Round < 1 || tr.Result.MainPhase() == nil || tr.Result.Operations[0].Count == 0 {
			t.Errorf("trial %+v: no target, variant, round or measurements", tr)
		}
	}

	if code, _, errOut := runMain(t, "report", out, "-o", filepath.Join(dir, "r.html")); code != 0 {
		t.Fatalf("report exited %d:\n%s", code, errOut)
	}

	// A comparison that ends removes its trials' run logs.
	if err := os.RemoveAll(trials); err != nil {
		t.Fatal(err)
	}

	if code, _, errOut := runMain(t, append(args, "--rounds", "2")...); code != 0 {
		t.Fatalf("a comparison of 2 rounds exited %d:\n%s", code, errOut)
	}

	if _, err := os.Stat(trials); !os.IsNotExist(err) {
		t.Errorf("a comparison that ended left %s (%v)", trials, err)
	}
}

// TestComparisonFullDiskKeepsTrials runs a comparison (two rounds) in a
// process whose file size limit lets each trial's run log through but not
// the results file, as on a full disk: the tables are printed, the run
// exits 1 saying once which directory it kept and the finish command,
// leaves no results file, and finish of the directory then writes the
// results of both trials.
func TestComparisonFullDiskKeepsTrials(t *testing.T) {
	t.Parallel()

	e := startServer(t)
	args := []string{"run", "testdata/small.yaml", "--uri", e.URI(), "--no-explain", "--server-stats-interval", "0"}

	// A single run's log stands for a trial's (the same workload and
	// length); the limit lies between it and the comparison's results
	// file (their geometric mean), which holds every trial's intervals.
	calib := filepath.Join(t.TempDir(), "r.json")
	if code, _, stderr := runMain(t, append(args, "-o", calib)...); code != ExitOK {
		t.Fatalf("single run without a limit: exit code %d\n%s", code, stderr)
	}

	calibCmp := filepath.Join(t.TempDir(), "c.json")
	if code, _, stderr := runMain(t, append(args, "--rounds", "2", "-o", calibCmp)...); code != ExitOK {
		t.Fatalf("comparison without a limit: exit code %d\n%s", code, stderr)
	}

	logSize, resSize := fileSize(t, runlog.PathFor(calib)), fileSize(t, calibCmp)
	if resSize < 4*logSize {
		t.Fatalf("the comparison's results (%d bytes) are not four times a run log (%d): no limit tells them apart", resSize, logSize)
	}

	limit := int64(math.Sqrt(float64(logSize) * float64(resSize)))

	dir := t.TempDir()
	out := filepath.Join(dir, "c.json")
	trials := bench.TrialsDirFor(out)

	cmd := child(t, fsizeChildEnv+"="+strconv.FormatInt(limit, 10), append(args, "--rounds", "2", "-o", out)...)

	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr

	err := cmd.Run()

	var ee *exec.ExitError
	if !asExitError(err, &ee) || ee.ExitCode() != ExitFailed {
		t.Fatalf("run: %v, want exit code %d\nstdout:\n%s\nstderr:\n%s", err, ExitFailed, &stdout, &stderr)
	}

	if !strings.Contains(stdout.String(), "report_error") {
		t.Errorf("the tables are not on standard output:\n%s", &stdout)
	}

	want := "Kept: the trials' run logs in " + trials + " hold the whole run; `mongobench finish " + trials + "` writes the results file from it"
	if n := strings.Count(stderr.String(), "mongobench finish"); !strings.Contains(stderr.String(), want) || n != 1 {
		t.Errorf("stderr names the finish command %d times, want once as %q:\n%s", n, want, &stderr)
	}

	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a failed write left a results file (%v)", err)
	}

	if code, _, errOut := runMain(t, "finish", trials); code != ExitOK || !strings.Contains(errOut, "Results written to "+out) {
		t.Fatalf("finish exited %d:\n%s", code, errOut)
	}

	if res := readResults(t, out); res.Matrix == nil || len(res.Matrix.Trials) != 2 {
		t.Errorf("the results finish built hold no comparison of the 2 trials")
	}
}
