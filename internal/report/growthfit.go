package report

import (
	"fmt"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
)

// addGrowthFits draws, on an operation's latency-vs-size panel, the line
// fitted through its complete blocks on each percentile the panel plots
// (analysis.FitBlocks: the growth verdict's line), thin and in the
// percentile's dash, so the reader sees the slope the verdict quotes and
// how far the blocks stray from it. A percentile with no fit (fewer than
// three complete blocks) gets no line. xs are the panel's x values, the
// blocks' sizes.
func addGrowthFits(c *chart, blocks []result.Block, op, color string, xs []float64) {
	var fitted []string

	for i, m := range analysis.GrowthPercentiles {
		g := analysis.FitBlocks(blocks, op, m)
		if g.Err != nil {
			continue
		}

		s := series{Label: g.Title() + " fit", Color: color, Dash: fitDashes[i%len(fitDashes)], Width: 1, Values: make([]*float64, len(xs))}
		for k, x := range xs {
			s.Values[k] = num(g.Fit.At(x))
		}

		c.Series = append(c.Series, s)
		fitted = append(fitted, g.Title()+" "+g.Verdict())
	}

	if len(fitted) > 0 {
		c.Note += fmt.Sprintf(" Thin lines: least-squares fits through the complete blocks (%s).", joinClauses(fitted))
	}
}

// fitDashes match the percentiles' dashes on the panel: p50 solid, p95
// dashed, p99 dotted.
var fitDashes = []string{"", "dash", "dot"}

// joinClauses joins verdicts with semicolons.
func joinClauses(s []string) string {
	out := ""

	for i, c := range s {
		if i > 0 {
			out += "; "
		}

		out += c
	}

	return out
}
