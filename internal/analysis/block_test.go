package analysis

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/threshold"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// trial is a synthetic trial whose one operation has the given p50 and
// mean per document (µs) and ops/s.
func trial(target, variant string, round int, p50, tput float64) result.Trial {
	op := result.Operation{
		Name: "get", Count: int64(tput), Docs: int64(tput) * 10, OpsPerSec: tput,
		LatencyUS: result.Latency{Mean: p50, P50: p50, P99: 2 * p50, Max: 3 * p50},
	}

	return result.Trial{Target: target, Variant: variant, Round: round, Result: &result.Result{
		Phases: []result.Phase{
			{Name: "load", Model: "load", Operations: []result.Operation{{Name: "load", Count: 1}}},
			{Name: "run", Model: "closed", DurationS: 1, Operations: []result.Operation{op}},
		},
	}}
}

// syntheticMatrix has variants base and slow on targets a and b over six
// rounds: slow is 5× base ± a little on each target, and target b equals
// a ± noise that cancels neither way (no difference). Every round drifts
// by a common factor, which pairing removes.
func syntheticMatrix() *result.Matrix {
	m := &result.Matrix{Targets: []result.MatrixTarget{{Name: "a"}, {Name: "b"}}, Variants: []string{"base", "slow"}, Rounds: 6}
	jitter := []float64{1.02, 0.97, 1.05, 0.99, 1.01, 0.96}
	noise := []float64{1.03, 0.98, 1.01, 0.97, 1.02, 0.99}

	for r := 1; r <= 6; r++ {
		drift := 1 + 0.3*float64(r%3)
		for _, tgt := range []string{"a", "b"} {
			n := 1.0
			if tgt == "b" {
				n = noise[r-1]
			}

			m.Trials = append(m.Trials,
				trial(tgt, "slow", r, 5000*drift*jitter[r-1]*n, 200/drift),
				trial(tgt, "base", r, 1000*drift*n, 1000/drift))
		}
	}

	return m
}

