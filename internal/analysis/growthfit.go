package analysis

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/regress"
	"github.com/mongobench/mongobench/internal/stats/threshold"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// GrowthPercentiles are the figures every growth run is fitted on: the
// middle, the tail, and the far tail.
var GrowthPercentiles = []threshold.Metric{
	{Kind: threshold.Percentile, Percent: 50},
	{Kind: threshold.Percentile, Percent: 95},
	{Kind: threshold.Percentile, Percent: 99},
}

// growthPer is the number of documents a slope is quoted per: "grows
// 0.41 ms per 1,000 notices" reads better than µs per document.
const growthPer = 1000

// GrowthPoint is one growth block as a point of the fit.
type GrowthPoint struct {
	// Block is the block's index, from 0.
	Block int
	// Documents is the collection's size at the block's end (x).
	Documents int64
	// Value is the block's figure for the operation, in µs (y).
	Value float64
}

// GrowthFit is one operation's figure fitted against the collection's
// size, one point per complete growth block, in block order
// (regress.SerialLine: why one point per block, and why an interval that
// counts autocorrelated blocks as fewer points, is in its package
// comment).
type GrowthFit struct {
	// Phase and Operation say what was fitted.
	Phase, Operation string
	// Metric is the figure: a latency percentile, the mean or the max.
	Metric threshold.Metric
	// Collection is the watched collection, the x axis's unit.
	Collection string
	// Points are the blocks fitted.
	Points []GrowthPoint
	// LeftOut says, per block left out of the fit, why: "block 11: cut
	// short by a stop (31 operations)".
	LeftOut []string
	// Fit is the line and its slope's interval, in µs per document; valid
	// when Err is nil.
	Fit regress.Fit
	// Err says why there is no fit (too few complete blocks).
	Err error
	// MinEffect is the smallest change over the fitted sizes, relative to
	// the line's value at the smallest, that counts as growth
	// (verdict.Options.MinEffect: 0 for the default 5%, negative for
	// none). A collection grows only with time, so a machine whose load
	// drifts during a run draws a slope too; a drift of a few percent is no
	// answer to "does it grow with the data".
	MinEffect float64
}

// Change is the fitted line's change from the smallest size fitted to the
// largest, relative to its value at the smallest: +0.5 for a line that
// rises by half. A steep line from a small start can be at or below 0 at
// the smallest size (a latency cannot); the change is then relative to the
// figure measured there, the block of the smallest size. NaN without a fit
// or a positive base.
func (g GrowthFit) Change() float64 {
	if g.Err != nil || len(g.Points) == 0 {
		return math.NaN()
	}

	first := g.Points[0]
	hi := math.Inf(-1)

	for _, p := range g.Points {
		if p.Documents < first.Documents {
			first = p
		}

		hi = math.Max(hi, float64(p.Documents))
	}

	base := g.Fit.At(float64(first.Documents))
	if base <= 0 {
		base = first.Value
	}

	if base <= 0 {
		return math.NaN()
	}

	return (g.Fit.At(hi) - g.Fit.At(float64(first.Documents))) / base
}

// minEffect is MinEffect with its default applied.
func (g GrowthFit) minEffect() float64 {
	switch {
	case g.MinEffect == 0:
		return verdict.DefaultMinEffect
	case g.MinEffect < 0:
		return 0
	default:
		return g.MinEffect
	}
}

// Trend is the verdict's direction: the slope's interval must exclude 0
// and the fitted change reach the minimum effect.
func (g GrowthFit) Trend() regress.Trend {
	if g.Err != nil {
		return regress.Flat
	}

	t := g.Fit.Trend()
	if t != regress.Flat && !(math.Abs(g.Change()) >= g.minEffect()) {
		return regress.Flat
	}

	return t
}

// FitBlocks fits one operation's figure against the collection's size
// over a phase's growth blocks. A block cut short (by a signal, a
// max_error_rate stop, a failed operation) is never a point: it measured
// fewer operations than its siblings, at a size it did not finish
// growing to, often while the run was being torn down; it is named in
// LeftOut instead. So is a block whose collection size could not be read,
// and one in which the operation did not run.
func FitBlocks(blocks []result.Block, op string, m threshold.Metric) GrowthFit {
	g := GrowthFit{Operation: op, Metric: m}

	var xs, ys []float64

	for _, b := range blocks {
		if g.Collection == "" {
			g.Collection = b.Collection.Name
		}

		name := "block " + strconv.Itoa(b.Index+1)

		switch {
		case !b.Complete:
			g.LeftOut = append(g.LeftOut, fmt.Sprintf("%s: cut short by a stop (%s operations)", name, groupThousands(blockCount(b))))
			continue
		case b.Collection.Error != "":
			g.LeftOut = append(g.LeftOut, name+": the collection's size could not be read")
			continue
		}

		v, ok := blockValue(b, op, m)
		if !ok {
			g.LeftOut = append(g.LeftOut, name+": no "+op+" operation completed")
			continue
		}

		g.Points = append(g.Points, GrowthPoint{Block: b.Index, Documents: b.Collection.Documents, Value: v})
		xs = append(xs, float64(b.Collection.Documents))
		ys = append(ys, v)
	}

	g.Fit, g.Err = regress.SerialLine(xs, ys, blockAlpha)

	return g
}

