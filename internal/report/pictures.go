package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/metrics"
	vd "github.com/mongobench/mongobench/internal/stats/verdict"
)

// This file draws the comparison pictures of a report with several results
// files or a matrix result: bar charts of the chosen figure with their 95%
// confidence intervals and verdicts, HdrHistogram percentile spectra and
// latency-over-time overlays, one chart per operation with a line per
// variant, target or file.

// bar is one bar of a bar chart: a median with its 95% confidence interval
// (Lo and Hi, nil when there is none) and the verdict beside it.
type bar struct {
	Label string   `json:"label"`
	Value *float64 `json:"value"`
	Lo    *float64 `json:"lo"`
	Hi    *float64 `json:"hi"`
	Text  string   `json:"text"`
	// Kind is the verdict's kind (reference, difference, no-difference,
	// inconclusive), which colours the bar.
	Kind  string `json:"kind"`
	Color string `json:"color"`
}

// picturesView is the comparison section's charts.
type picturesView struct {
	// Figure says which figure the bars show and why.
	Figure string
	// Blocks and Tables are the comparison of separate files from the
	// analysis model (compare's block and tables); Note says how their
	// numbers were formed. Empty for a matrix's pictures.
	Blocks   []blockView
	Tables   []tableView
	Note     string
	Bars     []*chart
	Spectra  []*chart
	Overlays []*chart
}

func (v *picturesView) charts() []*chart {
	if v == nil {
		return nil
	}

	return slices.Concat(v.Bars, v.Spectra, v.Overlays)
}

// contender is one line of a comparison: a variant, a target, a cell of
// both, or a file; its runs are the results measured for it (a matrix
// cell's trials, in round order, or one file).
type contender struct {
	Label string
	Color string
	Runs  []*result.Result
}

// compareOn returns the workload's run.compare_on, the figure its question
// is about ("" when it names none). The spec is generic JSON when read from
// a file, so it is read through JSON.
func compareOn(r *result.Result) string {
	if r == nil || r.Workload.Spec == nil {
		return ""
	}

	var spec struct {
		Run struct {
			CompareOn string `json:"compare_on"`
		} `json:"run"`
	}

	if !decodeSpec(r.Workload.Spec, &spec) {
		return ""
	}

	return spec.Run.CompareOn
}

// chosenFigure returns the metric the bar charts show and the operation to
// put first: run.compare_on may name a metric of the verdicts (p50, p99,
// throughput) or an operation (or measured unit such as a sequence's
// iteration); the median p50 is the default.
func chosenFigure(on string) (metric, first string) {
	switch on {
	case "":
		return "p50", ""
	case "p50", "p99", "throughput":
		return on, ""
	default:
		return "p50", on
	}
}

// figureNote says what the bars show.
func figureNote(metric, first, on string) string {
	what := map[string]string{
		"p50":        "median latency (p50)",
		"p99":        "p99 latency",
		"throughput": "throughput",
	}[metric]

	s := "Bars: " + what
	if on != "" {
		s += fmt.Sprintf(" (the workload's run.compare_on: %s", on)
		if first != "" {
			s += ", shown first"
		}

		s += ")"
	} else {
		s += " (the default figure)"
	}

	return s
}

// decodeSpec reads a workload spec (generic JSON from a file, the workload
// itself in-process) into dst through JSON, reporting whether it could.
func decodeSpec(spec any, dst any) bool {
	var buf bytes.Buffer
	if spec == nil || json.NewEncoder(&buf).Encode(spec) != nil {
		return false
	}

	return json.Unmarshal(buf.Bytes(), dst) == nil
}

