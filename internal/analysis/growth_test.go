package analysis

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/regress"
	"github.com/mongobench/mongobench/internal/stats/threshold"
)

// TestGrowthBlockRealRun builds the growth block of a real run
// (testdata/growth.yaml against the embedded FerretDB, three blocks): per
// operation one line per block, named by its size, valued at the block's
// own p50, with the fitted line's value beside it; the answers (every
// operation on p50, p95, p99) are printed once each, in the terminal and
// the Markdown.
func TestGrowthBlockRealRun(t *testing.T) {
	t.Parallel()

	res, err := result.Read(context.Background(), "testdata/growth.json")
	if err != nil {
		t.Fatal(err)
	}

	b := GrowthBlock(res, DefaultFigure)
	if !b.Growth || b.Samples != "block" {
		t.Errorf("block %+v, want a growth block of blocks", b)
	}

	if len(b.Groups) != 2 || !strings.HasPrefix(b.Groups[0].Title, "create,") || !strings.HasPrefix(b.Groups[1].Title, "search,") {
		t.Fatalf("groups %+v, want create and search", b.Groups)
	}

	if len(b.Fits) != 6 {
		t.Fatalf("%d fits, want create and search on p50, p95, p99", len(b.Fits))
	}

	blocks := res.Phases[len(res.Phases)-1].Blocks

	for _, g := range b.Groups {
		op, _, _ := strings.Cut(g.Title, ",")
		if len(g.Lines) != len(blocks) {
			t.Fatalf("%s: %d lines, want one per block", g.Title, len(g.Lines))
		}

		for i, l := range g.Lines {
			want, _ := blockValue(blocks[i], op, DefaultFigure.Metric)
			if l.Documents != blocks[i].Collection.Documents || l.Median != want || !strings.HasPrefix(l.Verdict, "line ") {
				t.Errorf("%s: line %+v, want block %d's p50 %g at %d docs with the line's value", g.Title, l, i+1, want, blocks[i].Collection.Documents)
			}
		}

		if !strings.HasPrefix(g.Answer, op+" p50 ") {
			t.Errorf("%s: answer %q", g.Title, g.Answer)
		}
	}

	var text bytes.Buffer

	b.WriteText(&text)

	out, md := text.String(), b.Markdown()
	for _, a := range b.Answers() {
		if strings.Count(out, a) != 1 || !strings.Contains(md, "- "+a+"\n") {
			t.Errorf("answer %q not once in the terminal block and the Markdown:\n%s\n%s", a, out, md)
		}
	}
}

// growthRun is a blocks phase of n one-second blocks whose operation get
// has the p50, p95 and p99 that lat(block) gives, at 1,000·(block+1)
// documents; iterations run beside it.
func growthRun(n int, lat func(block int) float64) *result.Result {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	p := result.Phase{Name: "run", Model: "blocks", Operations: []result.Operation{{Name: "get"}, {Name: "iteration", Unit: result.UnitIteration}}}

	for j := range n {
		v := lat(j)
		p.Blocks = append(p.Blocks, result.Block{
			Index: j, Start: start.Add(time.Duration(j) * time.Second), End: start.Add(time.Duration(j+1) * time.Second),
			DurationS: 1, Complete: true,
			Collection: result.CollectionSize{Name: "notices", Documents: int64(1000 * (j + 1))},
			Operations: []result.Operation{
				{Name: "get", Count: 1000, LatencyUS: result.Latency{P50: v, P95: 2 * v, P99: 3 * v}},
				{Name: "iteration", Unit: result.UnitIteration, Count: 1000, LatencyUS: result.Latency{P50: 1e9, P95: 1e9, P99: 1e9}},
			},
		})
	}

	return &result.Result{Phases: []result.Phase{p}}
}

