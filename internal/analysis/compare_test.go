package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	vd "github.com/mongobench/mongobench/internal/stats/verdict"
)

// TestCompareTable checks the layout every output renders a comparison
// with: the baseline's column, then a value and a verdict column per
// other side; values are numeric columns, verdicts carry their kind.
func TestCompareTable(t *testing.T) {
	t.Parallel()

	files := []*File{
		gateSide("A", 1000, 1010, 990, 1005, 995),
		gateSide("B", 1300, 1310, 1290, 1305, 1295),
		gateSide("C", 1000, 1010, 990, 1005, 995),
	}

	ops := CompareOperations(files, Judging{})
	if len(ops) != 1 || ops[0].Name != "get" {
		t.Fatalf("operations %+v, want get", OpNames(ops))
	}

	tab := CompareTable(files, ops[0])

	if want := []string{"metric", "A (baseline)", "B", "B vs A", "C", "C vs A"}; !slices.Equal(tab.Header, want) {
		t.Errorf("header %q, want %q", tab.Header, want)
	}

	if want := []bool{false, true, true, false, true, false}; !slices.Equal(tab.Numeric, want) {
		t.Errorf("numeric columns %v, want %v", tab.Numeric, want)
	}

	if len(tab.Rows) != len(CompareMetrics) {
		t.Fatalf("%d rows, want one per metric (%d)", len(tab.Rows), len(CompareMetrics))
	}

	text := tab.TextRows()

	for i, m := range CompareMetrics {
		row := tab.Rows[i]
		if text[i][0] != m.Name || len(row) != len(tab.Header) {
			t.Errorf("row %d: %q, want metric %s and %d cells", i, text[i], m.Name, len(tab.Header))
			continue
		}

		for j, c := range row {
			if c.IsVerdict != (j == 3 || j == 5) || c.Text != text[i][j] {
				t.Errorf("row %s, column %s: %+v", m.Name, tab.Header[j], c)
			}
		}
	}

	// p99 is the fifth metric: B 30% worse in every run is a difference,
	// C the same as A is not.
	p99 := tab.Rows[4]
	if text[4][0] != "p99" || p99[3].Kind != vd.Difference || p99[5].Kind == vd.Difference {
		t.Errorf("p99 row %q: B %v, C %v", text[4], p99[3].Kind, p99[5].Kind)
	}

	if p99[1].Text != "1.00ms" || p99[2].Text != "1.30ms" {
		t.Errorf("p99 medians %q and %q, want 1.00ms and 1.30ms", p99[1].Text, p99[2].Text)
	}
}

// TestCheckOperations checks that a gate naming an operation the files do
// not have is refused, listing those they have.
func TestCheckOperations(t *testing.T) {
	t.Parallel()

	files := []*File{gateSide("A", 1000), gateSide("B", 1000)}
	ops := CompareOperations(files, Judging{})

	if err := CheckOperations(gates(t, "get:p99 +10%", "p50 +5%"), ops); err != nil {
		t.Errorf("known operation: %v", err)
	}

	err := CheckOperations(gates(t, "put:p99 +10%"), ops)
	if err == nil || err.Error() != `bad --fail-if "put:p99 +10%": no operation "put" in the files' main phases (they have get)` {
		t.Errorf("unknown operation: %v", err)
	}
}

// TestCheckGatesDirections checks each direction of a gate, the lines of
// a passed gate and of one on another operation.
func TestCheckGatesDirections(t *testing.T) {
	t.Parallel()

	a := gateSide("A", 1000, 1010, 990, 1005, 995)

	// B: p99 30% better (median 700 against 1000, and so the
	// Hodges-Lehmann ratio of these mirror-image samples), and 34% less
	// throughput.
	b := gateSide("B", 700, 707, 693, 703, 697)
	for _, p := range b.Runs {
		p.Operations[0].OpsPerSec = 66
	}

	files := []*File{a, b}

	tests := []struct {
		gate  string
		fails int
		line  string
	}{
		{"p99 +10%", 0, `ok   --fail-if "p99 +10%"`},
		{"p99 -10%", 1, `FAIL --fail-if "p99 -10%": get: B (B.json) p99 1.00ms → 700µs: -30.0%`},
		{"throughput -5%", 1, `FAIL --fail-if "throughput -5%": get: B (B.json) throughput 100 ops/s → 66 ops/s: -34.0%`},
		{"throughput +5%", 0, `ok   --fail-if "throughput +5%"`},
		{"put:p99 -10%", 0, `--   --fail-if "put:p99 -10%": not judged (nothing could be compared at 95%)`},
	}

	for _, tt := range tests {
		gs := gates(t, tt.gate)
		ops := AddGateRows(files, CompareOperations(files, Judging{}), gs, Judging{})

		lines, fails, unjudged := CheckGates(files, ops, gs)
		if fails != tt.fails || unjudged != 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], tt.line) {
			t.Errorf("%s: %d failures, %d unjudged, lines %q; want %d and %q", tt.gate, fails, unjudged, lines, tt.fails, tt.line)
		}
	}
}

