//go:build e2e

package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// growthAnswerRe is the shape of the error-tracker study's answer, the last
// line of its output: each operation's p95 growth verdict.
var growthAnswerRe = regexp.MustCompile(`^Growth: create p95 (grows|shrinks|flat|inconclusive)[^;]*; group p95 (grows|shrinks|flat|inconclusive)[^;]*; search p95 (grows|shrinks|flat|inconclusive)`)

// TestErrorTrackerAnswers runs the error-tracker study on the embedded
// default at a small size set with --set alone (3 blocks of 100 reports
// and 10 searches) and checks that the last line of its output is the
// growth answer, one clause per operation on p95, and that every clause
// with a verdict quotes a slope per 1,000 notices.
func TestErrorTrackerAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study on an embedded FerretDB")
	}

	out := filepath.Join(t.TempDir(), "results.json")

	code, stdout, stderr := runMain(t, "run", "../../workloads/studies/error-tracker.yaml",
		"--set", "notices=300", "--set", "per_block=100", "--set", "searches=10",
		"--out", out, "--no-explain", "--server-stats-interval", "0", "--quiet")
	if code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	last := lines[len(lines)-1]

	if !growthAnswerRe.MatchString(last) {
		t.Fatalf("last line %q is not the growth answer\nstdout:\n%s", last, stdout)
	}

	for _, clause := range strings.Split(strings.TrimPrefix(last, "Growth: "), "; ") {
		if !strings.Contains(clause, "inconclusive") && !strings.Contains(clause, " per 1,000 notices") {
			t.Errorf("clause %q quotes no slope per 1,000 notices", clause)
		}
	}
}
