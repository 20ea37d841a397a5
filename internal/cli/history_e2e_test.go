//go:build e2e

package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// History test runs: each run is 500 reads at concurrency 8 against a
// test server holding every reply for a fixed delay, 1.25 s at 20 ms. p99
// of 500 operations is the 5th slowest. A loaded machine now and then
// stalls the whole process (a few milliseconds, more under a CPU quota),
// delaying the operations in flight: at a 20 ms delay such a stall is a
// small share of a run's p99, where at 10 ms another job's processes
// beside the test moved a flat series' p99 by 20% (CI, with the adapters'
// suites still running).
const (
	historyOps         = "500"
	historyConcurrency = "8"
	historyBase        = 20 * time.Millisecond
	historySlow        = 30 * time.Millisecond // 50% slower
)

// historyRun runs ycsb-c once against srv, writing out, labelled label,
// with CI's commit id commit in the environment; records (the workload's
// recordcount) makes a series of its own.
func historyRun(srv *wiretest.Server, out, label, commit, records string) error {
	r := newCLIRun("run", "../../workloads/ycsb/c.yaml", "--uri", srv.URI(), "--out", out, "--quiet",
		"--no-explain", "--server-stats-interval", "0", "--set", "recordcount="+records,
		"--max-operations", historyOps, "--concurrency", historyConcurrency, "--label", label)
	r.st.Getenv = func(k string) string {
		if k == "GITHUB_SHA" {
			return commit
		}

		return map[string]string{"CI": "1"}[k]
	}

	select {
	case code := <-r.start():
		if code == panicCode {
			return fmt.Errorf("run %s panicked: %s", out, r.panicValue())
		}

		if code != 0 {
			return fmt.Errorf("run %s: exit %d\n%s", out, code, r.stderr.String())
		}

		return nil
	case <-time.After(mainTimeout):
		return fmt.Errorf("run %s did not return within %s\n%s", out, mainTimeout, r.stderr.String())
	}
}

// historyDoc is the part of history --json these tests read.
type historyDoc struct {
	Series []struct {
		Runs []struct {
			File   string `json:"file"`
			Label  string `json:"label"`
			Commit string `json:"commit"`
		} `json:"runs"`
		Metrics []struct {
			Operation    string     `json:"operation"`
			Metric       string     `json:"metric"`
			Values       []*float64 `json:"values"`
			ChangePoints []struct {
				Run   int     `json:"run"`
				File  string  `json:"file"`
				Label string  `json:"label"`
				Ratio float64 `json:"ratio"`
				Worse bool    `json:"worse"`
			} `json:"change_points"`
		} `json:"metrics"`
	} `json:"series"`
}