// TestAddGateRows checks that a gate on a metric the table lacks adds its
// row, once, and that one on a metric it has adds none.
func TestAddGateRows(t *testing.T) {
	t.Parallel()

	files := []*File{gateSide("A", 1000, 1010, 990), gateSide("B", 1000, 1010, 990)}
	ops := CompareOperations(files, Judging{})
	n := len(ops[0].Rows)

	ops = AddGateRows(files, ops, gates(t, "p99 +10%", "max +10%", "max +20%"), Judging{})

	var names []string
	for _, r := range ops[0].Rows {
		names = append(names, r.Metric.Name)
	}

	if len(names) != n+1 || names[n] != "max" {
		t.Errorf("rows %v, want the compare metrics and max once", names)
	}
}

// TestFormatValue checks how a metric's value is written in gate lines
// and tables.
func TestFormatValue(t *testing.T) {
	t.Parallel()

	tp, _ := compareMetricNamed("throughput")
	p99, _ := compareMetricNamed("p99")
	errRate := CompareMetric{Name: "error_rate"}

	tests := []struct {
		m    CompareMetric
		v    float64
		want string
	}{
		{tp, 1234.6, "1235 ops/s"},
		{tp, 12.345, "12.3 ops/s"},
		{p99, 850, "850µs"},
		{p99, 1500, "1.50ms"},
		{p99, math.NaN(), "—"},
		{errRate, 0.12345, "0.123%"},
	}

	for _, tt := range tests {
		if got := FormatValue(tt.m, tt.v); got != tt.want {
			t.Errorf("FormatValue(%s, %v) = %q, want %q", tt.m.Name, tt.v, got, tt.want)
		}
	}

	for p, want := range map[float64]string{0.0004: "p<0.001", 0.012: "p=0.012", 0.5: "p=0.500"} {
		if got := formatP(p); got != want {
			t.Errorf("formatP(%v) = %q, want %q", p, got, want)
		}
	}

	if plural(1, "run") != "1 run" || plural(3, "side") != "3 sides" || plural(0, "run") != "0 runs" {
		t.Error("plural")
	}
}

// TestJudgingOf checks the workload's judging settings: an invalid minimum
// effect (refused with the workload) falls back to the default, and the
// reference falls back to the first contender when it names none.
func TestJudgingOf(t *testing.T) {
	t.Parallel()

	if j := JudgingOf("", "b"); j.MinEffect != 0 || j.Reference != "b" {
		t.Errorf("no minimum effect: %+v", j)
	}

	if j := JudgingOf("10%", ""); math.Abs(j.MinEffect-0.1) > 1e-12 {
		t.Errorf("10%%: %+v", j)
	}

	if j := JudgingOf("lots", ""); j.MinEffect != 0 {
		t.Errorf("invalid: %+v", j)
	}

	names := []string{"x", "y"}
	if got := (Judging{Reference: "y"}).among(names).Reference; got != "y" {
		t.Errorf("reference y among x, y: %q", got)
	}

	if got := (Judging{Reference: "z"}).among(names).Reference; got != "x" {
		t.Errorf("reference z among x, y: %q, want the first", got)
	}
}

// cellTrial is a trial whose main phase has one interval per value, each
// of operation get with that p50.
func cellTrial(target, variant string, round int, p50s ...float64) result.Trial {
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	p := result.Phase{Name: result.PhaseRun, Operations: []result.Operation{{Name: "get", Count: 10}}}

	for i, v := range p50s {
		s := start.Add(time.Duration(i) * time.Second)
		p.Intervals = append(p.Intervals, result.Interval{Start: s, End: s.Add(time.Second), Operations: []result.Operation{
			{Name: "get", Count: 10, LatencyUS: result.Latency{P50: v}},
		}})
	}

	return result.Trial{Target: target, Variant: variant, Round: round, Result: &result.Result{Phases: []result.Phase{p}}}
}

