package cli

import (
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
)

// TestPrintFindings checks that the terminal shows the warnings of a run's
// findings and leaves the informational ones to the results file.
func TestPrintFindings(t *testing.T) {
	t.Parallel()

	res := &result.Result{
		Explain: []result.Explain{
			{Operation: "find_by_message", Warnings: []string{"collection scan on errors (examined 1000, returned 1)"}},
			{Operation: "get_error"},
		},
		Phases: []result.Phase{
			{Name: "warm", Excluded: true, Operations: []result.Operation{{Name: "x", Errors: map[string]int64{"timeout": 9}}}},
			{
				Name:       "run",
				Schedule:   &result.Schedule{Warning: "all 8 in-flight slots were busy"},
				Operations: []result.Operation{{Name: "report_error", Errors: map[string]int64{"timeout": 2, "network": 1}}},
			},
		},
		Server: &result.Server{Notes: []string{"top: not supported by this server (CommandNotFound)"}},
	}

	res.Findings = analysis.Findings(res)

	var b strings.Builder

	printFindings(&b, res)

	if got := b.String(); !strings.Contains(got, "! find_by_message: collection scan on errors") ||
		strings.Contains(got, "server counters") {
		t.Errorf("printed findings:\n%s", got)
	}
}
