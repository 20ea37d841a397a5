package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// historyRuns runs ycsb-c n times against srv, writing dir/NAME-01.json
// and so on, labelled label, with CI's commit id commit in the environment:
// short runs of 40 operations, for tests of the history's plumbing (the
// store's), not of its detection (history_e2e_test.go).
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

// TestHistoryHTMLEmpty: --html writes a page even when there is nothing
// to draw, saying so.
func TestHistoryHTMLEmpty(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	page := filepath.Join(dir, "out", "history.html")

	code, stdout, stderr := runMain(t, "history", dir, "--html", page)
	if code != 0 {
		t.Fatalf("history --html: exit %d\n%s\n%s", code, stdout, stderr)
	}

	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}

	if !strings.Contains(string(data), "No runs to make a history of.") {
		t.Errorf("the page of an empty history does not say so")
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
