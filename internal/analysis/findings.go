package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mongobench/mongobench/internal/results/result"
)

// Findings collects the observations worth a user's attention, most
// important first: collection scans and heavy examination, schedules not
// kept, errors by kind, unsupported evidence.
func Findings(res *result.Result) []result.Finding {
	var out []result.Finding

	for _, e := range res.Explain {
		for _, w := range e.Warnings {
			out = append(out, result.Finding{Severity: "warning", Operation: e.Operation, Text: w})
		}
	}

	for _, p := range res.Phases {
		if p.Excluded {
			continue
		}

		if p.Schedule != nil && p.Schedule.Warning != "" {
			out = append(out, result.Finding{Severity: "warning", Text: p.Name + " phase: " + p.Schedule.Warning})
		}

		for _, bg := range p.Background {
			if bg.Schedule != nil && bg.Schedule.Warning != "" {
				out = append(out, result.Finding{
					Severity: "warning", Operation: bg.Operation,
					Text: "background job: " + bg.Schedule.Warning,
				})
			}
		}

		for _, o := range p.Operations {
			if len(o.Errors) == 0 {
				continue
			}

			var n int64
			for _, c := range o.Errors {
				n += c
			}

			out = append(out, result.Finding{
				Severity: "warning", Operation: o.Name,
				Text: fmt.Sprintf("%d errors in the %s phase (%s)", n, p.Name, ErrorCounts(o.Errors)),
			})
		}
	}

	if res.Server != nil {
		for _, n := range res.Server.Notes {
			out = append(out, result.Finding{Severity: "info", Text: "server counters: " + n})
		}
	}

	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity == "warning" && out[j].Severity != "warning" })

	return out
}

// ErrorCounts lists error counts by kind, most frequent first, as
// "kind:count" words; "0" when there are none. Findings and the summary
// tables say the same thing the same way.
func ErrorCounts(errs map[string]int64) string {
	if len(errs) == 0 {
		return "0"
	}

	kinds := make([]string, 0, len(errs))
	for k := range errs {
		kinds = append(kinds, k)
	}

	sort.Slice(kinds, func(i, j int) bool {
		if errs[kinds[i]] != errs[kinds[j]] {
			return errs[kinds[i]] > errs[kinds[j]]
		}

		return kinds[i] < kinds[j]
	})

	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s:%d", k, errs[k])
	}

	return strings.Join(parts, " ")
}