// TestHistoryFindsPlantedStep is issue 23's end-to-end check, from real
// results files: 12 runs against the test server at a 20 ms reply delay,
// then 8 at 30 ms (the planted step, +50%), and beside them an unchanged
// series of 20 runs at 20 ms (another recordcount, so a series of its
// own). history must put a change point at the first slow run (run 13,
// index 12, one run either way allowed) in p50 and in p99, worse, of
// about the planted size; find no change of 10% or more in the unchanged
// series; and --fail-on-regression 'p99 +10%' must exit 3 on the stepped
// series and 0 on the flat one.
//
// The flat series is allowed change points smaller than 10%: the test
// server's delay is fixed, so what moves a flat series is the machine's
// load between runs, which is real (a 2% drift while another job builds)
// and which a detector at α = 0.05 is right to report. A change the gate's
// 10% would act on is what must not appear.
func TestHistoryFindsPlantedStep(t *testing.T) {
	stepped, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(historyBase)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = stepped.Close() })

	flat, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(historyBase)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = flat.Close() })

	dir := t.TempDir()
	stepDir, flatDir := filepath.Join(dir, "stepped"), filepath.Join(dir, "flat")

	for _, d := range []string{stepDir, flatDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	const sha = "0123456789abcdef0123456789abcdef01234567"

	// The two series are interleaved, run i of one after run i of the
	// other, so that a stretch of heavy load on the machine falls on both
	// alike. One run at a time: on a machine shared with other jobs, a
	// process that asks for less than its share of the CPU is woken
	// promptly, and two runs at once ask for twice as much.
	for i := 1; i <= 20; i++ {
		if i == 13 {
			stepped.SetLatency(wiretest.Fixed(historySlow))
		}

		label := "v1"
		if i >= 13 {
			label = "v2"
		}

		if err := historyRun(stepped, filepath.Join(stepDir, fmt.Sprintf("step-%02d.json", i)), label, sha, "20"); err != nil {
			t.Fatal(err)
		}

		if err := historyRun(flat, filepath.Join(flatDir, fmt.Sprintf("flat-%02d.json", i)), "v1", sha, "30"); err != nil {
			t.Fatal(err)
		}
	}

	jsonPath := filepath.Join(dir, "history.json")
	htmlPath := filepath.Join(dir, "history.html")

	code, stdout, stderr := runMain(t, "history", dir, "--json", jsonPath, "--html", htmlPath)
	if code != 0 {
		t.Fatalf("history: exit %d\n%s\n%s", code, stdout, stderr)
	}

	t.Logf("history:\n%s", stdout)

	var doc historyDoc

	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}

	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, data)
	}

	if len(doc.Series) != 2 {
		t.Fatalf("%d series, want 2 (stepped and flat)\n%s", len(doc.Series), stdout)
	}

	const first = 12 // the index of step-13.json, the first slow run

	// The flat series' own spread, for a failure message: on a machine
	// too busy for the test, identical runs differ by more than the step.
	flatSpread := map[string]string{}

	for _, s := range doc.Series {
		if strings.Contains(s.Runs[0].File, "flat-") {
			for _, m := range s.Metrics {
				if m.Operation == "read" {
					flatSpread[m.Metric] = spreadText(m.Values)
				}
			}
		}
	}

	for _, s := range doc.Series {
		isStep := strings.Contains(s.Runs[0].File, "step-")

		if len(s.Runs) != 20 {
			t.Fatalf("series of %s has %d runs, want 20", s.Runs[0].File, len(s.Runs))
		}

		if s.Runs[0].Label != "v1" || s.Runs[0].Commit != sha {
			t.Errorf("run %s: label %q, commit %q; want v1 and %s", s.Runs[0].File, s.Runs[0].Label, s.Runs[0].Commit, sha)
		}

		checked := 0

		for _, m := range s.Metrics {
			if m.Operation != "read" || (m.Metric != "p50" && m.Metric != "p99") {
				continue
			}

			checked++

			if !isStep {
				for _, c := range m.ChangePoints {
					if c.Ratio >= 1.1 || c.Ratio <= 1/1.1 {
						t.Errorf("flat series, read %s: a change of 10%% or more: %+v\nvalues %s", m.Metric, c, valuesText(m.Values))
					}
				}

				continue
			}

			// The planted change must be found where it is, at about its
			// size, and nothing of its size elsewhere.
			found := false

			for _, c := range m.ChangePoints {
				at := c.Run >= first-1 && c.Run <= first+1 && c.Worse

				switch {
				case at && c.Ratio >= 1.3:
					found = true

					if c.Run == first && (filepath.Base(c.File) != "step-13.json" || c.Label != "v2") {
						t.Errorf("stepped series, read %s: the change at index %d names %s (%s), want step-13.json (v2)", m.Metric, c.Run, c.File, c.Label)
					}
				case c.Ratio >= 1.3 || c.Ratio <= 1/1.3:
					t.Errorf("stepped series, read %s: a change of the planted size elsewhere: %+v", m.Metric, c)
				}
			}

			if !found {
				t.Errorf("stepped series, read %s: change points %+v; want one at run index %d±1, worse, ratio ~1.5\nvalues %s\n"+
					"(the flat series' identical runs ranged %s in read %s)",
					m.Metric, m.ChangePoints, first, valuesText(m.Values), flatSpread[m.Metric], m.Metric)
			}
		}

		if checked != 2 {
			t.Errorf("series of %s: %d of read p50 and p99 found", s.Runs[0].File, checked)
		}
	}

	// The page draws both series: read latency and throughput each.
	page, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}

	if n := strings.Count(string(page), `<svg class="history-chart"`); n != 4 || !strings.Contains(string(page), "step-13.json") {
		t.Errorf("--html: %d charts, want 4, and the first slow run named", n)
	}

	if !strings.Contains(stdout, "Changed recently (within the newest 8 runs): ") {
		t.Errorf("the table's last line does not report the change:\n%s", stdout)
	}

	if !strings.Contains(stdout, "step-13.json (v2, commit 0123456789ab)") {
		t.Errorf("the output does not name the first slow run with its label and commit:\n%s", stdout)
	}

	// The gate, as CI would run it: the command's exit code.
	code, _, stderr = runMain(t, "history", stepDir, "--fail-on-regression", "p99 +10%")
	if code != ExitRegression {
		t.Errorf("--fail-on-regression 'p99 +10%%' on the stepped series: exit %d, want %d\n%s", code, ExitRegression, stderr)
	}

	if !strings.Contains(stderr, "read:p99 changed at") || !strings.Contains(stderr, "previously") {
		t.Errorf("the regression message does not say where it starts and the previous level:\n%s", stderr)
	}

	if code, _, stderr = runMain(t, "history", flatDir, "--fail-on-regression", "p99 +10%"); code != 0 {
		t.Errorf("--fail-on-regression 'p99 +10%%' on the flat series: exit %d, want 0\n%s", code, stderr)
	}

	// The step is +50%: a gate that allows more passes, and so does one on
	// an increase of throughput, which fell.
	if code, _, stderr = runMain(t, "history", stepDir, "--fail-on-regression", "read:p50 +100%"); code != 0 {
		t.Errorf("--fail-on-regression 'read:p50 +100%%' on a 50%% step: exit %d, want 0\n%s", code, stderr)
	}

	if code, _, stderr = runMain(t, "history", stepDir, "--fail-on-regression", "throughput +20%"); code != 0 {
		t.Errorf("--fail-on-regression 'throughput +20%%' (an increase) on a series that got slower: exit %d, want 0\n%s", code, stderr)
	}

	code, stdout, _ = runMain(t, "history", filepath.Join(stepDir, "step-01.json"), filepath.Join(stepDir, "step-02.json"))
	if code != 0 || !strings.Contains(stdout, "too few runs to find a change point: 2, at least 8 needed") {
		t.Errorf("history of 2 runs: exit %d\n%s", code, stdout)
	}
}

// valuesText shows a metric's values for a failure message.
func valuesText(vs []*float64) string {
	var b strings.Builder

	for _, v := range vs {
		if v == nil {
			b.WriteString(" -")
		} else {
			fmt.Fprintf(&b, " %.0f", *v)
		}
	}

	return b.String()
}

// spreadText is "10.2ms to 57.1ms": the least and greatest of values.
func spreadText(vs []*float64) string {
	lo, hi := math.Inf(1), math.Inf(-1)

	for _, v := range vs {
		if v != nil {
			lo, hi = min(lo, *v), max(hi, *v)
		}
	}

	return fmt.Sprintf("%.1fms to %.1fms", lo/1000, hi/1000)
}
