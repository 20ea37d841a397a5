//go:build e2e

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/results/runlog"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// killLimit bounds each wait of TestKilledRunFinished on the child, on a
// busy machine.
const killLimit = 2 * time.Minute

// killedWorkload runs for a minute unless killed: its test kills it.
const killedWorkload = `name: killed
database: mongobench_killed
collections: [{name: items}]
run: {concurrency: 4, duration: 60s, warmup: 0s, interval: 200ms}
operations:
  - {name: get, op: findOne, collection: items, filter: {_id: {^int: {min: 1, max: 100}}}}
  - {name: put, op: insertOne, collection: items, document: {n: 1}}
`

// TestKilledRunFinished runs the built binary against the null server and
// kills it with SIGKILL once its run log holds a few intervals: no results
// file exists, and finish turns the run log into an incomplete results file
// that is consistent (result.Check), holds the logged intervals, and that
// report, report --csv and compare read.
func TestKilledRunFinished(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it end to end")
	}

	bin := buildBinary(t)

	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}

	defer srv.Close()

	dir := t.TempDir()
	w := filepath.Join(dir, "killed.yaml")

	if err := os.WriteFile(w, []byte(killedWorkload), 0o600); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "results", "killed.json")
	logPath := filepath.Join(dir, "results", "killed"+runlog.Suffix)

	var stderr bytes.Buffer

	cmd := exec.Command(bin, "run", w, "--uri", srv.URI(), "--out", out, "-q", "--no-explain", "--server-stats-interval", "0")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "CI=1")
	cmd.Stderr = &stderr

	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	defer func() { _ = cmd.Process.Kill() }()

	intervalLines := func() int {
		data, _ := os.ReadFile(logPath)
		return strings.Count(string(data), `{"type":"interval"`)
	}

	waitFor(t, killLimit, "five intervals in the run log", func() bool { return intervalLines() >= 5 })

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	select {
	case err := <-exited:
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("mongobench ended with %v, not killed by SIGKILL; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(killLimit):
		t.Fatalf("mongobench did not die of SIGKILL within %s", killLimit)
	}

	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a killed run left a results file (%v)", err)
	}

	logged := intervalLines() // what is on disk now is what finish can use

	code, _, errOut := runMain(t, "finish", logPath)
	if code != 0 {
		t.Fatalf("finish exited %d:\n%s", code, errOut)
	}

	if !strings.Contains(errOut, "Results written to "+out) || !strings.Contains(errOut, "incomplete") {
		t.Errorf("finish said:\n%s", errOut)
	}

	res := readResults(t, out) // fails the test on Check errors

	main := res.MainPhase()
	if res.Status != result.StatusIncomplete || main == nil || len(main.Intervals) != logged {
		t.Fatalf("status %q, main phase %v with %d intervals; want incomplete with the %d logged",
			res.Status, main != nil, len(main.Intervals), logged)
	}

	var count int64
	for _, op := range main.Operations {
		count += op.Count
	}

	if count == 0 || len(main.Operations) != 2 {
		t.Errorf("main phase: %d operations, %d counted", len(main.Operations), count)
	}

	csvDir := filepath.Join(dir, "csv")
	if code, _, errOut := runMain(t, "report", out, "-o", filepath.Join(dir, "r.html"), "--csv", csvDir); code != 0 {
		t.Fatalf("report exited %d:\n%s", code, errOut)
	}

	summary, err := os.ReadFile(filepath.Join(csvDir, "summary.csv"))
	if err != nil || !strings.Contains(string(summary), result.StatusIncomplete) {
		t.Errorf("summary.csv (%v) does not say incomplete:\n%s", err, summary)
	}

	if html, err := os.ReadFile(filepath.Join(dir, "r.html")); err != nil || !bytes.Contains(html, []byte(result.StatusIncomplete)) {
		t.Errorf("the HTML report (%v) does not say incomplete", err)
	}

	code, stdout, errOut := runMain(t, "compare", out, out)
	if code != 0 || !strings.Contains(errOut, "incomplete") || !strings.Contains(stdout, "get") {
		t.Errorf("compare exited %d:\n%s\n%s", code, stdout, errOut)
	}
}
