package report

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/metrics"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// histOf returns the encoded histogram of values (µs).
func histOf(t *testing.T, values ...int64) string {
	t.Helper()

	h := metrics.NewHistogram()
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}

	s, err := metrics.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}

	return s
}

// runOf is a run whose main phase has one operation "get" with the given
// latencies, in two intervals of 1 s whose p50s are p50s.
func runOf(t *testing.T, p50s [2]float64, values ...int64) *result.Result {
	t.Helper()

	start := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)

	iv := func(k int, p50 float64) result.Interval {
		return result.Interval{
			Start: start.Add(time.Duration(k) * time.Second), End: start.Add(time.Duration(k+1) * time.Second),
			ElapsedS:   float64(k + 1),
			Operations: []result.Operation{{Name: "get", Count: 10, LatencyUS: result.Latency{P50: p50, P99: 2 * p50}}},
		}
	}

	return &result.Result{
		SchemaVersion: result.SchemaVersion,
		Workload:      result.Workload{Name: "w"},
		Status:        result.StatusCompleted,
		Phases: []result.Phase{{
			Name: result.PhaseRun, StartedAt: start, DurationS: 2,
			Operations: []result.Operation{{Name: "get", Count: int64(len(values)), Histogram: histOf(t, values...)}},
			Intervals:  []result.Interval{iv(0, p50s[0]), iv(1, p50s[1])},
		}},
	}
}

// TestMatrixPictures checks the matrix charts: the bars are the verdicts'
// medians with their intervals and texts (cross-target: one bar per
// target); the spectrum is the merged histogram of each cell's trials at
// each percentile; the overlay is each cell's first trial over time.
func TestMatrixPictures(t *testing.T) {
	t.Parallel()

	fast1 := runOf(t, [2]float64{100, 110}, 100, 100, 100, 200)
	fast2 := runOf(t, [2]float64{120, 130}, 100, 300, 300, 300)
	slow1 := runOf(t, [2]float64{500, 510}, 500, 500, 500, 500)

	res := &result.Result{
		SchemaVersion: result.SchemaVersion,
		Workload:      result.Workload{Name: "w"},
		Status:        result.StatusCompleted,
		Matrix: &result.Matrix{
			Targets:  []result.MatrixTarget{{Name: "fast"}, {Name: "slow"}},
			Variants: []string{"default"},
			Rounds:   2,
			Trials: []result.Trial{
				{Target: "fast", Variant: "default", Round: 1, Result: fast1},
				{Target: "slow", Variant: "default", Round: 1, Result: slow1},
				{Target: "fast", Variant: "default", Round: 2, Result: fast2},
			},
			Verdicts: []result.MatrixVerdict{{
				Target: "*", Operation: "get", Metric: "p99",
				Variants: []result.CellVerdict{{Variant: "fast", Median: 9}},
			}, {
				Target: "*", Operation: "get", Metric: "p50",
				Variants: []result.CellVerdict{
					{Variant: "fast", Median: 105, Lo: 100, Hi: 120, Best: true, Kind: verdict.Reference, Text: "lowest"},
					{Variant: "slow", Median: 500, Lo: 490, Hi: 515, Kind: verdict.Difference, Text: "4.76× higher, 95% CI 4.5×–5×"},
				},
			}},
		},
	}

	v := newMatrixPictures(res)
	if v == nil || len(v.Bars) != 1 {
		t.Fatalf("want one bar chart (the p50 verdict), got %+v", v)
	}

	bars := v.Bars[0].Bars
	if len(bars) != 2 || bars[0].Label != "fast" || *bars[0].Value != 105 || *bars[0].Lo != 100 || *bars[0].Hi != 120 ||
		bars[0].Kind != "reference" || bars[0].Color != v.Spectra[0].Series[0].Color || bars[1].Text != "4.76× higher, 95% CI 4.5×–5×" || bars[1].Kind != "difference" {
		t.Errorf("bars = %+v", bars)
	}

	if len(v.Spectra) != 1 {
		t.Fatalf("%d spectra, want 1", len(v.Spectra))
	}

	sp := v.Spectra[0]
	if len(sp.Series) != 2 || sp.Series[0].Label != "fast" || sp.Series[1].Label != "slow" {
		t.Fatalf("spectrum series %+v", sp.Series)
	}

	// fast merges its two trials: 100 ×4, 200, 300 ×3, so 8 values: the
	// line reaches log10(8) ≈ 0.9 and its median (x = log10 2) is 100;
	// its last point, the 87.4th percentile, is 300.
	at := func(s series, x float64) *float64 {
		for i, xi := range sp.X {
			if math.Abs(xi-x) < 1e-9 {
				return s.Values[i]
			}
		}

		t.Fatalf("no x = %v in %v", x, sp.X)

		return nil
	}

	if got := at(sp.Series[0], 0.3); got == nil || *got != 100 {
		t.Errorf("fast at 50%%: %v, want 100", got)
	}

	if got := at(sp.Series[0], 0.9); got == nil || *got != 300 {
		t.Errorf("fast at 87.4%%: %v, want 300", got)
	}

	// slow has 4 values: its line stops at log10(4) ≈ 0.6.
	if got := at(sp.Series[1], 0.6); got == nil || *got != 500 {
		t.Errorf("slow at 75%%: %v, want 500", got)
	}

	if got := at(sp.Series[1], 0.65); got != nil {
		t.Errorf("slow at 77.6%%: %v, want no point (4 values)", *got)
	}

	if len(v.Overlays) != 1 {
		t.Fatalf("%d overlays, want 1", len(v.Overlays))
	}

	// Each cell's trials end to end: fast's two trials of 2 s give x =
	// 1, 2, 3, 4 with fast1's then fast2's p50s; slow's one trial 1, 2.
	ov := v.Overlays[0]
	if !slices.Equal(ov.X, []float64{1, 2, 3, 4}) {
		t.Fatalf("overlay x = %v, want 1 2 3 4", ov.X)
	}

	var got []float64
	for _, p := range ov.Series[0].Values {
		got = append(got, *p)
	}

	if len(ov.Series) != 4 || !slices.Equal(got, []float64{100, 110, 120, 130}) || *ov.Series[2].Values[1] != 510 || ov.Series[2].Values[2] != nil {
		t.Errorf("overlay series %+v (fast p50s %v)", ov.Series, got)
	}
}

