package analysis

import (
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

func TestFindings(t *testing.T) {
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

	fs := Findings(res)

	var texts []string
	for _, f := range fs {
		texts = append(texts, f.Severity+" "+f.Operation+" "+f.Text)
	}

	want := []string{
		"warning find_by_message collection scan on errors (examined 1000, returned 1)",
		"warning  run phase: all 8 in-flight slots were busy",
		"warning report_error 3 errors in the run phase (timeout:2 network:1)",
		"info  server counters: top: not supported by this server (CommandNotFound)",
	}

	if strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
}
