package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
)

// durabilityRow is one line of a durability table: what one crash under
// load cost in acknowledged writes (see result.Durability), and, where the
// comparison block ranks the same target, what the setting costs.
type durabilityRow struct {
	Name         string
	WriteConcern string
	Cost         string
	Acknowledged string
	Lost         string
	InFlight     string
	Restart      string
	Crash        string
	Server       string
	Answer       string
	Error        string
	Bad          bool

	cost durabilityCost
}

// newDurabilityRows builds the rows of res's durability phase, with each
// target's cost from the first comparison block that ranks it.
func newDurabilityRows(res *result.Result) []durabilityRow {
	if len(res.Durability) == 0 {
		return nil
	}

	costs := durabilityCosts(res)

	rows := make([]durabilityRow, 0, len(res.Durability))

	for i := range res.Durability {
		d := &res.Durability[i]

		name := d.Target
		if d.Variant != "" {
			name += "/" + d.Variant
		}

		row := durabilityRow{
			Name: orDash(name), WriteConcern: d.WriteConcern, Cost: orDash(costs[name].text()), cost: costs[name],
			Crash: d.Crash, Server: d.Server, Answer: d.Answer(), Error: d.Error,
		}

		if d.Error == "" {
			row.Acknowledged = groupDigits(d.Acknowledged)
			row.Lost = groupDigits(d.Lost)
			row.InFlight = fmt.Sprintf("%s (%s present)", groupDigits(d.Unacknowledged), groupDigits(d.UnacknowledgedPresent))
			row.Restart = fmt.Sprintf("%.1fs", d.RestartS)
			row.Bad = d.Lost > 0
		}

		rows = append(rows, row)
	}

	return rows
}

// durabilityCost is what a comparison block says of one contender.
type durabilityCost struct {
	figure, value, verdict string
}

// text is the cost for the table: "insert p50 6.99ms: 8.6× slower (…)".
func (c durabilityCost) text() string {
	if c.value == "" {
		return ""
	}

	return fmt.Sprintf("%s %s: %s", c.figure, c.value, c.verdict)
}

// durabilityCosts maps the names a comparison block ranks (targets, or
// variants) to their figure and verdict, from the first block that names
// each.
func durabilityCosts(res *result.Result) map[string]durabilityCost {
	costs := map[string]durabilityCost{}

	for _, b := range analysis.Blocks(res) {
		if b.Growth {
			continue
		}

		for _, g := range b.Groups {
			for _, l := range g.Lines {
				if _, ok := costs[l.Name]; !ok {
					costs[l.Name] = durabilityCost{figure: b.Figure.String(), value: l.Value, verdict: l.Verdict}
				}
			}
		}
	}

	return costs
}

// WriteDurability writes the durability phase of res (see
// result.Durability): per target, the acknowledged documents, those lost
// after the crash, the writes in flight, and what the setting costs; then
// the answer in one line, the last of the run's output. It writes nothing
// when the run had no durability phase.
func WriteDurability(w io.Writer, res *result.Result) {
	rows := newDurabilityRows(res)
	if len(rows) == 0 {
		return
	}

	fmt.Fprintln(w, "\nDurability: acknowledged writes lost after a crash under load (the server killed with SIGKILL, restarted on its data)")

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  target\twrite concern\tacknowledged\tlost\tin flight\trestart\tcost")

	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "  %s\t%s\t-\t-\t-\t-\t%s\n", r.Name, r.WriteConcern, r.Answer)
			continue
		}

		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.WriteConcern, r.Acknowledged, r.Lost, r.InFlight, r.Restart, r.Cost)
	}

	_ = tw.Flush()

	crashes := map[string]bool{}

	for _, r := range rows {
		if r.Crash != "" && !crashes[r.Crash] {
			crashes[r.Crash] = true
			fmt.Fprintf(w, "  crash: %s\n", r.Crash)
		}
	}

	fmt.Fprintln(w, DurabilityAnswer(res))
}

// DurabilityAnswer is the durability phase's answer in one line: per
// target, what the setting costs (the comparison block's figure and
// verdict, when it ranks the target) and what it buys (the acknowledged
// documents lost after the crash).
func DurabilityAnswer(res *result.Result) string {
	rows := newDurabilityRows(res)

	figure := ""
	parts := make([]string, 0, len(rows))

	for _, r := range rows {
		var part strings.Builder

		part.WriteString(r.Name)

		if r.cost.value != "" {
			figure = r.cost.figure
			fmt.Fprintf(&part, " %s %s,", r.cost.value, r.cost.verdict)
		}

		if r.Error != "" {
			part.WriteString(" not checked")
		} else {
			fmt.Fprintf(&part, " lost %s of %s", r.Lost, r.Acknowledged)
		}

		parts = append(parts, part.String())
	}

	head := "Answer (acknowledged documents lost after a crash under load"
	if figure != "" {
		head = "Answer (cost: " + figure + "; buys: acknowledged documents lost after a crash under load"
	}

	return head + "): " + strings.Join(parts, "; ")
}

// DurabilityMarkdown is the durability table in Markdown, empty when the
// run had no durability phase.
func DurabilityMarkdown(res *result.Result) string {
	rows := newDurabilityRows(res)
	if len(rows) == 0 {
		return ""
	}

	var b strings.Builder

	b.WriteString("\n### Durability: acknowledged writes lost after a crash under load\n\n")
	b.WriteString("| target | write concern | acknowledged | lost | in flight | restart | cost |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | --- |\n")

	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(&b, "| %s | %s | - | - | - | - | %s |\n", r.Name, r.WriteConcern, mdCell(r.Answer))
			continue
		}

		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Name, r.WriteConcern, r.Acknowledged, r.Lost, r.InFlight, r.Restart, mdCell(r.Cost))
	}

	b.WriteString("\n" + DurabilityAnswer(res) + "\n")

	return b.String()
}

// mdCell keeps a Markdown table cell on its line.
func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
