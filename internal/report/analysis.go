package report

import (
	"strings"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/threshold"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// This file lays out the analysis model (package analysis) for the page:
// comparison blocks, tables of verdicts and grouped findings are computed
// there, once, for the terminal, Markdown and this report alike; here they
// are only given CSS classes.

// blockView is a comparison block (analysis.Block).
type blockView struct {
	Heading string
	// Figure names the value column.
	Figure string
	// Answers are the groups' one-line answers (growth blocks).
	Answers []string
	Cost    bool
	Groups  []blockGroupView
}

type blockGroupView struct {
	Title string
	Lines []blockLineView
}

type blockLineView struct {
	Name    string
	Value   string
	Verdict string
	Cost    string
	Class   string
}

// newBlockViews lays out the comparison blocks of the results
// (analysis.Blocks).
func newBlockViews(r *result.Result) []blockView {
	var out []blockView

	for _, b := range analysis.Blocks(r) {
		out = append(out, newBlockView(b))
	}

	return out
}

func newBlockView(b analysis.Block) blockView {
	v := blockView{Heading: "Comparison: " + b.Heading(), Figure: b.Figure.String(), Cost: b.Figure.Cost}

	v.Answers = b.Answers()

	for _, g := range b.Groups {
		gv := blockGroupView{Title: g.Title}
		for _, l := range g.Lines {
			gv.Lines = append(gv.Lines, blockLineView{
				Name: l.Name, Value: l.Value, Verdict: l.Verdict, Cost: l.CostText, Class: kindClass(l.Kind),
			})
		}

		v.Groups = append(v.Groups, gv)
	}

	if b.Answer != "" {
		v.Answers = append(v.Answers, b.Answer)
	}

	return v
}

// kindClass colours a verdict: the reference green, a difference red, an
// inconclusive verdict grey, no significant difference plain.
func kindClass(k verdict.Kind) string {
	switch k {
	case verdict.Reference:
		return "ok-text"
	case verdict.Difference:
		return "bad"
	case verdict.Inconclusive:
		return "muted"
	default:
		return ""
	}
}

// tableView is a table of figures and verdicts (analysis.Table).
type tableView struct {
	Title  string
	Header []tableHead
	Rows   [][]tableCell
}

type tableHead struct {
	Text  string
	Class string
}

type tableCell struct {
	Text  string
	Class string
}

func newTableView(t analysis.Table) tableView {
	v := tableView{Title: t.Title}

	align := func(i int) string {
		if i < len(t.Numeric) && t.Numeric[i] {
			return "num"
		}

		return "text"
	}

	for i, h := range t.Header {
		v.Header = append(v.Header, tableHead{Text: h, Class: align(i)})
	}

	for _, r := range t.Rows {
		row := make([]tableCell, 0, len(r))

		for i, c := range r {
			class := align(i)
			if c.IsVerdict {
				class = strings.TrimSpace("text " + kindClass(c.Kind))
			}

			row = append(row, tableCell{Text: c.Text, Class: class})
		}

		v.Rows = append(v.Rows, row)
	}

	return v
}

// findingGroupView is one cause on one collection (analysis.FindingGroup).
type findingGroupView struct {
	Warning    bool
	Collection string
	Cause      string
	Operations string
	// Cost is the time its operations took, out of all ("2.10s of
	// 3.40s"), "–" when the group names no operation.
	Cost string
}

func newFindingGroupViews(r *result.Result) []findingGroupView {
	var out []findingGroupView

	for _, g := range analysis.GroupFindings(r) {
		v := findingGroupView{Warning: g.Severity == "warning", Collection: g.Collection, Cause: g.Cause, Cost: "–"}
		if v.Collection == "" {
			v.Collection = "–"
		}

		ops := make([]string, len(g.Operations))
		for i, op := range g.Operations {
			ops[i] = op
			if i < len(g.Details) && g.Details[i] != "" {
				ops[i] += " (" + g.Details[i] + ")"
			}
		}

		v.Operations = strings.Join(ops, ", ")

		if len(g.Operations) > 0 && g.TotalUS > 0 {
			v.Cost = threshold.FormatLatency(g.CostUS) + " of " + threshold.FormatLatency(g.TotalUS)
		}

		out = append(out, v)
	}

	return out
}