// newMatrixPictures draws a matrix result: bars from its verdicts, spectra
// of each cell's trials merged, and each cell's trials over time.
func newMatrixPictures(r *result.Result) *picturesView {
	m := r.Matrix
	if m == nil || len(m.Trials) == 0 && len(m.Verdicts) == 0 {
		return nil
	}

	on := compareOn(r)
	metric, first := chosenFigure(on)
	v := &picturesView{Figure: figureNote(metric, first, on)}

	cross := len(m.Variants) == 1 && len(m.Targets) > 1

	// Each variant or target keeps its colour in every chart.
	cs := matrixContenders(m, cross)
	colorOf := map[string]string{}

	for _, c := range cs {
		colorOf[c.Label] = c.Color
	}

	var verdicts []result.MatrixVerdict

	for _, mv := range m.Verdicts {
		if mv.Metric == metric && cross == (mv.Target == crossTarget) {
			verdicts = append(verdicts, mv)
		}
	}

	sort.SliceStable(verdicts, func(i, j int) bool {
		return first != "" && verdicts[i].Operation == first && verdicts[j].Operation != first
	})

	for i, mv := range verdicts {
		title := mv.Operation + " · " + metric
		if !cross {
			title += " on " + mv.Target
		}

		c := &chart{
			ID:    fmt.Sprintf("matrix-bars-%d", i+1),
			Kind:  "bars",
			Title: title,
			Note: "Median over the trial rounds with its 95% confidence interval (whiskers); " +
				"beside each bar its verdict against the best.",
			YLabel: metric,
			YUnit:  "us",
		}
		if metric == "throughput" {
			c.YUnit = "rate"
		}

		for k, cv := range mv.Variants {
			col, ok := colorOf[cv.Variant]
			if !cross && len(m.Targets) > 1 {
				col, ok = colorOf[mv.Target+" · "+cv.Variant]
			}

			if !ok {
				col = palette[k%len(palette)]
			}

			c.Bars = append(c.Bars, bar{
				Label: cv.Variant, Value: num(cv.Median), Lo: ciBound(cv.Lo, cv.Median, cv.Hi), Hi: ciBound(cv.Hi, cv.Lo, cv.Median),
				Text: cv.Text, Kind: cv.Kind.String(), Color: col,
			})
		}

		v.Bars = append(v.Bars, c)
	}

	v.Spectra = spectrumCharts("matrix", cs, "each cell's trials merged (main phase)")
	v.Overlays = overlayCharts("matrix", cs, "each cell's trials one after another in round order",
		"measured seconds, the cell's trials end to end")

	return v
}

// ciBound returns a bound of a confidence interval, nil when the interval
// is not one (infinite, or, as a file stores a missing interval, zero on
// both sides).
func ciBound(b, other1, other2 float64) *float64 {
	if b == 0 && (other1 == 0 || other2 == 0) {
		return nil
	}

	return num(b)
}

// matrixContenders are a matrix's cells: one per variant on one target, or
// per target when one variant ran on several; each with its trials.
func matrixContenders(m *result.Matrix, cross bool) []contender {
	var out []contender

	add := func(label, tgt, variant string) {
		c := contender{Label: label, Color: palette[len(out)%len(palette)]}

		for _, tr := range m.Trials {
			if tr.Target == tgt && tr.Variant == variant && tr.Result != nil {
				c.Runs = append(c.Runs, tr.Result)
			}
		}

		if len(c.Runs) > 0 {
			out = append(out, c)
		}
	}

	for _, t := range m.Targets {
		for _, variant := range m.Variants {
			label := variant
			switch {
			case cross:
				label = t.Name
			case len(m.Targets) > 1:
				label = t.Name + " · " + variant
			}

			add(label, t.Name, variant)
		}
	}

	return out
}

// newFilesPictures compares several results files as `mongobench compare`
// does, from the same analysis model: the comparison block
// (analysis.FilesBlock), a table per operation (analysis.CompareTable:
// each metric's median over the main phase's intervals with the verdict
// against the first file), bars of the chosen figure drawn from those
// tables' cells, then spectra and overlays. Matrix results among the files
// are left to the matrix section.
func newFilesPictures(results []*result.Result, labels []string) *picturesView {
	var (
		cs    []contender
		files []*analysis.File
	)

	for i, r := range results {
		if r.Matrix != nil || r.MainPhase() == nil {
			continue
		}

		cs = append(cs, contender{Label: labels[i], Color: palette[len(cs)%len(palette)], Runs: []*result.Result{r}})
		files = append(files, &analysis.File{Label: labels[i], Path: labels[i], Res: r, Phase: r.MainPhase()})
	}

	if len(cs) < 2 {
		return nil
	}

	on := compareOn(cs[0].Runs[0])
	metric, first := chosenFigure(on)
	v := &picturesView{Figure: figureNote(metric, first, on), Note: analysis.CompareNote(files)}

	if b := analysis.FilesBlock(files, analysis.DefaultFigure); len(b.Groups) > 0 {
		v.Blocks = append(v.Blocks, newBlockView(b))
	}

	compared := analysis.CompareOperations(files, analysis.Judging{})
	for _, op := range compared {
		v.Tables = append(v.Tables, newTableView(analysis.CompareTable(files, op)))
	}

	ops := operationNames(cs)
	if len(ops) == 0 {
		return nil
	}

	sort.SliceStable(ops, func(i, j int) bool { return first != "" && ops[i] == first && ops[j] != first })

	for i, op := range ops {
		if c := filesBarChart(fmt.Sprintf("files-bars-%d", i+1), cs, compared, op, metric); c != nil {
			v.Bars = append(v.Bars, c)
		}
	}

	v.Spectra = spectrumCharts("files", cs, "main phase of each file")
	v.Overlays = overlayCharts("files", cs, "main phase of each file", "seconds since the phase started")

	return v
}

