package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// historyRuns runs ycsb-c n times against srv, writing dir/NAME-01.json
// and so on, labelled label, with CI's commit id commit in the environment.
func historyRuns(t *testing.T, srv *wiretest.Server, dir, name string, from, n int, label, commit, records string) {
	t.Helper()

	for i := from; i < from+n; i++ {
		out := filepath.Join(dir, fmt.Sprintf("%s-%02d.json", name, i))
		r := newCLIRun("run", "../../workloads/ycsb/c.yaml", "--uri", srv.URI(), "--out", out, "--quiet",
			"--no-explain", "--server-stats-interval", "0", "--set", "recordcount="+records, "--max-operations", "40",
			"--label", label)
		r.st.Getenv = func(k string) string {
			if k == "GITHUB_SHA" {
				return commit
			}

			return map[string]string{"CI": "1"}[k]
		}

		if code := r.wait(t, r.start(), mainTimeout); code != 0 {
			t.Fatalf("run %s: exit %d\n%s", out, code, r.stderr.String())
		}
	}
}

// TestHistoryFindsPlantedStep builds a history from real runs against the
// test server: 8 runs with a 1ms reply delay, then 5 with 30ms (the
// planted step, large so that a loaded machine's scheduling delays, which
// reach several milliseconds in a p99 of 40 operations, cannot blur it),
// and beside them an unchanged series of 8 runs at 5ms (a different
// recordcount, so a series of its own). history must put the change in p50
// at the first slow run, name its file and label, and
// --fail-on-regression must fail on the stepped series and pass when the
// gate allows more than the step.
func TestHistoryFindsPlantedStep(t *testing.T) {
	t.Parallel()

	stepped, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = stepped.Close() })

	flat, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(5 * time.Millisecond)})
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

	historyRuns(t, stepped, stepDir, "step", 1, 8, "v1", sha, "20")
	stepped.SetLatency(wiretest.Fixed(30 * time.Millisecond))
	historyRuns(t, stepped, stepDir, "step", 9, 5, "v2", sha, "20")
	historyRuns(t, flat, flatDir, "flat", 1, 8, "v1", sha, "30")

	jsonPath := filepath.Join(dir, "history.json")

	code, stdout, stderr := runMain(t, "history", dir, "--json", jsonPath)
	if code != 0 {
		t.Fatalf("history: exit %d\n%s\n%s", code, stdout, stderr)
	}

	var doc struct {
		Series []struct {
			Key struct {
				Workload string `json:"workload"`
			} `json:"key"`
			Runs []struct {
				File   string `json:"file"`
				Label  string `json:"label"`
				Commit string `json:"commit"`
			} `json:"runs"`
			Metrics []struct {
				Operation    string `json:"operation"`
				Metric       string `json:"metric"`
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

	for _, s := range doc.Series {
		isStep := strings.Contains(s.Runs[0].File, "step-")
		const want = 8 // the index of step-09.json, the first slow run

		if len(s.Runs) != map[bool]int{true: 13, false: 8}[isStep] {
			t.Fatalf("series of %s has %d runs", s.Runs[0].File, len(s.Runs))
		}

		if s.Runs[0].Label != "v1" || s.Runs[0].Commit != sha {
			t.Errorf("run %s: label %q, commit %q; want v1 and %s", s.Runs[0].File, s.Runs[0].Label, s.Runs[0].Commit, sha)
		}

		for _, m := range s.Metrics {
			// p50 is what the test server sets (1ms, then 30ms); a p99
			// of 40 operations is the second slowest, and a loaded
			// machine's delays move it a run either way of the step.
			if m.Operation != "read" || m.Metric != "p50" {
				continue
			}

			if !isStep {
				// Whether a flat series of real runs shows a change
				// point depends on the machine's load, not on the code:
				// the false-change rate is measured on seeded series in
				// internal/analysis/history. Here the flat series only
				// shows that runs group into series of their own.
				continue
			}

			// The planted change must be found where it is, at its size,
			// and nothing of its size elsewhere.
			found := false

			for _, c := range m.ChangePoints {
				at := c.Run == want && filepath.Base(c.File) == "step-09.json" && c.Label == "v2" && c.Worse

				switch {
				case at && c.Ratio >= 3:
					found = true
				case c.Ratio >= 3 || c.Ratio <= 1.0/3:
					t.Errorf("stepped series, p50: a change of the planted size elsewhere: %+v", c)
				}
			}

			if !found {
				t.Errorf("stepped series, %s: change points %+v; want one at run index 8, step-09.json, v2, worse, ratio ~30", m.Metric, m.ChangePoints)
			}
		}
	}

	if !strings.Contains(stdout, "step-09.json (v2, commit 0123456789ab)") {
		t.Errorf("the output does not name the first slow run with its label and commit:\n%s", stdout)
	}

	code, _, stderr = runMain(t, "history", stepDir, "--fail-on-regression", "read:p50 +20%")
	if code != ExitRegression {
		t.Fatalf("--fail-on-regression on the stepped series: exit %d, want %d\n%s", code, ExitRegression, stderr)
	}

	if !strings.Contains(stderr, "step-09.json") || !strings.Contains(stderr, "previously") {
		t.Errorf("the regression message does not say where it starts and the previous level:\n%s", stderr)
	}

	// The step is 30×: a gate that allows more than that passes.
	if code, _, stderr = runMain(t, "history", stepDir, "--fail-on-regression", "read:p50 +5000%"); code != 0 {
		t.Errorf("--fail-on-regression 'read:p50 +5000%%' on a 30× step: exit %d, want 0\n%s", code, stderr)
	}

	if code, _, stderr = runMain(t, "history", stepDir, "--fail-on-regression", "throughput +20%"); code != 0 {
		t.Errorf("--fail-on-regression 'throughput +20%%' (an increase) on a series that got slower: exit %d, want 0\n%s", code, stderr)
	}

	code, stdout, _ = runMain(t, "history", filepath.Join(stepDir, "step-01.json"), filepath.Join(stepDir, "step-02.json"))
	if code != 0 || !strings.Contains(stdout, "too few runs to find a change point: 2, at least 8 needed") {
		t.Errorf("history of 2 runs: exit %d\n%s", code, stdout)
	}
}

func TestHistoryBadInput(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	notResults := filepath.Join(dir, "other.json")

	if err := os.WriteFile(notResults, []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"history", notResults}, "no schema_version"},
		{[]string{"history", filepath.Join(dir, "missing")}, "missing"},
		{[]string{"history", dir, "--fail-on-regression", "p99 10"}, "--fail-on-regression"},
		{[]string{"history", dir, "--min-size", "1"}, "--min-size"},
		{[]string{"history", dir, "--alpha", "2"}, "--alpha"},
		{[]string{"run", "../../workloads/ycsb/c.yaml", "--label", "a\nb"}, "--label"},
	} {
		code, _, stderr := runMain(t, c.args...)
		if code != ExitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d naming %q", c.args, code, stderr, ExitBadInput, c.want)
		}

		assertNoStackTrace(t, stderr)
	}

	// In a directory, a JSON file that is not a results file is skipped
	// with a reason, not an error.
	code, stdout, stderr := runMain(t, "history", dir)
	if code != 0 || !strings.Contains(stdout, "Skipped "+notResults) {
		t.Errorf("history DIR with a foreign JSON file: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// --json - leaves standard output to the JSON document.
	code, stdout, stderr = runMain(t, "history", dir, "--json", "-")

	var doc struct {
		Skipped []struct{ File, Reason string } `json:"skipped"`
	}

	if err := json.Unmarshal([]byte(stdout), &doc); code != 0 || err != nil || len(doc.Skipped) != 1 || doc.Skipped[0].File != notResults {
		t.Errorf("history DIR --json -: exit %d, %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
}

func TestCICommit(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, ""},
		{map[string]string{"GITHUB_SHA": "ABCDEF0123456"}, "abcdef0123456"},
		{map[string]string{"CI_COMMIT_SHA": "0123456789abcdef"}, "0123456789abcdef"},
		{map[string]string{"GITHUB_SHA": "not a commit; password=x"}, ""},
		{map[string]string{"GIT_COMMIT": "abc"}, ""}, // too short to be one
	} {
		if got := ciCommit(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("ciCommit(%v) = %q; want %q", c.env, got, c.want)
		}
	}
}
