package analysis

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// GrowthBlock builds the block of a run with growth blocks, whose question
// is how an operation's figure grows as the collection grows: per blocks
// phase and operation, the figure fitted against the collection's size by
// least squares, one point per complete growth block (FitBlocks; why per
// block and which interval: package regress), with the slope's interval as
// the answer: "search p95 grows 0.41 ms per 1,000 notices (95% CI
// 0.30–0.52)", "create p95 flat (slope 95% CI … includes 0)". Fits lists the
// same on p50, p95 and p99 (and the figure, if another). Each group lists
// the blocks with their figure and the line's value at their size; a block
// cut short is listed as left out of the fit, never compared. The first
// block is no reference any more: comparing the last block with the first
// answered from two noisy points and ignored the eight between them.
func GrowthBlock(res *result.Result, fig Figure) Block {
	fig.Operation = ""
	b := Block{Figure: fig, Samples: "block", Growth: true}

	if res == nil {
		return b
	}

	m := growthMetric(fig)
	metrics := GrowthPercentiles

	if !slices.Contains(metrics, m) {
		metrics = append(slices.Clone(metrics), m)
	}

	for i := range res.Phases {
		p := &res.Phases[i]
		if p.Excluded || len(p.Blocks) < 2 {
			continue
		}

		for _, op := range p.Operations {
			if op.Unit != "" {
				continue
			}

			title := op.Name
			if len(res.Phases) > 1 && p.Name != result.PhaseRun {
				title += " (" + p.Name + " phase)"
			}

			for _, pm := range metrics {
				g := FitBlocks(p.Blocks, op.Name, pm)
				g.Phase, g.MinEffect = p.Name, fig.Judging.MinEffect
				b.Fits = append(b.Fits, g)

				if pm == m {
					b.addGrowthFit(title, g)
				}
			}
		}
	}

	return b
}

// addGrowthFit appends an operation's group: its blocks, each with its
// figure and the fitted line's value at its size, then the blocks left
// out; the answer is the fit's verdict.
func (b *Block) addGrowthFit(title string, g GrowthFit) {
	fig := b.Figure
	fig.Metric = g.Metric
	fig.PerDoc = false

	grp := BlockGroup{Title: title + ", per block", Answer: g.Title() + " " + g.Verdict()}

	for _, pt := range g.Points {
		l := BlockLine{
			Name:   fmt.Sprintf("block %d · %s %s", pt.Block+1, groupThousands(pt.Documents), g.unitNoun()),
			Median: pt.Value, Value: fig.format(pt.Value), N: 1, Documents: pt.Documents,
			Kind: verdict.NoDifference, Ratio: math.NaN(), RatioLo: math.NaN(), RatioHi: math.NaN(),
		}

		if g.Err == nil {
			l.Verdict = "line " + fig.format(g.Fit.At(float64(pt.Documents)))
		}

		grp.Lines = append(grp.Lines, l)
	}

	for _, why := range g.LeftOut {
		name, reason, _ := strings.Cut(why, ": ")
		grp.Lines = append(grp.Lines, BlockLine{
			Name: name, Value: "—", Kind: verdict.Inconclusive,
			Ratio: math.NaN(), RatioLo: math.NaN(), RatioHi: math.NaN(),
			Verdict: "left out of the fit: " + reason,
		})
	}

	if len(grp.Lines) > 0 {
		grp.Lines[0].Best = true
	}

	b.Groups = append(b.Groups, grp)
}

// GrowthAnswer is the growth block's answer in one line, on its figure
// (GrowthAnswer of its fits); empty for other blocks.
func (b Block) GrowthAnswer() string {
	if !b.Growth {
		return ""
	}

	return GrowthAnswer(b.Fits, growthMetric(b.Figure))
}

// groupThousands writes n with thousands separators.
func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0

	if neg {
		s = s[1:]
	}

	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}

	if neg {
		return "-" + s
	}

	return s
}

// Slivers marks, per interval of the phase, the intervals cut so short
// (under a quarter of the phase's median interval) that their rates and
// percentiles stand for a handful of operations: a growth block's end
// ticks the interval clock, so the interval that was running is closed a
// few milliseconds after the previous tick. One operation over half a
// millisecond reads 2,000 operations per second; a block's figures and the
// report's rate charts leave such intervals out.
func Slivers(p *result.Phase) []bool {
	out := make([]bool, len(p.Intervals))

	secs := make([]float64, 0, len(p.Intervals))
	for _, iv := range p.Intervals {
		secs = append(secs, iv.End.Sub(iv.Start).Seconds())
	}

	if len(secs) == 0 {
		return out
	}

	sorted := slices.Clone(secs)
	slices.Sort(sorted)
	typical := sorted[len(sorted)/2]

	for k, s := range secs {
		out[k] = s < typical/4
	}

	return out
}