// TestGrowthBlockSynthetic checks the growth block on known values: p50
// rising 410 µs per 1,000 documents (jittered) is found with an interval
// around the planted slope, on p95 twice that; a flat series is flat; a
// block cut short by a stop, whatever its value, is no point of the fit and
// is named as left out, in the group and in the answer; iterations take no
// part.
func TestGrowthBlockSynthetic(t *testing.T) {
	t.Parallel()

	jitter := []float64{30, -20, 10, -40, 25, 0, -15, 35, -5, -20}
	grows := growthRun(10, func(j int) float64 { return 2000 + 410*float64(j+1) + jitter[j] })

	// A stop cut the last block short: few operations, a huge p50.
	last := &grows.Phases[0].Blocks[9]
	last.Complete = false
	last.Operations[0].Count = 31
	last.Operations[0].LatencyUS = result.Latency{P50: 1e7, P95: 1e7, P99: 1e7}

	p95 := threshold.Metric{Kind: threshold.Percentile, Percent: 95}

	b := GrowthBlock(grows, Figure{Metric: p95})
	if len(b.Groups) != 1 || !strings.HasPrefix(b.Groups[0].Title, "get,") || len(b.Fits) != 3 {
		t.Fatalf("groups %+v, %d fits, want get's only (no iteration) on p50, p95, p99", b.Groups, len(b.Fits))
	}

	for _, g := range b.Fits {
		want := 410 * map[float64]float64{50: 1, 95: 2, 99: 3}[g.Metric.Percent] / 1000
		if g.Err != nil || len(g.Points) != 9 || g.Fit.Trend() != regress.Grows || g.Fit.Lo > want || g.Fit.Hi < want {
			t.Errorf("%s: %d points, slope %g (%g–%g), err %v; want 9 points and %g inside the interval", g.Title(), len(g.Points), g.Fit.Slope, g.Fit.Lo, g.Fit.Hi, g.Err, want)
		}

		if len(g.LeftOut) != 1 || g.LeftOut[0] != "block 10: cut short by a stop (31 operations)" {
			t.Errorf("%s: left out %q", g.Title(), g.LeftOut)
		}
	}

	g := b.Groups[0]
	if n := len(g.Lines); n != 10 || g.Lines[9].Name != "block 10" || g.Lines[9].Verdict != "left out of the fit: cut short by a stop (31 operations)" {
		t.Errorf("lines %+v, want nine blocks then block 10 left out", g.Lines)
	}

	if !strings.HasPrefix(g.Answer, "get p95 grows 0.8") || !strings.Contains(g.Answer, " ms per 1,000 notices (95% CI ") {
		t.Errorf("answer %q, want get p95 growing about 0.82 ms per 1,000 notices", g.Answer)
	}

	if a := b.GrowthAnswer(); !strings.HasPrefix(a, g.Answer) || !strings.HasSuffix(a, "(left out of the fit: block 10: cut short by a stop (31 operations))") {
		t.Errorf("growth answer %q", a)
	}

	flatRun := growthRun(10, func(j int) float64 { return 2000 + jitter[j] })
	flat := GrowthBlock(flatRun, Figure{Metric: p95})
	if a := flat.Groups[0].Answer; !strings.HasPrefix(a, "get p95 flat (slope 95% CI −") || !strings.HasSuffix(a, " per 1,000 notices includes 0)") {
		t.Errorf("flat answer %q", a)
	}

	// A slope whose interval excludes 0 but whose change over the sizes is
	// under the minimum effect (a drift of 2%) is flat, and says why; with
	// no minimum effect (run.min_effect: 0%) it grows.
	drift := growthRun(10, func(j int) float64 { return 10000 + 20*float64(j+1) + jitter[j]/10 })
	if a := GrowthBlock(drift, Figure{Metric: p95}).Groups[0].Answer; !strings.HasPrefix(a, "get p95 flat (+1.8% from 1,000 to 10,000 notices, under the 5% minimum effect, slope 95% CI ") {
		t.Errorf("drift answer %q", a)
	}

	if a := GrowthBlock(drift, Figure{Metric: p95, Judging: Judging{MinEffect: -1}}).Groups[0].Answer; !strings.HasPrefix(a, "get p95 grows ") {
		t.Errorf("drift answer without a minimum effect %q", a)
	}

	// A throughput figure is no latency to fit: the answer is on p50.
	if a := GrowthBlock(flatRun, Figure{Metric: threshold.Metric{Kind: threshold.Throughput}}).GrowthAnswer(); !strings.HasPrefix(a, "get p50 flat") {
		t.Errorf("throughput figure: answer %q, want it on p50", a)
	}
}