// TestFilesPictures checks the comparison of two files: bars from the
// runs' p50s compared with the first file, spectra and overlays.
func TestFilesPictures(t *testing.T) {
	t.Parallel()

	a := runOf(t, [2]float64{100, 110}, 100, 110)
	b := runOf(t, [2]float64{300, 310}, 300, 310)

	v := newFilesPictures([]*result.Result{a, b}, []string{"a.json", "b.json"})
	if v == nil || len(v.Bars) != 1 || len(v.Spectra) != 1 || len(v.Overlays) != 1 {
		t.Fatalf("pictures = %+v", v)
	}

	// Each file is one run: its bar is the run's p50 over the whole phase,
	// and one run a side is inconclusive.
	bars := v.Bars[0].Bars
	if len(bars) != 2 || bars[0].Label != "a.json" || *bars[0].Value != a.MainPhase().Operations[0].LatencyUS.P50 ||
		bars[0].Text != "baseline" || *bars[1].Value != b.MainPhase().Operations[0].LatencyUS.P50 ||
		!strings.HasPrefix(bars[1].Text, "inconclusive: 1 run a side") {
		t.Errorf("bars = %+v", bars)
	}

	// The tables and the block are compare's, from the analysis model.
	files := []*analysis.File{
		{Label: "a.json", Path: "a.json", Res: a, Phase: a.MainPhase()},
		{Label: "b.json", Path: "b.json", Res: b, Phase: b.MainPhase()},
	}

	ops := analysis.CompareOperations(files, analysis.Judging{})
	if len(v.Tables) != len(ops) || !reflect.DeepEqual(v.Tables[0], newTableView(analysis.CompareTable(files, ops[0]))) {
		t.Errorf("tables %+v, want compare's", v.Tables)
	}

	block := analysis.FilesBlock(files, analysis.DefaultFigure)
	if len(v.Blocks) != 1 || !reflect.DeepEqual(v.Blocks[0], newBlockView(block)) {
		t.Errorf("blocks %+v, want compare's block", v.Blocks)
	}

	// Two intervals per file are too few for an interval: no whiskers.
	if bars[1].Kind != "inconclusive" || bars[1].Lo != nil && !math.IsInf(*bars[1].Lo, 0) {
		t.Errorf("bar b: kind %s, lo %v; want inconclusive without an interval", bars[1].Kind, bars[1].Lo)
	}

	// Files sharing no operation have nothing to compare.
	c := runOf(t, [2]float64{1, 1}, 1, 1)
	c.Phases[0].Operations[0].Name = "other"

	if none := newFilesPictures([]*result.Result{a, c}, []string{"a.json", "c.json"}); none != nil {
		t.Errorf("files without a common operation have comparison pictures: %+v", none)
	}

	if one := newFilesPictures([]*result.Result{a}, []string{"a.json"}); one != nil {
		t.Errorf("one file has comparison pictures: %+v", one)
	}
}