// filesBarChart draws one operation's metric across files from the
// comparison's table (analysis.CompareOperations): each file's value over
// its runs (one file, one run: the whole main phase's) with its confidence
// interval, and its verdict against the first file, as `mongobench compare`
// prints them.
func filesBarChart(id string, cs []contender, compared []analysis.CompareOp, op, metric string) *chart {
	var row *analysis.CompareRow

	for i := range compared {
		if compared[i].Name != op {
			continue
		}

		for j := range compared[i].Rows {
			if compared[i].Rows[j].Metric.Name == metric {
				row = &compared[i].Rows[j]
			}
		}
	}

	if row == nil || len(row.Cells) != len(cs) {
		return nil
	}

	c := &chart{
		ID:    id,
		Kind:  "bars",
		Title: op + " · " + metric + " per run",
		Note: "Each file's value over its main phase (the median over its runs when a side has several, " +
			"with its 95% confidence interval as whiskers); beside each bar its verdict against the first file, " +
			"as mongobench compare gives it.",
		YLabel: metric,
		YUnit:  "us",
	}
	if metric == "throughput" {
		c.YUnit = "rate"
	}

	for i, ct := range cs {
		cell := row.Cells[i]
		if math.IsNaN(cell.Median) {
			continue
		}

		text, kind := cell.Text, vd.Reference.String()
		if i == 0 {
			text = "baseline"
		}

		if cell.Verdict != nil {
			kind = cell.Verdict.Kind.String()
		}

		c.Bars = append(c.Bars, bar{
			Label: ct.Label, Value: num(cell.Median), Lo: num(cell.Lo), Hi: num(cell.Hi),
			Text: text, Kind: kind, Color: ct.Color,
		})
	}

	if len(c.Bars) == 0 {
		return nil
	}

	return c
}

// operationNames lists the main-phase operations that at least two
// contenders measured (a successful operation in one of their runs), in
// the order first seen: an operation of one contender only has nothing to
// be compared with.
func operationNames(cs []contender) []string {
	var names []string

	seen := map[string]int{}

	for _, c := range cs {
		mine := map[string]bool{}

		for _, r := range c.Runs {
			if p := r.MainPhase(); p != nil {
				for _, o := range p.Operations {
					if o.Count > 0 && !mine[o.Name] {
						mine[o.Name] = true
						seen[o.Name]++

						if !slices.Contains(names, o.Name) {
							names = append(names, o.Name)
						}
					}
				}
			}
		}
	}

	return slices.DeleteFunc(names, func(n string) bool { return seen[n] < 2 })
}

// Percentile spectrum geometry: x is log10(1/(1−q)), so 50% is at 0.30, 90%
// at 1, 99% at 2 and 99.99% at 4; spectrumStep is the spacing of the points
// and spectrumMaxX the farthest (99.999%).
const (
	spectrumStep = 0.05
	spectrumMaxX = 5.0
)

// spectrumCharts draws, per operation, the latency at each percentile of
// every contender's merged histogram. A line stops where its histogram has
// too few values to tell percentiles apart (1/(1−q) above its count).
func spectrumCharts(prefix string, cs []contender, what string) []*chart {
	var out []*chart

	for i, op := range operationNames(cs) {
		c := &chart{
			ID:     fmt.Sprintf("%s-spectrum-%d", prefix, i+1),
			Kind:   "spectrum",
			Title:  op + ": latency by percentile",
			Note:   "HdrHistogram percentile spectrum of " + what + "; both axes logarithmic. A line ends where its run has too few operations to resolve higher percentiles.",
			XLabel: "percentile",
			XName:  "percentile",
			XUnit:  "nines",
			YLabel: "latency",
			YUnit:  "us",
			YLog:   true,
		}

		var maxX float64

		hists := make([]*metrics.Histogram, len(cs))

		for k, ct := range cs {
			hists[k] = mergedHistogram(ct.Runs, op)
			if h := hists[k]; h != nil && h.TotalCount() > 1 {
				maxX = max(maxX, math.Min(spectrumMaxX, math.Log10(float64(h.TotalCount()))))
			}
		}

		if maxX <= 0 {
			continue
		}

		for x := 0.0; x <= maxX+1e-9; x += spectrumStep {
			c.X = append(c.X, math.Round(x*100)/100)
		}

		for k, ct := range cs {
			h := hists[k]
			if h == nil || h.TotalCount() == 0 {
				continue
			}

			if h.TotalCount() < 2 {
				continue
			}

			limit := math.Log10(float64(h.TotalCount()))
			s := series{Label: ct.Label, Color: ct.Color, Values: make([]*float64, len(c.X))}

			for j, x := range c.X {
				if x > limit+1e-9 {
					break
				}

				q := 100 * (1 - math.Pow(10, -x))
				s.Values[j] = num(float64(max(h.ValueAtQuantile(q), 1)))
			}

			c.Series = append(c.Series, s)
		}

		out = append(out, c)
	}

	return out
}