// TestGrowthBlockNeedsBlocks checks that a run without growth blocks, or
// with a single block, has no growth block, and that two complete blocks
// are no interval.
func TestGrowthBlockNeedsBlocks(t *testing.T) {
	t.Parallel()

	one := growthRun(1, func(int) float64 { return 1000 })
	if b := GrowthBlock(one, DefaultFigure); len(b.Groups) != 0 {
		t.Errorf("one block: %+v, want nothing to compare", b.Groups)
	}

	if b := GrowthBlock(nil, DefaultFigure); len(b.Groups) != 0 {
		t.Errorf("nil result: %+v", b.Groups)
	}

	var out bytes.Buffer

	GrowthBlock(one, DefaultFigure).WriteText(&out)

	if out.Len() != 0 {
		t.Errorf("printed %q for nothing to compare", out.String())
	}

	two := GrowthBlock(growthRun(2, func(j int) float64 { return float64(1000 * (j + 1)) }), DefaultFigure)
	if a := two.Groups[0].Answer; a != "get p50 inconclusive: 2 complete blocks, a slope's interval needs at least 3" {
		t.Errorf("two blocks: answer %q", a)
	}
}

// TestSlivers checks, on the real growth run, that the intervals marked as
// slivers are exactly those under a quarter of the median interval (the
// run has some: a block's end closes the running interval early).
func TestSlivers(t *testing.T) {
	t.Parallel()

	res, err := result.Read(context.Background(), "testdata/growth.json")
	if err != nil {
		t.Fatal(err)
	}

	p := &res.Phases[len(res.Phases)-1]
	sliver := Slivers(p)

	var secs []float64
	for _, iv := range p.Intervals {
		secs = append(secs, iv.End.Sub(iv.Start).Seconds())
	}

	sorted := append([]float64(nil), secs...)
	sort.Float64s(sorted)
	median := sorted[len(sorted)/2]

	n := 0

	for k, s := range secs {
		if sliver[k] != (s < median/4) {
			t.Errorf("interval %d of %.4fs (median %.4fs): sliver %v", k, s, median, sliver[k])
		}

		if sliver[k] {
			n++
		}
	}

	if n == 0 {
		t.Fatal("the real run has no sliver; the test checks nothing")
	}
}

// TestGrowthChangeBelowZeroStart: a steep line from a small start can be
// negative at the smallest size (a search at 1 ms growing 20 ms per 1,000
// documents, fitted from 1,000 to 10,000). The change is then relative to
// the figure measured there, not NaN, which read as "flat" while the
// slope's interval excluded 0 (found on ferretdb-postgres: "search p95
// flat (NaN% …, slope 95% CI 10.92 to 35.63 ms per 1,000 notices)").
func TestGrowthChangeBelowZeroStart(t *testing.T) {
	g := GrowthFit{
		Points: []GrowthPoint{{Block: 0, Documents: 1000, Value: 1000}, {Block: 1, Documents: 5500, Value: 60000}, {Block: 2, Documents: 10000, Value: 200000}},
		Fit:    regress.Fit{N: 3, Intercept: -30000, Slope: 22, Lo: 11, Hi: 36, Alpha: 0.05},
	}

	want := (g.Fit.At(10000) - g.Fit.At(1000)) / 1000
	if c := g.Change(); c != want {
		t.Errorf("change %v, want %v (relative to the 1 ms measured at the smallest size)", c, want)
	}

	if tr := g.Trend(); tr != regress.Grows {
		t.Errorf("trend %v, want grows", tr)
	}
}