// TestCompareOnPutsItsFigureFirst checks that run.compare_on chooses the
// metric or the operation shown first.
func TestCompareOnPutsItsFigureFirst(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct{ on, metric, first string }{
		{"", "p50", ""}, {"p99", "p99", ""}, {"throughput", "throughput", ""}, {"iteration", "p50", "iteration"},
	} {
		if m, f := chosenFigure(tc.on); m != tc.metric || f != tc.first {
			t.Errorf("compare_on %q: %q, %q; want %q, %q", tc.on, m, f, tc.metric, tc.first)
		}
	}

	r := &result.Result{Workload: result.Workload{Spec: map[string]any{"run": map[string]any{"compare_on": "iteration"}}}}
	if got := compareOn(r); got != "iteration" {
		t.Errorf("compareOn = %q", got)
	}
}

// TestGrowthPanels checks that each operation of a blocks phase has its
// own panel with p50, p95 and p99.
func TestGrowthPanels(t *testing.T) {
	t.Parallel()

	block := func(i int, docs int64, small, big result.Latency) result.Block {
		return result.Block{
			Index: i, Complete: true, Collection: result.CollectionSize{Name: "c", Documents: docs},
			Operations: []result.Operation{
				{Name: "small", Count: 1, LatencyUS: small},
				{Name: "big", Count: 1, LatencyUS: big},
			},
		}
	}

	blocks := []result.Block{
		block(0, 10, result.Latency{P50: 1, P95: 2, P99: 3}, result.Latency{P50: 1000, P95: 2000, P99: 3000}),
		block(1, 20, result.Latency{P50: 4, P95: 5, P99: 6}, result.Latency{P50: 4000, P95: 5000, P99: 6000}),
	}

	v := newBlocksView("p", blocks, colors{})
	if len(v.Charts) != 2 {
		t.Fatalf("%d panels, want 2", len(v.Charts))
	}

	small := v.Charts[0]
	if !strings.HasPrefix(small.Title, "small") || len(small.Series) != 3 || small.Series[1].Label != "small p95" ||
		*small.Series[1].Values[1] != 5 || *small.Series[2].Values[0] != 3 {
		t.Errorf("small panel: %s %+v", small.Title, small.Series)
	}

	for _, s := range small.Series {
		if strings.HasPrefix(s.Label, "big") {
			t.Errorf("the small operation's panel shows %s", s.Label)
		}
	}
}