func TestMatrixBlockRanking(t *testing.T) {
	b := MatrixBlock(syntheticMatrix(), DefaultFigure)

	if b.Figure.Operation != "get" || b.Figure.String() != "get p50" {
		t.Errorf("figure %q, want the first operation's p50", b.Figure)
	}

	if len(b.Groups) != 4 {
		t.Fatalf("%d groups, want variants on a and b, targets for base and slow: %+v", len(b.Groups), b.Groups)
	}

	titles := []string{}
	for _, g := range b.Groups {
		titles = append(titles, g.Title)
	}

	if got := strings.Join(titles, "|"); got != "variants on a|variants on b|targets, variant base|targets, variant slow" {
		t.Errorf("groups %s", got)
	}

	g := b.Groups[0]
	if g.Lines[0].Name != "base" || !g.Lines[0].Best || g.Lines[0].Verdict != "reference" || g.Lines[0].Kind != verdict.Reference {
		t.Errorf("best line %+v", g.Lines[0])
	}

	// Per-round ratios 5×jitter: sorted 4.8 4.85 4.95 5.05 5.1 5.25, the
	// median √(4.95·5.05) (the middle of the logs) and the six-round
	// interval the extremes.
	s := g.Lines[1]
	if s.Name != "slow" || s.Kind != verdict.Difference || math.Abs(s.Ratio-5) > 1e-3 ||
		math.Abs(s.RatioLo-4.8) > 1e-9 || math.Abs(s.RatioHi-5.25) > 1e-9 {
		t.Errorf("slow line %+v", s)
	}

	if s.Verdict != "5.00× slower (95% CI 4.80×–5.25×)" {
		t.Errorf("slow verdict %q", s.Verdict)
	}

	// Targets a and b differ by noise on both sides of 1, within the
	// minimum effect.
	tg := b.Groups[2]
	if tg.Lines[1].Kind != verdict.NoDifference ||
		!regexp.MustCompile(`^no meaningful difference \(within ±5%; 95% CI 0\.9\d×–1\.0\d×\)$`).MatchString(tg.Lines[1].Verdict) {
		t.Errorf("target line %+v", tg.Lines[1])
	}

	var out bytes.Buffer
	b.WriteText(&out)

	for _, want := range []string{
		"Comparison: get p50 (median of rounds)\n",
		"  variants on a:\n    base  1.30ms  reference\n    slow  6.53ms  5.00× slower (95% CI 4.80×–5.25×)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
}

// TestMatrixBlockThroughputAndInconclusive ranks on throughput (higher is
// better) and says inconclusive with fewer than six rounds.
func TestMatrixBlockThroughputAndInconclusive(t *testing.T) {
	m := syntheticMatrix()
	b := MatrixBlock(m, Figure{Metric: threshold.Metric{Kind: threshold.Throughput}})

	g := b.Groups[0]
	if g.Lines[0].Name != "base" || g.Lines[0].Verdict != "reference" || g.Lines[1].Kind != verdict.Difference ||
		!regexp.MustCompile(`^5\.0\d× slower \(95% CI 5\.0\d×–5\.0\d×\)$`).MatchString(g.Lines[1].Verdict) {
		t.Errorf("throughput lines %+v", g.Lines)
	}

	var few []result.Trial
	for _, tr := range m.Trials {
		if tr.Round <= 3 {
			few = append(few, tr)
		}
	}

	m.Trials = few
	b = MatrixBlock(m, DefaultFigure)

	if l := b.Groups[0].Lines[1]; l.Kind != verdict.Inconclusive || l.Verdict != "inconclusive: 3 rounds, at least 6 needed" {
		t.Errorf("three rounds: %+v", l)
	}
}

// TestMatrixBlockCost adds the difference from the best in the figure's
// unit: per document, slow − base.
func TestMatrixBlockCost(t *testing.T) {
	b := MatrixBlock(syntheticMatrix(), Figure{PerDoc: true, Cost: true})

	l := b.Groups[0].Lines[1]
	if l.Cost == nil || l.Cost.Kind != verdict.Difference {
		t.Fatalf("no cost: %+v", l)
	}

	// Per document is p50/10 here; slow − base = 100·drift·(5·jitter − 1).
	if l.Cost.Estimate < 350 || l.Cost.Estimate > 600 || !strings.HasPrefix(l.CostText, "+") || !strings.Contains(l.CostText, "µs/doc (95% CI +") {
		t.Errorf("cost %+v %q", l.Cost, l.CostText)
	}

	md := b.Markdown()
	if !strings.Contains(md, "| | get latency per document (p50) | verdict | cost |") || !strings.Contains(md, "| slow | ") {
		t.Errorf("markdown:\n%s", md)
	}
}

func TestMatrixBlockNothingToCompare(t *testing.T) {
	m := &result.Matrix{Targets: []result.MatrixTarget{{Name: "a"}}, Variants: []string{"base"}, Rounds: 6}
	for r := 1; r <= 6; r++ {
		m.Trials = append(m.Trials, trial("a", "base", r, 1000, 100))
	}

	b := MatrixBlock(m, DefaultFigure)

	var out bytes.Buffer
	b.WriteText(&out)

	if len(b.Groups) != 0 || out.Len() != 0 || b.Markdown() != "" {
		t.Errorf("one variant on one target gave a block: %+v %q", b.Groups, out.String())
	}
}

// runsSide is a side of compare whose runs have the given whole-phase p50s.
func runsSide(label string, p50s ...float64) *File {
	f := &File{Label: label, Path: label}

	for _, v := range p50s {
		f.Runs = append(f.Runs, &result.Phase{Name: "run", DurationS: 1, Operations: []result.Operation{
			{Name: "get", Count: 100, OpsPerSec: 100, LatencyUS: result.Latency{P50: v}},
		}})
	}

	f.Phase = f.Runs[0]

	return f
}

// TestFilesBlock ranks separate sides from their runs, unpaired, against
// the baseline (the first side): A about 3× slower than B, C no different
// from B; one run a side is inconclusive however far apart.
func TestFilesBlock(t *testing.T) {
	b := FilesBlock([]*File{
		runsSide("B", 1000, 1020, 990, 1010, 980),
		runsSide("A", 3000, 3100, 2900, 3050, 2950),
		runsSide("C", 1005, 1015, 985, 1000, 995),
	}, DefaultFigure)

	if len(b.Groups) != 1 || len(b.Groups[0].Lines) != 3 || b.Design != verdict.Unpaired || b.Samples != "run" {
		t.Fatalf("block %+v", b)
	}

	l := b.Groups[0].Lines
	if l[0].Name != "B" || l[0].Verdict != "reference" || !l[0].Best {
		t.Errorf("reference %+v", l[0])
	}

	if l[1].Name != "C" || l[1].Kind != verdict.NoDifference || l[2].Name != "A" || l[2].Kind != verdict.Difference ||
		!regexp.MustCompile(`^[23]\.\d\d× slower \(95% CI [23]\.\d\d×–3\.\d\d×\)$`).MatchString(l[2].Verdict) {
		t.Errorf("lines %+v", l)
	}

	one := FilesBlock([]*File{runsSide("B", 1000), runsSide("A", 5000)}, DefaultFigure)
	if l := one.Groups[0].Lines[1]; l.Kind != verdict.Inconclusive || !strings.Contains(l.Verdict, "1 run a side") {
		t.Errorf("one run a side: %+v", l)
	}
}

// TestRunBlock ranks the operations of each measured phase of one run,
// interval by interval: in the run phase slow is 5× fast with a drift common
// to both (which pairing by interval removes), the iteration unit and the
// excluded warm-up phase take no part, a phase without a sequence is not
// ranked, and a phase of three intervals is inconclusive.
func TestRunBlock(t *testing.T) {
	t.Parallel()

	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	interval := func(k int, p50s map[string]float64) result.Interval {
		iv := result.Interval{Start: start.Add(time.Duration(k) * time.Second), End: start.Add(time.Duration(k+1) * time.Second)}
		for _, name := range []string{"fast", "slow", "iteration"} {
			p50, ok := p50s[name]
			if !ok {
				continue
			}

			o := result.Operation{Name: name, Count: 10, LatencyUS: result.Latency{Mean: p50, P50: p50}}
			if name == "iteration" {
				o.Unit = result.UnitIteration
			}

			iv.Operations = append(iv.Operations, o)
		}

		return iv
	}

	drift := []float64{1, 1.3, 0.8, 1.1, 0.9, 1.2, 1.05, 0.95}

	var run, short, warm result.Phase

	run.Name, short.Name, warm.Name, warm.Excluded = "run", "short", "warm", true

	for k, d := range drift {
		run.Intervals = append(run.Intervals, interval(k, map[string]float64{"fast": 100 * d, "slow": 500 * d * (1 + 0.01*float64(k%3)), "iteration": 600 * d}))
		warm.Intervals = append(warm.Intervals, interval(k, map[string]float64{"fast": 1, "slow": 1e6}))
	}

	for k := range 3 {
		short.Intervals = append(short.Intervals, interval(k, map[string]float64{"fast": 100, "slow": 500, "iteration": 600}))
	}

	// A phase that mixes its operations by weight runs no sequence: its
	// operations are different requests, not alternatives, and are not
	// ranked however much they differ.
	mix := result.Phase{Name: "mix"}
	for k, d := range drift {
		mix.Intervals = append(mix.Intervals, interval(k, map[string]float64{"fast": 100 * d, "slow": 900 * d}))
	}

	b := runBlock(&result.Result{Phases: []result.Phase{warm, run, mix, short}}, DefaultFigure, false)
	if len(b.Groups) != 2 || b.Groups[0].Title != "operations of the run phase" || b.Groups[1].Title != "operations of the short phase" {
		t.Fatalf("groups %+v, want the run and short phases only", b.Groups)
	}

	lines := b.Groups[0].Lines
	if len(lines) != 2 || lines[0].Name != "fast" || lines[1].Name != "slow" {
		t.Fatalf("run phase lines %+v, want fast then slow, no iteration", lines)
	}

	if l := lines[1]; l.Kind != verdict.Difference || l.RatioLo > 5 || l.RatioHi < 5 || l.RatioLo <= 1 {
		t.Errorf("slow: %s (kind %v, CI %.2f–%.2f), want a difference whose CI holds 5 and excludes 1", l.Verdict, l.Kind, l.RatioLo, l.RatioHi)
	}

	if l := b.Groups[1].Lines[1]; l.Kind != verdict.Inconclusive {
		t.Errorf("short phase: %s, want inconclusive with 3 intervals", l.Verdict)
	}
}
