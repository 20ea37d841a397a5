package analysis

import (
	"bytes"
	"context"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/threshold"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// TestGrowthBlockRealRun builds the growth block of a real run
// (testdata/growth.yaml against the embedded FerretDB, whose searches scan
// the collection): per operation, the first block is the reference and the
// others follow ranked by growth; search, which scans 3× as many documents
// in the last block, grew significantly, and its answer line says so with
// the collection's sizes.
func TestGrowthBlockRealRun(t *testing.T) {
	t.Parallel()

	res, err := result.Read(context.Background(), "testdata/growth.json")
	if err != nil {
		t.Fatal(err)
	}

	b := GrowthBlock(res, DefaultFigure)
	if !b.Growth || b.Design != verdict.Unpaired || b.Samples != "interval" {
		t.Errorf("block %+v, want an unpaired growth block of intervals", b)
	}

	if len(b.Groups) != 2 || !strings.HasPrefix(b.Groups[0].Title, "create,") || !strings.HasPrefix(b.Groups[1].Title, "search,") {
		t.Fatalf("groups %+v, want create and search", b.Groups)
	}

	blocks := res.Phases[len(res.Phases)-1].Blocks
	if len(blocks) != 3 {
		t.Fatalf("the run has %d blocks, want 3", len(blocks))
	}

	for _, g := range b.Groups {
		if len(g.Lines) != 3 {
			t.Fatalf("%s: %d lines, want one per block", g.Title, len(g.Lines))
		}

		if l := g.Lines[0]; !l.Best || l.Kind != verdict.Reference || l.Documents != blocks[0].Collection.Documents || !strings.HasPrefix(l.Name, "block 1 ·") {
			t.Errorf("%s: first line %+v, want block 1 as the reference", g.Title, l)
		}

		for i := 2; i < len(g.Lines); i++ {
			if g.Lines[i].Ratio > g.Lines[i-1].Ratio {
				t.Errorf("%s: %s (%.2f×) ranked below %s (%.2f×)", g.Title, g.Lines[i].Name, g.Lines[i].Ratio, g.Lines[i-1].Name, g.Lines[i-1].Ratio)
			}
		}

		if g.Answer == "" {
			t.Errorf("%s: no answer line", g.Title)
		}
	}

	search := b.Groups[1]

	var last BlockLine

	for _, l := range search.Lines {
		if l.Documents == blocks[2].Collection.Documents {
			last = l
		}
	}

	if last.Kind != verdict.Difference || last.RatioLo <= 1 {
		t.Errorf("search in the last block: %s (kind %v), want significantly slower than the first", last.Verdict, last.Kind)
	}

	want := "search p50 " + verdict.FormatRatio(last.Ratio) + " at 1,200 docs vs 400 (95% CI "
	if !strings.HasPrefix(search.Answer, want) {
		t.Errorf("answer %q, want it to start %q", search.Answer, want)
	}

	var text bytes.Buffer

	b.WriteText(&text)

	if out := text.String(); strings.Count(out, search.Answer) != 1 || !strings.Contains(out, "by collection size") {
		t.Errorf("terminal block does not hold the answer once:\n%s", out)
	}

	if md := b.Markdown(); !strings.Contains(md, "- "+search.Answer+"\n") || !strings.Contains(md, "| "+last.Name+" | "+last.Value+" | ") {
		t.Errorf("Markdown block does not hold the answer and the line:\n%s", md)
	}
}

// growthRun is a blocks phase of n blocks of eight 1 s intervals each; the
// operation get has the p99 and the throughput f(block) gives, jittered.
func growthRun(n int, p99, tput func(block int) float64) *result.Result {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	jitter := []float64{1.02, 0.97, 1.05, 0.99, 1.01, 0.96, 1.03, 0.98}
	p := result.Phase{Name: "run", Model: "blocks", Operations: []result.Operation{{Name: "get"}, {Name: "iteration", Unit: result.UnitIteration}}}

	for j := range n {
		for k, jt := range jitter {
			at := start.Add(time.Duration(j*len(jitter)+k) * time.Second)
			p.Intervals = append(p.Intervals, result.Interval{Start: at, End: at.Add(time.Second), Operations: []result.Operation{
				{Name: "get", Count: int64(tput(j) * jt), OpsPerSec: tput(j) * jt, LatencyUS: result.Latency{Mean: p99(j) / 2, P99: p99(j) * jt}},
				{Name: "iteration", Unit: result.UnitIteration, Count: 100, LatencyUS: result.Latency{P99: 1e9}},
			}})
		}

		p.Blocks = append(p.Blocks, result.Block{
			Index: j, Start: start.Add(time.Duration(j*len(jitter)) * time.Second),
			End:        start.Add(time.Duration((j+1)*len(jitter)) * time.Second),
			Collection: result.CollectionSize{Documents: int64(1000 * (j + 1) * (j + 1))},
		})
	}

	return &result.Result{Phases: []result.Phase{p}}
}

// TestGrowthBlockSynthetic checks the growth block's figures on known
// values: p99 four times the first block's at the largest size, ranked
// above a block that grew twice; a throughput that falls by half grows by
// 0.5× (the figure over the first, whichever way it improves); a flat
// figure is no significant difference; iterations take no part.
func TestGrowthBlockSynthetic(t *testing.T) {
	t.Parallel()

	p99 := threshold.Metric{Kind: threshold.Percentile, Percent: 99}
	res := growthRun(3, func(j int) float64 { return []float64{1000, 4000, 2000}[j] }, func(j int) float64 { return []float64{500, 250, 500}[j] })

	b := GrowthBlock(res, Figure{Metric: p99})
	if len(b.Groups) != 1 || !strings.HasPrefix(b.Groups[0].Title, "get,") {
		t.Fatalf("groups %+v, want get's only (no iteration)", b.Groups)
	}

	g := b.Groups[0]
	if g.Lines[1].Name != "block 2 · 4,000 docs" || g.Lines[2].Name != "block 3 · 9,000 docs" {
		t.Fatalf("lines %+v, want block 2 (4×) ranked before block 3 (2×)", g.Lines)
	}

	if l := g.Lines[1]; l.Kind != verdict.Difference || math.Abs(l.Ratio-4) > 0.3 || l.RatioLo > 4 || l.RatioHi < 4 {
		t.Errorf("block 2: %s, want 4× with an interval around it", l.Verdict)
	}

	// The answer is about the largest collection, block 3, not the block
	// that grew most.
	if want := "get p99 " + verdict.FormatRatio(g.Lines[2].Ratio) + " at 9,000 docs vs 1,000 (95% CI "; !strings.HasPrefix(g.Answer, want) {
		t.Errorf("answer %q, want it to start %q", g.Answer, want)
	}

	tb := GrowthBlock(res, Figure{Metric: threshold.Metric{Kind: threshold.Throughput}})
	tl := tb.Groups[0].Lines

	var halved, flat BlockLine

	for _, l := range tl {
		switch l.Documents {
		case 4000:
			halved = l
		case 9000:
			flat = l
		}
	}

	if halved.Kind != verdict.Difference || math.Abs(halved.Ratio-0.5) > 0.05 {
		t.Errorf("throughput halved: %s (ratio %.3f), want 0.5× the first", halved.Verdict, halved.Ratio)
	}

	if flat.Kind != verdict.NoDifference || !strings.Contains(tb.Groups[0].Answer, "at 9,000 docs vs 1,000: no significant difference") {
		t.Errorf("flat throughput: %s; answer %q, want no significant difference", flat.Verdict, tb.Groups[0].Answer)
	}
}

// TestGrowthBlockNeedsBlocks checks that a run without growth blocks, or
// with a single block, has no growth block.
func TestGrowthBlockNeedsBlocks(t *testing.T) {
	t.Parallel()

	one := growthRun(1, func(int) float64 { return 1000 }, func(int) float64 { return 100 })
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
}

// TestSlivers checks, on the real growth run, that the intervals marked as
// slivers are exactly those under a quarter of the median interval (the
// run has some: a block's end closes the running interval early), and that
// the growth block takes no value from them.
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

	// Each line's values are the block's intervals with a search, slivers
	// left out.
	owner := blockOfIntervals(p)
	want := map[int]int{}

	for k, iv := range p.Intervals {
		for _, o := range iv.Operations {
			if o.Name == "search" && o.Count > 0 && !sliver[k] && owner[k] >= 0 {
				want[owner[k]]++
			}
		}
	}

	for _, l := range GrowthBlock(res, DefaultFigure).Groups[1].Lines {
		j := slices.IndexFunc(p.Blocks, func(b result.Block) bool { return b.Collection.Documents == l.Documents })
		if l.N != want[j] {
			t.Errorf("%s: %d values, want %d (its intervals with a search, no sliver)", l.Name, l.N, want[j])
		}
	}
}
