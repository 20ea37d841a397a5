package cli

import (
	"regexp"
	"strings"
	"testing"
)

// testCompareFailIfAnyMetric gates on metrics beyond the table's default
// ones, per operation: find_by_id's slow tail is 30% slower in cand, so its
// p99.9 and max are too, while insert did not change and nothing failed.
func testCompareFailIfAnyMetric(t *testing.T, fx *compareFixture) {
	code, stdout, stderr := runMain(t, "compare", fx.base, fx.cand,
		"--fail-if", "find_by_id:p99.9 +10%", "--fail-if", "insert:max +10%", "--fail-if", "error_rate +10%")
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitFailed, stdout, stderr)
	}

	fail := regexp.MustCompile(`(?m)^FAIL --fail-if "find_by_id:p99\.9 \+10%": find_by_id: B \(\S*cand\) p99\.9 \S+ → \S+: \+(2\d|3\d)\.\d%, 1\.\d\d× higher`)
	if !fail.MatchString(stderr) || strings.Count(stderr, "FAIL") != 1 {
		t.Errorf("want one failure, of the p99.9 gate:\n%s", stderr)
	}

	for _, ok := range []string{`ok   --fail-if "insert:max +10%"`, `ok   --fail-if "error_rate +10%"`} {
		if !strings.Contains(stderr, ok) {
			t.Errorf("stderr lacks %q:\n%s", ok, stderr)
		}
	}

	// The gated metrics have rows of their own, in their operation's table.
	if !regexp.MustCompile(`(?m)^\s+p99\.9\s.*1\.\d\d× higher`).MatchString(stdout) ||
		!regexp.MustCompile(`(?m)^\s+error_rate\s+0%`).MatchString(stdout) {
		t.Errorf("no p99.9 or error_rate rows:\n%s", stdout)
	}

	// And the output ends with the comparison block of the files.
	if !strings.Contains(stdout, "\nComparison: find_by_id p50 (median of runs)\n  files:\n") {
		t.Errorf("no comparison block:\n%s", stdout)
	}
}
