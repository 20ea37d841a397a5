package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mongobench/mongobench/internal/analysis/history"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// historyTableMetrics are shown for every operation in the terminal's
// table of a history; other metrics only when they have a change point,
// so that the table stays one screen.
var historyTableMetrics = []string{"throughput", "p50", "p95", "p99", history.MaxRate}

// WriteHistoryTables writes, per series, a compact table of where each
// operation's metrics stand: the latest level against the previous one
// (the medians either side of the last change point; without one, the
// newest run against the median of the runs before it), their ratio with
// its confidence interval at 1−alpha, and how many runs each level rests
// on. The last line answers "did anything change recently?": the change
// points within the newest recent runs of any series, or that there are
// none.
func WriteHistoryTables(w io.Writer, series []history.Series, alpha float64, recent int) {
	if len(series) == 0 {
		return
	}

	ci := fmt.Sprintf("%.0f%% CI", 100*(1-alpha))

	fmt.Fprintln(w, "\nLatest levels: since the last change point against the level before it; without one, the newest run against the median of the runs before it.")

	for _, s := range series {
		fmt.Fprintf(w, "\n%s\n", s.Key)

		var rows [][]string

		for _, mt := range s.Metrics {
			if len(mt.Changes) == 0 && !slices.Contains(historyTableMetrics, mt.Metric) {
				continue
			}

			if r := historyRow(s, mt); r != nil {
				rows = append(rows, r)
			}
		}

		if len(rows) == 0 {
			fmt.Fprintln(w, "  no values")

			continue
		}

		var b strings.Builder

		writeTable(&b, []string{"operation", "metric", "latest", "runs", "previous", "runs", "ratio", ci, "since"}, rows, false)

		for line := range strings.Lines(b.String()) {
			fmt.Fprintln(w, "  "+strings.TrimRight(line, " \n"))
		}
	}

	fmt.Fprintln(w, "\n"+recentLine(series, recent))
}

// historyRow is one metric's row of the table, nil when no run has a
// value.
func historyRow(s history.Series, mt history.Metric) []string {
	m := mt.Threshold()

	var (
		xs  []float64
		idx []int
	)

	for i, v := range mt.Values {
		if isNum(v) {
			xs = append(xs, float64(v))
			idx = append(idx, i)
		}
	}

	if len(xs) == 0 {
		return nil
	}

	if len(mt.Changes) == 0 {
		latest := xs[len(xs)-1]
		if len(xs) == 1 {
			return []string{mt.Operation, mt.Metric, m.Format(latest), "1", "-", "0", "-", "-", "no change point"}
		}

		prev := verdict.Median(xs[:len(xs)-1])

		ratio := math.NaN()
		if prev != 0 {
			ratio = latest / prev
		}

		return []string{
			mt.Operation, mt.Metric, m.Format(latest), "1", m.Format(prev), strconv.Itoa(len(xs) - 1),
			verdict.FormatRatio(ratio), "-", "no change point",
		}
	}

	c := mt.Changes[len(mt.Changes)-1]

	from := 0
	if len(mt.Changes) > 1 {
		from = mt.Changes[len(mt.Changes)-2].Run
	}

	count := func(lo, hi int) string {
		n := 0

		for _, i := range idx {
			if i >= lo && i < hi {
				n++
			}
		}

		return strconv.Itoa(n)
	}

	dir := "better"
	if c.Worse {
		dir = "worse"
	}

	return []string{
		mt.Operation, mt.Metric, m.Format(c.After), count(c.Run, len(mt.Values)), m.Format(c.Before), count(from, c.Run),
		verdict.FormatRatio(c.Ratio), ciText(c), fmt.Sprintf("run %d%s, p = %.3f, %s", c.Run+1, runLabel(s.Runs[c.Run]), c.P, dir),
	}
}

// runLabel is " (v2)" for a run labelled v2, "" for one without a label.
func runLabel(r history.Run) string {
	if r.Label == "" {
		return ""
	}

	return " (" + r.Label + ")"
}

// recentLine lists the change points that start within the newest recent
// runs of their series, in any metric.
func recentLine(series []history.Series, recent int) string {
	var found []string

	for _, s := range series {
		for _, mt := range s.Metrics {
			for _, c := range mt.Changes {
				if c.Run < len(s.Runs)-recent {
					continue
				}

				dir := "better"
				if c.Worse {
					dir = "worse"
				}

				found = append(found, fmt.Sprintf("%s %s %s %s %s from run %d%s",
					s.Key.Workload, mt.Operation, mt.Metric, verdict.FormatRatio(c.Ratio), dir, c.Run+1, runLabel(s.Runs[c.Run])))
			}
		}
	}

	if len(found) == 0 {
		return fmt.Sprintf("Changed recently: nothing (no change point within the newest %d runs of any series).", recent)
	}

	return fmt.Sprintf("Changed recently (within the newest %d runs): %s.", recent, strings.Join(found, "; "))
}