// TestFindingGroups checks that the page's findings table is the analysis
// model's grouping (analysis.GroupFindings, which the terminal prints):
// the same groups in the same order, collection scans of one collection
// said once for all their operations, with the time they cost out of all.
func TestFindingGroups(t *testing.T) {
	t.Parallel()

	r := &result.Result{
		Phases: []result.Phase{{Name: result.PhaseRun, Operations: []result.Operation{
			{Name: "cheap", Count: 10, LatencyUS: result.Latency{Mean: 100}},
			{Name: "dear", Count: 1000, LatencyUS: result.Latency{Mean: 1000}},
			{Name: "dear2", Count: 1000, LatencyUS: result.Latency{Mean: 500}},
		}}},
		Explain: []result.Explain{
			{Operation: "cheap", Collection: "a", CollectionScan: true, DocsExamined: 10, DocsReturned: 1, Warnings: []string{"collection scan on a"}},
			{Operation: "dear", Collection: "b", CollectionScan: true, DocsExamined: 100, DocsReturned: 1, Warnings: []string{"collection scan on b"}},
			{Operation: "dear2", Collection: "b", CollectionScan: true, DocsExamined: 100, DocsReturned: 2, Warnings: []string{"collection scan on b"}},
		},
		Findings: []result.Finding{
			{Severity: "warning", Operation: "cheap", Text: "collection scan on a"},
			{Severity: "warning", Operation: "dear", Text: "collection scan on b"},
			{Severity: "warning", Operation: "dear2", Text: "collection scan on b"},
			{Severity: "info", Text: "server counters: not supported"},
		},
	}

	model := analysis.GroupFindings(r)
	views := newFindingGroupViews(r)

	if len(views) != len(model) || len(views) != 3 {
		t.Fatalf("%d views of %d groups, want 3: %+v", len(views), len(model), views)
	}

	want := []findingGroupView{
		{Warning: true, Collection: "b", Cause: "collection scan", Operations: "dear (examined 100, returned 1), dear2 (examined 100, returned 2)", Cost: "1.5s of 1.5s"},
		{Warning: true, Collection: "a", Cause: "collection scan", Operations: "cheap (examined 10, returned 1)", Cost: "1ms of 1.5s"},
		{Collection: "–", Cause: "server counters: not supported", Cost: "–"},
	}

	for i, w := range want {
		if views[i] != w {
			t.Errorf("group %d = %+v, want %+v", i, views[i], w)
		}

		if model[i].Cause != views[i].Cause {
			t.Errorf("group %d: cause %q, the model's %q", i, views[i].Cause, model[i].Cause)
		}
	}
}

// TestRateChartsSkipSlivers checks, on the real growth run of
// internal/analysis/testdata, that the throughput and error charts leave
// out the slivers a block's end cuts (one operation over half a
// millisecond would read as thousands per second) and say so, while the
// latency chart keeps them.
func TestRateChartsSkipSlivers(t *testing.T) {
	t.Parallel()

	res, err := result.Read(context.Background(), "../analysis/testdata/growth.json")
	if err != nil {
		t.Fatal(err)
	}

	p := &res.Phases[len(res.Phases)-1]
	sliver := analysis.Slivers(p)

	// A sliver in which some operation completed.
	k := -1

	for i, iv := range p.Intervals {
		if sliver[i] && slices.ContainsFunc(iv.Operations, func(o result.Operation) bool { return o.Count > 0 }) {
			k = i
			break
		}
	}

	if k < 0 {
		t.Fatal("the real run has no sliver with an operation; the test checks nothing")
	}

	charts := phaseCharts("p", p, colors{})

	tput := charts[1]
	if !strings.Contains(tput.Note, "sliver") {
		t.Errorf("throughput note %q does not say slivers are left out", tput.Note)
	}

	for _, s := range tput.Series {
		if s.Values[k] != nil {
			t.Errorf("throughput %s at sliver %d: %v, want a gap", s.Label, k, *s.Values[k])
		}
	}

	kept := false

	for _, s := range charts[0].Series {
		kept = kept || s.Values[k] != nil
	}

	if !kept {
		t.Errorf("latency chart has no value at interval %d; its operations' latencies are real", k)
	}
}
