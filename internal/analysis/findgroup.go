package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/threshold"
)

// FindingGroup is one cause on one collection, said once for all the
// operations it concerns: "collection scan on errors: get_error,
// find_by_message — 2.1s of 3.4s in operations".
type FindingGroup struct {
	// Severity is the findings' severity ("warning" or "info").
	Severity string
	// Cause is what was found: "collection scan", "many documents
	// examined", or the finding's own text when it has no plan behind it
	// (errors, schedules not kept).
	Cause string
	// Collection is the collection concerned, when the finding comes from
	// a plan.
	Collection string
	// Operations are the operations concerned, in the order found; empty
	// for a finding about a whole phase or the server.
	Operations []string
	// Details are the per-operation particulars ("examined 100000,
	// returned 1"), one per operation, empty where there are none.
	Details []string
	// CostUS is the time the operations concerned took in the measured
	// phases (Σ count × mean latency, µs), and TotalUS that of every
	// operation; a finding about a whole phase concerns all of it.
	CostUS, TotalUS float64
	// Text is the group in words, for terminal and report.
	Text string
}

// GroupFindings groups the result's findings by collection and cause and
// ranks them by the time they cost: warnings first, each kind ranked by
// the measured time of the operations concerned, highest first.
func GroupFindings(res *result.Result) []FindingGroup {
	if res == nil {
		return nil
	}

	costs, total := operationTimes(res)

	var groups []*FindingGroup

	index := map[string]*FindingGroup{}

	for _, f := range res.Findings {
		coll, cause, detail := classify(res, f)
		key := f.Severity + "\x00" + coll + "\x00" + cause

		g := index[key]
		if g == nil || f.Operation == "" || coll == "" {
			g = &FindingGroup{Severity: f.Severity, Cause: cause, Collection: coll, TotalUS: total}
			groups = append(groups, g)

			if coll != "" {
				index[key] = g
			}
		}

		switch {
		case f.Operation == "":
			g.CostUS = total
		case !slices.Contains(g.Operations, f.Operation):
			g.Operations = append(g.Operations, f.Operation)
			g.Details = append(g.Details, detail)
			g.CostUS += costs[f.Operation]
		}
	}

	slices.SortStableFunc(groups, func(a, b *FindingGroup) int {
		if c := cmp.Compare(rank(a.Severity), rank(b.Severity)); c != 0 {
			return c
		}

		return cmp.Compare(b.CostUS, a.CostUS)
	})

	out := make([]FindingGroup, 0, len(groups))

	for _, g := range groups {
		g.Text = g.text()
		out = append(out, *g)
	}

	return out
}

func rank(severity string) int {
	if severity == "warning" {
		return 0
	}

	return 1
}

// text words the group.
func (g *FindingGroup) text() string {
	var b strings.Builder

	if g.Collection == "" && len(g.Operations) == 1 {
		// A finding without a plan reads as before: "op: text".
		b.WriteString(g.Operations[0] + ": " + g.Cause)
		g.writeCost(&b)

		return b.String()
	}

	b.WriteString(g.Cause)

	if g.Collection != "" {
		b.WriteString(" on " + g.Collection)
	}

	if len(g.Operations) > 0 {
		b.WriteString(": ")

		for i, op := range g.Operations {
			if i > 0 {
				b.WriteString(", ")
			}

			b.WriteString(op)

			if g.Details[i] != "" {
				b.WriteString(" (" + g.Details[i] + ")")
			}
		}
	}

	g.writeCost(&b)

	return b.String()
}

// writeCost appends the time the group's operations cost, out of all.
func (g *FindingGroup) writeCost(b *strings.Builder) {
	if g.CostUS > 0 && g.TotalUS > 0 && len(g.Operations) > 0 {
		fmt.Fprintf(b, " — %s of %s in operations", threshold.FormatLatency(g.CostUS), threshold.FormatLatency(g.TotalUS))
	}
}

// classify finds a finding's collection and cause from the plan it came
// from: a plan warning of the same operation and text. Findings without a
// plan are their own cause.
func classify(res *result.Result, f result.Finding) (coll, cause, detail string) {
	text := strings.TrimSpace(f.Text)

	for _, e := range res.Explain {
		if e.Operation != f.Operation || e.Collection == "" || !slices.Contains(e.Warnings, f.Text) {
			continue
		}

		switch {
		case e.CollectionScan && strings.HasPrefix(text, "collection scan"):
			cause = "collection scan"
		case strings.HasPrefix(text, "examined "):
			cause = "many documents examined per document returned"
		default:
			return e.Collection, text, ""
		}

		if e.DocsExamined >= 0 && e.DocsReturned >= 0 {
			detail = fmt.Sprintf("examined %d, returned %d", e.DocsExamined, e.DocsReturned)
		}

		return e.Collection, cause, detail
	}

	return "", text, ""
}

// operationTimes is each operation's time in the measured phases (count ×
// mean latency, µs) and their total.
func operationTimes(res *result.Result) (map[string]float64, float64) {
	costs := map[string]float64{}
	total := 0.0

	for _, p := range res.Phases {
		if p.Excluded || p.IsLoad() {
			continue
		}

		for _, o := range p.Operations {
			t := float64(o.Count) * o.LatencyUS.Mean
			costs[o.Name] += t
			total += t
		}
	}

	return costs, total
}
