//go:build e2e

package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/analysis"
)

// TestRunFindingsGrouped runs searches on the embedded FerretDB (SQLite
// filters only _id in the database, so the message and project searches
// scan the collection): the findings of both operations on "errors" are
// said once, with the time they cost, and ranked first. The run ends after
// a number of operations, so that every operation is measured however slow
// the machine.
func TestRunFindingsGrouped(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded FerretDB")
	}

	out := outPath(t)

	code, stdout, stderr := runMain(t, "run", "testdata/findings_scan.yaml", "--out", out, "--quiet",
		"--server-stats-interval", "0")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	res := readResults(t, out)
	groups := analysis.GroupFindings(res)

	var scan *analysis.FindingGroup

	for i := range groups {
		if groups[i].Cause == "collection scan" && groups[i].Collection == "errors" {
			if scan != nil {
				t.Errorf("two collection-scan groups on errors: %+v", groups)
			}

			scan = &groups[i]
		}
	}

	if scan == nil {
		t.Fatalf("no collection-scan group on errors: %+v\nfindings: %+v", groups, res.Findings)
	}

	for _, op := range []string{"find_by_message", "count_project"} {
		if !strings.Contains(strings.Join(scan.Operations, ","), op) {
			t.Errorf("the scan group lacks %s: %+v", op, scan)
		}
	}

	// Its cost is the scanning operations' time, a part of the total.
	if scan.CostUS <= 0 || scan.CostUS > scan.TotalUS {
		t.Errorf("scan cost %v of %v", scan.CostUS, scan.TotalUS)
	}

	var want float64
	for _, o := range res.MainPhase().Operations {
		if strings.Contains(strings.Join(scan.Operations, ","), o.Name) {
			want += float64(o.Count) * o.LatencyUS.Mean
		}
	}

	if d := scan.CostUS - want; d > 1e-6*want || d < -1e-6*want {
		t.Errorf("scan cost %v, want Σ count × mean = %v", scan.CostUS, want)
	}

	// Printed once, as the first finding, with the time.
	line := regexp.MustCompile(`(?m)^  ! collection scan on errors: .*find_by_message.* — [0-9.]+(µs|ms|s) of [0-9.]+(ms|s) in operations$`)
	if !line.MatchString(stdout) || strings.Count(stdout, "collection scan on errors") != 1 {
		t.Errorf("findings not grouped once:\n%s", stdout)
	}

	if i := strings.Index(stdout, "Findings:\n"); i < 0 || !strings.HasPrefix(stdout[i+len("Findings:\n"):], "  ! collection scan on errors") {
		t.Errorf("the scan is not the first finding:\n%s", stdout)
	}
}
