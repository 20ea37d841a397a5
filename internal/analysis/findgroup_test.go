package analysis

import (
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

// TestGroupFindings groups plan warnings by collection and cause, keeps
// findings without a plan apart, and ranks by the time the operations
// concerned took.
func TestGroupFindings(t *testing.T) {
	op := func(name string, count int64, mean float64) result.Operation {
		return result.Operation{Name: name, Count: count, LatencyUS: result.Latency{Mean: mean}}
	}

	res := &result.Result{
		Explain: []result.Explain{
			{
				Operation: "a", Collection: "logs", CollectionScan: true, DocsExamined: 100, DocsReturned: 1,
				Warnings: []string{"collection scan on logs (examined 100, returned 1)"},
			},
			{
				Operation: "b", Collection: "logs", CollectionScan: true, DocsExamined: 100, DocsReturned: 0,
				Warnings: []string{"collection scan on logs (examined 100, returned 0)"},
			},
			{
				Operation: "c", Collection: "users", CollectionScan: true, DocsExamined: -1, DocsReturned: -1,
				Warnings: []string{"collection scan on users"},
			},
		},
		Phases: []result.Phase{
			{Name: "load", Model: "load", Operations: []result.Operation{op("load", 1000, 1e6)}},
			{Name: "run", Model: "closed", Operations: []result.Operation{
				op("a", 100, 1000), op("b", 100, 2000), op("c", 1000, 1000), op("d", 10, 10),
			}},
		},
		Findings: []result.Finding{
			{Severity: "warning", Operation: "a", Text: "collection scan on logs (examined 100, returned 1)"},
			{Severity: "warning", Operation: "b", Text: "collection scan on logs (examined 100, returned 0)"},
			{Severity: "warning", Operation: "c", Text: "collection scan on users"},
			{Severity: "warning", Operation: "d", Text: "3 errors in the run phase (timeout:3)"},
			{Severity: "info", Text: "server counters: top: not supported"},
			{Severity: "warning", Text: "run phase: all 8 in-flight slots were busy"},
		},
	}

	var got []string
	for _, g := range GroupFindings(res) {
		got = append(got, g.Severity+" "+g.Text)
	}

	want := []string{
		"warning run phase: all 8 in-flight slots were busy",
		"warning collection scan on users: c — 1s of 1.3s in operations",
		"warning collection scan on logs: a (examined 100, returned 1), b (examined 100, returned 0) — 300ms of 1.3s in operations",
		"warning d: 3 errors in the run phase (timeout:3) — 100µs of 1.3s in operations",
		"info server counters: top: not supported",
	}

	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	if GroupFindings(nil) != nil || len(GroupFindings(&result.Result{})) != 0 {
		t.Error("no result or no findings gave groups")
	}
}