// blockCount is how many operations a block measured.
func blockCount(b result.Block) int64 {
	var n int64

	for _, o := range b.Operations {
		if o.Unit == "" {
			n += o.Count
		}
	}

	return n
}

// blockValue is the block's figure for operation op.
func blockValue(b result.Block, op string, m threshold.Metric) (float64, bool) {
	for _, o := range b.Operations {
		if o.Name == op && o.Unit == "" && o.Count > 0 {
			return MetricValue(o, b.DurationS, m)
		}
	}

	return 0, false
}

// Verdict words the fit: "grows 0.41 ms per 1,000 notices (95% CI
// 0.30–0.52)", "flat (slope CI −0.02 to 0.03 ms per 1,000 notices
// includes 0)", or why there is none.
func (g GrowthFit) Verdict() string {
	if g.Err != nil {
		if errors.Is(g.Err, regress.ErrTooFew) {
			return fmt.Sprintf("inconclusive: %d complete blocks, a slope's interval needs at least %d", g.Fit.N, regress.MinPoints)
		}

		return "inconclusive: " + g.Err.Error()
	}

	f := g.Fit
	per := "per " + groupThousands(growthPer) + " " + g.unitNoun()
	level := strconv.FormatFloat(100*(1-f.Alpha), 'f', -1, 64) + "% CI"
	unit, scale := slopeUnit(growthPer * math.Max(math.Abs(f.Lo), math.Abs(f.Hi)))
	num := func(v float64) string { return formatSlope(growthPer * v / scale) }

	if f.Trend() != regress.Flat && g.Trend() == regress.Flat {
		return fmt.Sprintf("flat (%s from %s to %s %s, under the %s minimum effect, slope %s %s to %s %s %s)",
			signedPct(g.Change()), groupThousands(g.Points[0].Documents), groupThousands(g.Points[len(g.Points)-1].Documents), g.unitNoun(),
			verdict.FormatMinEffect(g.minEffect()), level, num(f.Lo), num(f.Hi), unit, per)
	}

	switch f.Trend() {
	case regress.Grows:
		return fmt.Sprintf("grows %s %s %s (%s %s–%s)", num(f.Slope), unit, per, level, num(f.Lo), num(f.Hi))
	case regress.Shrinks:
		return fmt.Sprintf("shrinks %s %s %s (%s %s to %s)", num(-f.Slope), unit, per, level, num(f.Lo), num(f.Hi))
	default:
		return fmt.Sprintf("flat (slope %s %s to %s %s %s includes 0)", level, num(f.Lo), num(f.Hi), unit, per)
	}
}

// Title names what was fitted: "search p95".
func (g GrowthFit) Title() string { return g.Operation + " " + g.Metric.String() }

// unitNoun is what the x axis counts: the collection's documents, named
// by the collection ("notices"), or "documents".
func (g GrowthFit) unitNoun() string {
	if g.Collection != "" {
		return g.Collection
	}

	return "documents"
}

// slopeUnit picks the time unit for slopes whose largest magnitude is v µs.
func slopeUnit(v float64) (string, float64) {
	switch {
	case v >= 1e6:
		return "s", 1e6
	case v >= 100: // 0.10 ms and up read better than hundreds of µs
		return "ms", 1e3
	default:
		return "µs", 1
	}
}

// formatSlope writes a slope with two decimals (three significant digits
// from 100 up), a minus sign as "−".
func formatSlope(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	if math.Abs(v) >= 100 {
		s = strconv.FormatFloat(v, 'f', 0, 64)
	}

	if s == "-0.00" {
		s = "0.00"
	}

	return strings.Replace(s, "-", "−", 1)
}

// GrowthAnswer is the growth verdict in one line, on metric (a latency
// figure), one clause per operation of the first phase with blocks:
// "search p95 grows 0.41 ms per 1,000 notices (95% CI 0.30–0.52); create
// p95 flat (slope 95% CI −0.02 to 0.03 ms per 1,000 notices includes 0)",
// followed by the blocks left out of the fit. Empty without growth blocks.
func GrowthAnswer(fits []GrowthFit, m threshold.Metric) string {
	var clauses []string

	phase, leftOut := "", []string(nil)

	for _, g := range fits {
		if phase == "" {
			phase = g.Phase
		}

		if g.Phase != phase || g.Metric != m {
			continue
		}

		clauses = append(clauses, g.Title()+" "+g.Verdict())
		leftOut = g.LeftOut
	}

	if len(clauses) == 0 {
		return ""
	}

	s := strings.Join(clauses, "; ")
	if len(leftOut) > 0 {
		s += " (left out of the fit: " + strings.Join(leftOut, ", ") + ")"
	}

	return s
}

// growthMetric is the figure a growth answer is given on: the workload's
// run.compare_by when it is a latency, else p50.
func growthMetric(fig Figure) threshold.Metric {
	switch {
	case fig.PerDoc, fig.Metric.Kind == threshold.Throughput, fig.Metric.Kind == threshold.ErrorRate:
		return GrowthPercentiles[0]
	default:
		return fig.Metric
	}
}

// signedPct writes a relative change as a signed percentage: "+2.1%".
func signedPct(v float64) string {
	s := strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
	if v >= 0 {
		s = "+" + s
	}

	return strings.Replace(s, "-", "−", 1)
}
