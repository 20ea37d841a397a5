//go:build e2e

package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// lastLine is the last non-empty line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")

	return lines[len(lines)-1]
}

// TestQueryTweaksAnswer runs the query-tweaks study small on the embedded
// FerretDB (SQLite) with explain on, and checks its last line answers the
// question: the sort tweak is named as one this server does not do (its
// explain shows no index on either side), with where it would show, and
// every other ranked tweak has its verdict.
func TestQueryTweaksAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study on an embedded FerretDB")
	}

	out := filepath.Join(t.TempDir(), "qt.json")

	code, stdout, stderr := runMain(t, "run", filepath.Join(studiesDir, "query-tweaks.yaml"), "--out", out, "--quiet",
		"--set", "events=100", "--set", "one_doc=60", "--set", "projection=20", "--set", "sort=12",
		"--set", "capped=400", "--set", "paced=1s", "--server-stats-interval", "0")
	if code != ExitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	last := lastLine(stdout)
	if !strings.HasPrefix(last, "Answer: ") ||
		!strings.Contains(last, "sort: no index was used on either side (explain)") || !strings.Contains(last, "on mongod") {
		t.Errorf("last line %q, want the answer naming the index tweak this server does not do\nstdout:\n%s", last, stdout)
	}

	// 200 inserts into a collection capped at 100: FerretDB v1 keeps them
	// all (it trims capped collections in the background, not on insert).
	if !strings.Contains(last, "capped_check (read back): log_capped holds ") {
		t.Errorf("answer %q, want the capped read-back's evidence", last)
	}

	for _, phase := range []string{"one_doc", "projection", "capped"} {
		if !strings.Contains(last, phase) {
			t.Errorf("answer %q says nothing of %s", last, phase)
		}
	}

	if !strings.Contains(stdout, "explain: the same plan for find_one and find_limit_1") || !strings.Contains(stdout, `"singleBatch":true`) {
		t.Errorf("no explain evidence for one_doc (the commands as sent)\nstdout:\n%s", stdout)
	}
}

// crossed finds, in an answer, a variant with 100 documents present ranked
// against a cleanup of the empty collection (a clause of the answer names
// one contender and its reference).
var crossed = regexp.MustCompile(`_100 [^;,]*than (delete_many|drop_recreate) \(`)

// TestCleanupAnswer runs the cleanup study small on two of its engines and
// checks it ranks like with like: each comparison group on each target,
// and one answer line gathering them.
func TestCleanupAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study on embedded FerretDBs")
	}

	dir := t.TempDir()

	code, stdout, stderr := runMain(t, "run", filepath.Join(studiesDir, "cleanup.yaml"), "--out", filepath.Join(dir, "c.json"),
		"--quiet", "--set", "seconds=200ms", "--target", "embedded", "--target", "embedded-memory", "--server-stats-interval", "0")
	if code != ExitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	for _, want := range []string{
		"  variants on embedded, group empty:\n    delete_many ", "  variants on embedded, group fixtures:\n    delete_many_100 ",
		"  variants on embedded-memory, group fixtures:\n    delete_many_100 ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in the block\nstdout:\n%s", want, stdout)
		}
	}

	last := lastLine(stdout)
	if !strings.HasPrefix(last, "Answer: ") || !strings.Contains(last, "empty on embedded") {
		t.Errorf("last line %q, want the answer per group and target", last)
	}

	// The empty collection's cleanup is never the reference of the one
	// with 100 documents present.
	if crossed.MatchString(last) {
		t.Errorf("a fixtures variant was compared with the empty case: %q", last)
	}

	if _, err := os.Stat(filepath.Join(dir, "c.json")); err != nil {
		t.Errorf("no results file: %v", err)
	}
}
