package report

import (
	"bytes"
	_ "embed" // the page's template
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/analysis/history"
	"github.com/mongobench/mongobench/internal/base/atomicfile"
	"github.com/mongobench/mongobench/internal/base/units"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// The history page draws each series of `mongobench history` over its
// runs. Its charts are SVG drawn here, not by the run report's script: a
// history is read in CI artefacts and mail as often as in a browser, and
// a picture that needs no script looks the same in all of them (and in a
// screenshot). Everything in the charts is also in the page's tables.

// HistoryOptions adjust a history page. The zero value is valid.
type HistoryOptions struct {
	// Alpha is the level of the change points' ratio intervals (the page
	// says "95% CI" for 0.05); 0 means history.DefaultAlpha.
	Alpha float64

	// MinSize is the detector's fewest runs a side (--min-size); a series
	// with fewer than twice as many runs is said to be too short for a
	// change point. 0 means history.DefaultMinSize.
	MinSize int

	// Generated is shown as the time the page was made; zero leaves it
	// out, so that the same series always give the same page.
	Generated time.Time
}

// WriteFile writes the history page of series to path, atomically (a
// failed write never leaves a partial page).
func (o HistoryOptions) WriteFile(path string, series []history.Series) error {
	var buf bytes.Buffer
	if err := o.Render(&buf, series); err != nil {
		return fmt.Errorf("write history page %s: %w", path, err)
	}

	return atomicfile.WriteBytes(path, buf.Bytes())
}

// Render writes the history page of series to w.
func (o HistoryOptions) Render(w io.Writer, series []history.Series) error {
	alpha := o.Alpha
	if alpha == 0 {
		alpha = history.DefaultAlpha
	}

	p := historyPage{
		PageCSS: template.CSS(pageCSS), //nolint:gosec // the page's own style sheet, embedded
		CI:      fmt.Sprintf("%.0f%% CI", 100*(1-alpha)),
	}

	if !o.Generated.IsZero() {
		p.Generated = formatTime(o.Generated)
	}

	minSize := o.MinSize
	if minSize == 0 {
		minSize = history.DefaultMinSize
	}

	var names []string

	for i, s := range series {
		if !slices.Contains(names, s.Key.Workload) {
			names = append(names, s.Key.Workload)
		}

		p.Series = append(p.Series, newHistorySeriesView(i+1, s, minSize))
	}

	p.Title = "mongobench history"
	if len(names) > 0 {
		p.Title += ": " + strings.Join(names, ", ")
	}

	return historyTmpl.Execute(w, p)
}

// historyPage is what the history template renders.
type historyPage struct {
	Title     string
	Generated string
	CI        string
	PageCSS   template.CSS
	Series    []historySeriesView
}

type historySeriesView struct {
	ID      string
	Title   string
	Sub     string
	TooFew  bool
	Ops     []historyOpView
	Changes []historyChangeRow
	Runs    []historyRunRow
}

type historyOpView struct {
	Name   string
	Charts []*svgChart
}

type historyChangeRow struct {
	Operation, Metric, Run, Before, After, Ratio, CI, P string
	Worse                                               bool
}

type historyRunRow struct {
	N, File, Label, Commit, Started string
}

// historyColor is the colour of a metric in the history charts.
func historyColor(metric string) string {
	switch metric {
	case "p50":
		return "#2563eb"
	case "p95":
		return "#ea580c"
	case "p99":
		return "#dc2626"
	case "throughput":
		return "#16a34a"
	}

	return colorTarget
}

func newHistorySeriesView(n int, s history.Series, minSize int) historySeriesView {
	v := historySeriesView{
		ID:     "series-" + strconv.Itoa(n),
		Title:  s.Key.String(),
		TooFew: len(s.Runs) < 2*minSize,
	}

	if len(s.Runs) > 0 {
		v.Sub = fmt.Sprintf("%d runs, %s … %s", len(s.Runs), s.Runs[0].Name(), s.Runs[len(s.Runs)-1].Name())
	}

	for i, r := range s.Runs {
		v.Runs = append(v.Runs, historyRunRow{
			N: strconv.Itoa(i + 1), File: r.File, Label: r.Label, Commit: r.Commit, Started: formatTime(r.StartedAt),
		})
	}

	var ops []string

	for _, mt := range s.Metrics {
		if !slices.Contains(ops, mt.Operation) {
			ops = append(ops, mt.Operation)
		}

		m := mt.Threshold()

		for _, c := range mt.Changes {
			v.Changes = append(v.Changes, historyChangeRow{
				Operation: mt.Operation, Metric: mt.Metric, Run: fmt.Sprintf("%d: %s", c.Run+1, s.Runs[c.Run].Name()),
				Before: m.Format(c.Before), After: m.Format(c.After), Ratio: verdict.FormatRatio(c.Ratio),
				CI: ciText(c), P: fmt.Sprintf("%.3f", c.P), Worse: c.Worse,
			})
		}
	}

	labels := runTickLabels(s.Runs)

	for _, op := range ops {
		ov := historyOpView{Name: op}

		if c := historyChart(s, op, []string{"p50", "p95", "p99"}, labels, "latency"); c != nil {
			ov.Charts = append(ov.Charts, c)
		}

		if c := historyChart(s, op, []string{"throughput"}, labels, "throughput"); c != nil {
			ov.Charts = append(ov.Charts, c)
		}

		if c := historyChart(s, op, []string{history.MaxRate}, labels, "maximum sustainable rate"); c != nil {
			ov.Charts = append(ov.Charts, c)
		}

		v.Ops = append(v.Ops, ov)
	}

	return v
}

// ciText is a change's ratio interval, "-" when it has none.
func ciText(c history.Change) string {
	if math.IsNaN(c.RatioLo) || math.IsNaN(c.RatioHi) {
		return "-"
	}

	return verdict.FormatInterval(c.RatioLo, c.RatioHi)
}

// runTickLabels names each run on a chart's x axis: its number, and its
// label (else its commit, else its start date) where that differs from
// the run before, so that a long series at one version is not a wall of
// the same word while the run where the label changes stands out.
func runTickLabels(runs []history.Run) []string {
	out := make([]string, len(runs))
	prev := ""

	for i, r := range runs {
		name := r.Label

		switch {
		case name == "" && r.Commit != "":
			name = r.Commit[:min(len(r.Commit), 8)]
		case name == "" && !r.StartedAt.IsZero():
			name = r.StartedAt.UTC().Format("01-02 15:04")
		}

		out[i] = strconv.Itoa(i + 1)
		if name != "" && name != prev {
			out[i] += " · " + truncate(name, 12)
		}

		prev = name
	}

	return out
}

// svgChart is one chart of a history page, laid out in its own units (the
// SVG's viewBox), every coordinate a formatted number.
type svgChart struct {
	Title   string
	Note    string
	Width   int
	Height  int
	Legend  []svgLegend
	Frame   svgRect
	Grid    []svgLine
	YTicks  []svgText
	XTicks  []svgText
	Bands   []svgRect
	Levels  []svgLine
	Lines   []svgPath
	Bars    []svgLine
	Points  []svgPoint
	Marks   []svgLine
	Labels  []svgText
	Summary string
}

type svgLegend struct{ Color, Label string }

type svgRect struct{ X, Y, W, H, Color string }

type svgLine struct{ X1, Y1, X2, Y2, Color string }

type svgPath struct{ D, Color string }

type svgText struct{ X, Y, Text, Color string }

// svgPoint is a run's value; Up marks one above the axis, drawn on its top
// edge as a triangle.
type svgPoint struct {
	X, Y, Color, Title string
	Up                 bool
}

// The chart's size in its own units and its plot area's margins.
const (
	chartW                        = 640
	plotL, plotR, plotT           = 70, 14, 46
	plotWidth, plotHeight float64 = chartW - plotL - plotR, 200
)

// f formats a coordinate.
func f(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// historyChart draws operation op's metrics over the runs of s: a line
// and points per metric, each segment's level and between-run spread,
// each run's own dispersion as whiskers, and the change points as
// vertical lines with their ratio. nil when no metric has a value.
func historyChart(s history.Series, op string, metrics []string, ticks []string, what string) *svgChart {
	var mts []history.Metric

	for _, name := range metrics {
		i := slices.IndexFunc(s.Metrics, func(m history.Metric) bool { return m.Operation == op && m.Metric == name })
		if i >= 0 && hasValue(s.Metrics[i].Values) {
			mts = append(mts, s.Metrics[i])
		}
	}

	if len(mts) == 0 {
		return nil
	}

	n := len(s.Runs)
	x := func(i int) float64 {
		if n == 1 {
			return plotL + plotWidth/2
		}

		return plotL + plotWidth*float64(i)/float64(n-1)
	}

	// The y range: from 0, so that a ratio reads as the heights' ratio,
	// to the highest band, and the values and whiskers up to 1.6 times
	// that: one run stalled by a busy machine (a p99 ten times the
	// others) would otherwise flatten every level to the bottom. Points
	// above the axis are drawn on its top edge.
	bands := 0.0

	for _, mt := range mts {
		for _, sg := range segments(mt) {
			bands = max(bands, sg.med+sg.spread)
		}
	}

	limit, top := 1.6*bands, bands

	for _, mt := range mts {
		for i, v := range mt.Values {
			if !isNum(v) || float64(v) > limit {
				continue
			}

			hi := float64(v)
			if isNum(mt.Noise[i]) {
				hi *= 1 + float64(mt.Noise[i])
			}

			top = max(top, min(hi, limit))
		}
	}

	step, ymax := niceScale(top)
	y := func(v float64) float64 { return plotT + plotHeight*(1-min(v, ymax)/ymax) }
	clipped := false

	m := mts[0].Threshold()
	format := func(v float64) string {
		switch {
		case m.Latency():
			return units.Micros(v)
		case v == 0:
			return "0/s"
		default:
			return formatRate(v) + "/s"
		}
	}

	c := &svgChart{
		Width: chartW, Height: plotT + int(plotHeight) + axisRoom(ticks),
		Frame: svgRect{X: f(plotL), Y: f(plotT), W: f(plotWidth), H: f(plotHeight)},
	}

	if what == "latency" {
		c.Title = op + ": latency over runs"
	} else {
		c.Title = op + ": throughput over runs"
	}

	for v := 0.0; v <= ymax*(1+1e-9); v += step {
		c.Grid = append(c.Grid, svgLine{X1: f(plotL), Y1: f(y(v)), X2: f(plotL + plotWidth), Y2: f(y(v))})
		c.YTicks = append(c.YTicks, svgText{X: f(plotL - 6), Y: f(y(v) + 4), Text: format(v)})
	}

	every := max(1, (n+29)/30) // at most about 30 run names on the axis
	for i, t := range ticks {
		if i%every == 0 || i == n-1 {
			c.XTicks = append(c.XTicks, svgText{X: f(x(i)), Y: f(plotT + plotHeight + 12), Text: t})
		}
	}

	half := 0.0
	if n > 1 {
		half = plotWidth / float64(n-1) / 2
	}

	marksAt := map[int]int{} // labels already stacked at a run

	var hasNoise bool

	for _, mt := range mts {
		color := historyColor(mt.Metric)
		c.Legend = append(c.Legend, svgLegend{Color: color, Label: mt.Metric})

		for _, sg := range segments(mt) {
			x1, x2 := max(plotL, x(sg.from)-half), min(plotL+plotWidth, x(sg.to-1)+half)
			lo, hi := max(0, sg.med-sg.spread), sg.med+sg.spread
			c.Bands = append(c.Bands, svgRect{X: f(x1), Y: f(y(hi)), W: f(x2 - x1), H: f(y(lo) - y(hi)), Color: color})
			c.Levels = append(c.Levels, svgLine{X1: f(x1), Y1: f(y(sg.med)), X2: f(x2), Y2: f(y(sg.med)), Color: color})
		}

		var d strings.Builder

		pen := "M"

		for i, v := range mt.Values {
			if !isNum(v) {
				pen = "M" // a gap where a run has no value

				continue
			}

			fmt.Fprintf(&d, "%s%s %s ", pen, f(x(i)), f(y(float64(v))))
			pen = "L"

			title := fmt.Sprintf("run %d, %s: %s %s", i+1, s.Runs[i].Name(), mt.Metric, format(float64(v)))

			if nz := mt.Noise[i]; isNum(nz) {
				hasNoise = true
				title += fmt.Sprintf(" (own dispersion ±%.1f%%)", 100*float64(nz))
				lo, hi := float64(v)*(1-float64(nz)), float64(v)*(1+float64(nz))
				c.Bars = append(c.Bars, svgLine{X1: f(x(i)), Y1: f(y(max(0, lo))), X2: f(x(i)), Y2: f(y(hi)), Color: color})
			}

			pt := svgPoint{X: f(x(i)), Y: f(y(float64(v))), Color: color, Title: title}
			if float64(v) > ymax {
				clipped = true
				pt.Up = true
			}

			c.Points = append(c.Points, pt)
		}

		c.Lines = append(c.Lines, svgPath{D: strings.TrimSpace(d.String()), Color: color})

		for _, ch := range mt.Changes {
			// The line is drawn between the last run at the old level
			// and the first at the new one.
			xc := x(ch.Run) - half
			c.Marks = append(c.Marks, svgLine{X1: f(xc), Y1: f(plotT - 4), X2: f(xc), Y2: f(plotT + plotHeight), Color: color})

			k := marksAt[ch.Run]
			marksAt[ch.Run]++
			label := "×" + strings.TrimSuffix(verdict.FormatRatio(ch.Ratio), "×")
			if len(mts) > 1 {
				label = mt.Metric + " " + label
			}

			// Above the plot, stacked upwards where several metrics
			// change at the same run.
			c.Labels = append(c.Labels, svgText{X: f(xc + 3), Y: f(plotT - 6 - 12*float64(k)), Text: label, Color: color})
		}
	}

	var notes []string
	if !hasNoise {
		notes = append(notes, "No run has its own dispersion (fewer than 3 intervals): no whiskers.")
	}

	if clipped {
		notes = append(notes, "Triangles on the top edge are runs above the axis (hover for the value).")
	}

	c.Note = strings.Join(notes, " ")

	return c
}

// segment is a run of values between change points: runs [from, to), its
// median level and between-run spread.
type segment struct {
	from, to    int
	med, spread float64
}

// segments splits a metric's runs at its change points and measures each
// part: its median, and 1.4826 × the median absolute deviation of its
// values (a robust standard deviation: the spread a new run at that
// level is expected within).
func segments(mt history.Metric) []segment {
	bounds := []int{0}
	for _, c := range mt.Changes {
		bounds = append(bounds, c.Run)
	}

	bounds = append(bounds, len(mt.Values))

	var out []segment

	for i := 0; i+1 < len(bounds); i++ {
		var vals []float64

		for _, v := range mt.Values[bounds[i]:bounds[i+1]] {
			if isNum(v) {
				vals = append(vals, float64(v))
			}
		}

		if len(vals) == 0 {
			continue
		}

		med := verdict.Median(vals)
		dev := make([]float64, len(vals))

		for j, v := range vals {
			dev[j] = math.Abs(v - med)
		}

		out = append(out, segment{from: bounds[i], to: bounds[i+1], med: med, spread: 1.4826 * verdict.Median(dev)})
	}

	return out
}

func isNum(v history.Value) bool {
	return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
}

func hasValue(vs []history.Value) bool {
	return slices.ContainsFunc(vs, isNum)
}

// niceScale is a step of 1, 2, 2.5 or 5 times a power of ten giving about
// five grid lines up to at least top, and the axis' end.
func niceScale(top float64) (step, end float64) {
	if !(top > 0) {
		return 1, 1
	}

	raw := top / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))

	for _, k := range []float64{1, 2, 2.5, 5, 10} {
		if k*mag >= raw {
			step = k * mag

			break
		}
	}

	return step, math.Ceil(top/step-1e-9) * step
}

//go:embed page/history.html.tmpl
var historyTemplate string

// historyTmpl is the history page. html/template escapes every value for
// its context, inside the SVG too: a label or file name is text, never
// markup.
var historyTmpl = template.Must(template.New("history").Parse(historyTemplate))

// axisRoom is the height below the plot that the x axis' names take,
// written at 40°: about 4 units a character, 12 for the first line.
func axisRoom(ticks []string) int {
	longest := 0
	for _, t := range ticks {
		longest = max(longest, len([]rune(t)))
	}

	return 16 + 4*longest
}

// truncate shortens s to n characters, the last an ellipsis.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}

	return string(r[:n-1]) + "…"
}