// mergedHistogram merges the latency histograms of op in the main phases
// of runs; nil when none decodes.
func mergedHistogram(runs []*result.Result, op string) *metrics.Histogram {
	var h *metrics.Histogram

	for _, r := range runs {
		p := r.MainPhase()
		if p == nil {
			continue
		}

		for _, o := range p.Operations {
			if o.Name != op || o.Histogram == "" {
				continue
			}

			one, err := metrics.DecodeHistogram(o.Histogram)
			if err != nil {
				continue
			}

			if h == nil {
				h = metrics.NewHistogram()
			}

			h.Merge(one)
		}
	}

	return h
}

// timedInterval is an interval of a contender's runs placed on one time
// axis: the runs' measured times one after another.
type timedInterval struct {
	x  float64
	iv *result.Interval
}

// timeline places the intervals of runs one after another: each run's
// main phase starts where the previous one's measured time ended.
func timeline(runs []*result.Result) []timedInterval {
	var out []timedInterval

	offset := 0.0

	for _, r := range runs {
		p := r.MainPhase()
		if p == nil {
			continue
		}

		end := 0.0

		for k := range p.Intervals {
			iv := &p.Intervals[k]
			out = append(out, timedInterval{x: offset + iv.ElapsedS, iv: iv})
			end = max(end, iv.ElapsedS)
		}

		offset += max(end, p.DurationS)
	}

	return out
}

// overlayCharts draws, per operation, the p50 (solid) and p99 (dashed) of
// each interval of every contender on one time axis: a file's main phase,
// or a matrix cell's trials one after another in round order.
func overlayCharts(prefix string, cs []contender, what, xLabel string) []*chart {
	var out []*chart

	lines := make([][]timedInterval, len(cs))
	for k, ct := range cs {
		lines[k] = timeline(ct.Runs)
	}

	for i, op := range operationNames(cs) {
		var xs []float64

		// Lines of few intervals (a short trial may have one) show their
		// points, which a line alone would not.
		few := false

		for _, line := range lines {
			for _, ti := range line {
				xs = append(xs, ti.x)
			}

			few = few || len(line) <= 12
		}

		slices.Sort(xs)
		xs = slices.Compact(xs)

		if len(xs) == 0 {
			continue
		}

		c := &chart{
			ID:        fmt.Sprintf("%s-overtime-%d", prefix, i+1),
			Title:     op + ": latency over time",
			Note:      "p50 (solid) and p99 (dashed) of each interval, " + what + "; logarithmic latency axis (untick to see it linear).",
			XLabel:    xLabel,
			XName:     "time",
			XUnit:     "s",
			YLabel:    "latency",
			YUnit:     "us",
			LogToggle: true,
			YLog:      true,
			SpanGaps:  true,
			Points:    few,
			X:         xs,
		}

		for k, ct := range cs {
			p50 := series{Label: ct.Label + " p50", Color: ct.Color, Values: make([]*float64, len(xs))}
			p99 := series{Label: ct.Label + " p99", Color: ct.Color, Dash: "dash", Values: make([]*float64, len(xs))}

			for _, ti := range lines[k] {
				j, _ := slices.BinarySearch(xs, ti.x)

				for _, o := range ti.iv.Operations {
					if o.Name == op && o.Count > 0 {
						p50.Values[j] = num(o.LatencyUS.P50)
						p99.Values[j] = num(o.LatencyUS.P99)
					}
				}
			}

			if p50.hasValue() {
				c.Series = append(c.Series, p50, p99)
			}
		}

		if len(c.Series) > 0 {
			out = append(out, c)
		}
	}

	return out
}

// shortLabels names files by their base names when those are distinct,
// else by the labels given.
func shortLabels(labels []string) []string {
	out := make([]string, len(labels))
	seen := map[string]bool{}

	for i, l := range labels {
		out[i] = filepath.Base(l)
		if seen[out[i]] {
			return labels
		}

		seen[out[i]] = true
	}

	return out
}