// TestMatrixCells checks what compare takes from a matrix file: a cell per
// target and variant that measured, in the matrix's order, its runs the
// trials in round order and its samples their intervals.
func TestMatrixCells(t *testing.T) {
	t.Parallel()

	res := &result.Result{Matrix: &result.Matrix{
		Targets:  []result.MatrixTarget{{Name: "t1"}, {Name: "t2", Error: "could not start"}, {Name: "t3"}},
		Variants: []string{"v1", "v2"},
		Rounds:   2,
		Trials: []result.Trial{
			// Listed out of round order: the cell orders them.
			cellTrial("t1", "v1", 2, 30, 40),
			cellTrial("t1", "v1", 1, 10, 20),
			cellTrial("t1", "v2", 1, 50),
			cellTrial("t3", "v2", 1, 60),
			cellTrial("t3", "v2", 2),
		},
	}}

	cells, err := MatrixCells("m.json", res, func(i int) string { return string(rune('A' + i)) })
	if err != nil {
		t.Fatal(err)
	}

	var got []string

	for _, c := range cells {
		var p50s []string
		for _, iv := range c.Phase.Intervals {
			p50s = append(p50s, FormatValue(CompareMetrics[2], iv.Operations[0].LatencyUS.P50))
		}

		got = append(got, c.Label+" "+c.Path+" "+strings.Join(p50s, ",")+" runs="+string(rune('0'+len(c.Runs))))
	}

	want := []string{
		"A m.json [t1 · v1] 10µs,20µs,30µs,40µs runs=2",
		"B m.json [t1 · v2] 50µs runs=1",
		"C m.json [t3 · v2] 60µs runs=1",
	}

	if !slices.Equal(got, want) {
		t.Errorf("cells\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	if len(cells) > 0 && (cells[0].Phase.Name != result.PhaseRun || len(cells[0].Phase.Operations) != 1) {
		t.Errorf("cell phase %+v", cells[0].Phase)
	}

	// A matrix none of whose trials measured, and one without trials.
	empty := &result.Result{Matrix: &result.Matrix{
		Targets: res.Matrix.Targets, Variants: []string{"v1"}, Rounds: 1,
		Trials: []result.Trial{cellTrial("t1", "v1", 1)},
	}}
	if _, err := MatrixCells("e.json", empty, Label); err == nil || !strings.Contains(err.Error(), "e.json: no matrix cell has measured intervals") {
		t.Errorf("nothing measured: %v", err)
	}

	none := &result.Result{Matrix: &result.Matrix{Rounds: 1}}
	if _, err := MatrixCells("n.json", none, Label); err == nil || !strings.Contains(err.Error(), "results file n.json: the matrix has no trials") {
		t.Errorf("no trials: %v", err)
	}
}

// TestMatrixTables checks the tables of a matrix: one per operation and
// metric, a row per variant and a column per target, "-" where the matrix
// has no verdict, and with one variant the cross-target verdicts.
func TestMatrixTables(t *testing.T) {
	t.Parallel()

	cv := func(name string, median float64, kind vd.Kind) result.CellVerdict {
		return result.CellVerdict{Variant: name, Median: median, Text: "text " + name, Kind: kind}
	}

	m := &result.Matrix{
		Targets:  []result.MatrixTarget{{Name: "t1"}, {Name: "t2"}},
		Variants: []string{"v1", "v2"},
		Verdicts: []result.MatrixVerdict{
			{Target: "t1", Operation: "get", Metric: "throughput", Variants: []result.CellVerdict{cv("v1", 1234.56, vd.Reference), cv("v2", 99, vd.Difference)}},
			{Target: "t1", Operation: "get", Metric: "p50", Variants: []result.CellVerdict{cv("v1", 1500, vd.Reference)}},
		},
	}

	tabs := MatrixTables(m)
	if len(tabs) != len(MatrixMetrics) {
		t.Fatalf("%d tables, want one per metric of the one operation", len(tabs))
	}

	if tabs[0].Title != "get — throughput (ops/s)" || tabs[1].Title != "get — p50 (latency)" || !slices.Equal(tabs[0].Header, []string{"variant", "t1", "t2"}) {
		t.Errorf("titles %q, %q; header %q", tabs[0].Title, tabs[1].Title, tabs[0].Header)
	}

	want := [][]string{{"v1", "1234.6 — text v1", "-"}, {"v2", "99.0 — text v2", "-"}}
	if got := tabs[0].TextRows(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("throughput rows %q, want %q", got, want)
	}

	if c := tabs[0].Rows[1][1]; !c.IsVerdict || c.Kind != vd.Difference {
		t.Errorf("v2 on t1: %+v", c)
	}

	if got := tabs[1].TextRows()[0][1]; got != "1.50ms — text v1" {
		t.Errorf("p50 of v1 on t1: %q", got)
	}

	// One variant on two targets: the cells are the cross-target verdicts.
	cross := &result.Matrix{
		Targets:  []result.MatrixTarget{{Name: "t1"}, {Name: "t2"}},
		Variants: []string{"v1"},
		Verdicts: []result.MatrixVerdict{
			{Target: "t1", Operation: "get", Metric: "p99", Variants: []result.CellVerdict{cv("v1", 100, vd.Reference)}},
			{Target: CrossTarget, Operation: "get", Metric: "p99", Variants: []result.CellVerdict{cv("t1", 100, vd.Reference), cv("t2", 300, vd.Difference)}},
		},
	}

	if got := MatrixTables(cross)[2].TextRows(); !slices.EqualFunc(got, [][]string{{"v1", "100µs — text t1", "300µs — text t2"}}, slices.Equal) {
		t.Errorf("cross-target p99 rows %q", got)
	}
}
