package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// GrowthBlock builds the block of a run with growth blocks, whose question
// is how an operation's figure grows as the collection grows: per blocks
// phase and operation, each growth block's figure against the first
// block's, the blocks ranked by how much they grew (the first, the
// reference, leads), and one answer line per operation (the largest
// collection against the first).
//
// A block's values are the figure in each of the phase's intervals that
// fall in it (block ends are interval ends), but for the slivers a block's
// end cuts (Slivers). Blocks run one after another, so no interval of one
// block has a partner in another: they are compared as independent samples
// (unpaired, Mann-Whitney), and since the intervals of one run are not
// independent either, the intervals are optimistic, as those of compare
// are. A block with fewer intervals than an interval needs
// (4 at 95%) is inconclusive: set a shorter run.interval. Iterations and
// composites take no part, as in runBlock.
func GrowthBlock(res *result.Result, fig Figure) Block {
	fig.Operation = ""
	b := Block{Figure: fig, Samples: "interval", Design: verdict.Unpaired, Growth: true}

	if res == nil {
		return b
	}

	for i := range res.Phases {
		p := &res.Phases[i]
		if p.Excluded || len(p.Blocks) < 2 {
			continue
		}

		owner := blockOfIntervals(p)
		sliver := Slivers(p)

		for _, op := range p.Operations {
			if op.Unit != "" {
				continue
			}

			var samples []verdict.Sample

			for k, iv := range p.Intervals {
				j := owner[k]
				if j < 0 || sliver[k] {
					continue
				}

				secs := iv.End.Sub(iv.Start).Seconds()

				for _, o := range iv.Operations {
					if o.Name != op.Name {
						continue
					}

					if v, ok := operationValue(o, secs, fig); ok {
						samples = append(samples, verdict.Sample{Variant: growthStepName(p.Blocks[j]), Round: k, Value: v})
					}
				}
			}

			title := op.Name
			if len(res.Phases) > 1 && p.Name != result.PhaseRun {
				title += " (" + p.Name + " phase)"
			}

			b.addGrowth(title, op.Name, p.Blocks, samples)
		}
	}

	return b
}

// blockOfIntervals gives, per interval of the phase, the index of the
// growth block it belongs to (-1 for none): block ends are interval ends,
// so an interval belongs to the first block that ends at or after it.
func blockOfIntervals(p *result.Phase) []int {
	owner := make([]int, len(p.Intervals))

	for k, iv := range p.Intervals {
		owner[k] = -1

		for j, blk := range p.Blocks {
			if !iv.End.After(blk.End) && (j == 0 || iv.End.After(p.Blocks[j-1].End)) {
				owner[k] = j
				break
			}
		}
	}

	return owner
}

// growthStepName names a growth block by its position and the collection's
// size at its end: "block 3 · 1,204 docs".
func growthStepName(blk result.Block) string {
	return fmt.Sprintf("block %d · %s docs", blk.Index+1, groupThousands(blk.Collection.Documents))
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

// addGrowth compares each block's samples with the first block's and
// appends the operation's group, with its answer line.
func (b *Block) addGrowth(title, op string, blocks []result.Block, samples []verdict.Sample) {
	if len(samples) == 0 {
		return
	}

	first := growthStepName(blocks[0])
	opts := verdict.Options{Alpha: blockAlpha, Design: b.Design, Unit: b.Samples}
	verdicts := verdict.CompareTo(samples, first, b.Figure.direction(), opts)

	if len(verdicts) < 2 || verdicts[0].Variant != first {
		return
	}

	docs := map[string]int64{}
	for _, blk := range blocks {
		docs[growthStepName(blk)] = blk.Collection.Documents
	}

	level := strconv.FormatFloat(100*(1-blockAlpha), 'f', -1, 64) + "% CI"
	g := BlockGroup{Title: title + ", each block against the first"}

	for i, v := range verdicts {
		l := BlockLine{
			Name: v.Variant, Median: v.Median, Value: b.Figure.format(v.Median), N: v.N, Best: i == 0,
			Kind: v.Kind, Ratio: v.Ratio, RatioLo: v.RatioLo, RatioHi: v.RatioHi, Documents: docs[v.Variant],
		}

		l.Ratio, l.RatioLo, l.RatioHi = b.growth(v)
		l.Verdict = b.growthVerdict(l, v, level)
		g.Lines = append(g.Lines, l)
	}

	// Ranked: the reference first, then the blocks that grew the most;
	// a block without a ratio (inconclusive for want of values) last.
	slices.SortStableFunc(g.Lines[1:], func(x, y BlockLine) int {
		return cmp.Compare(rankRatio(y.Ratio), rankRatio(x.Ratio))
	})

	// The answer compares the largest collection measured with the first.
	last := verdicts[len(verdicts)-1]
	for _, l := range g.Lines[1:] {
		if l.Name == last.Variant {
			g.Answer = b.growthAnswer(op, l, g.Lines[0].Documents, level)
		}
	}

	b.Groups = append(b.Groups, g)
}

// rankRatio orders ratios for ranking, NaN lowest.
func rankRatio(r float64) float64 {
	if math.IsNaN(r) {
		return math.Inf(-1)
	}

	return r
}

// growth is the block's figure over the first block's with its interval:
// value/first whichever way the figure improves (the verdict's ratio is
// first/value for a throughput).
func (b *Block) growth(v verdict.Verdict) (r, lo, hi float64) {
	if b.Figure.direction() == verdict.HigherIsBetter {
		return 1 / v.Ratio, 1 / v.RatioHi, 1 / v.RatioLo
	}

	return v.Ratio, v.RatioLo, v.RatioHi
}

// growthVerdict words one block's standing against the first.
func (b *Block) growthVerdict(l BlockLine, v verdict.Verdict, level string) string {
	switch v.Kind {
	case verdict.Reference:
		return "first block, the reference"
	case verdict.Difference:
		return fmt.Sprintf("%s the first (%s %s)", verdict.FormatRatio(l.Ratio), level, verdict.FormatInterval(l.RatioLo, l.RatioHi))
	case verdict.NoDifference:
		return fmt.Sprintf("no significant difference (%s %s)", level, verdict.FormatInterval(l.RatioLo, l.RatioHi))
	default:
		return v.Text
	}
}

// growthAnswer is the operation's answer in one line: "search p99 4.1× at
// 100,302 docs vs 205 (95% CI 3.2×–5.0×)".
func (b *Block) growthAnswer(op string, l BlockLine, firstDocs int64, level string) string {
	fig := b.Figure
	fig.Operation = op
	at := fmt.Sprintf("at %s docs vs %s", groupThousands(l.Documents), groupThousands(firstDocs))

	switch l.Kind {
	case verdict.Difference:
		return fmt.Sprintf("%s %s %s (%s %s–%s)", fig, verdict.FormatRatio(l.Ratio), at, level,
			verdict.FormatRatio(l.RatioLo), verdict.FormatRatio(l.RatioHi))
	case verdict.NoDifference:
		return fmt.Sprintf("%s %s: no significant difference (%s %s–%s)", fig, at, level,
			verdict.FormatRatio(l.RatioLo), verdict.FormatRatio(l.RatioHi))
	default:
		return fmt.Sprintf("%s %s: %s", fig, at, l.Verdict)
	}
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
