package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/base/units"
	"github.com/mongobench/mongobench/internal/results/result"
)

// This file builds the view of a measured phase: its tables, time series,
// growth blocks and background jobs.

type phaseView struct {
	ID       string
	Name     string
	Model    string
	Measured string

	// OpenLoop says latencies are response times from the scheduled start.
	OpenLoop bool

	Ops        []opRow
	Service    []opRow
	HasDecode  bool
	HasClamped bool

	Schedule   *scheduleView
	Charts     []*chart
	Blocks     *blocksView
	Background []*backgroundView
}

// opRow is an operation's line in a summary table.
type opRow struct {
	Name   string
	Color  string
	Count  string
	Rate   string
	Mean   string
	P50    string
	P90    string
	P95    string
	P99    string
	P999   string
	Max    string
	Errors []string
	// Failed marks an operation with errors.
	Failed   bool
	Docs     string
	Clamped  string
	Decode   string
	USPerDoc string
}

type scheduleView struct {
	Title   string
	Items   []field
	Warning string
}

type blocksView struct {
	// Charts are one panel per operation.
	Charts     []*chart
	Rows       []blockRow
	Incomplete bool
}

// blockRow is one operation of a block; the first of a block carries the
// block's columns, spanning its operations' rows.
type blockRow struct {
	First      bool
	Span       int
	Block      string
	Documents  string
	Data       string
	Indexes    string
	SizeNote   string
	Incomplete bool
	Op         opRow
}

type backgroundView struct {
	Operation string
	Mode      string
	// Highest is the highest sustained rate, with HighestNote saying what
	// it means; Unsustained is set when no rate was sustained.
	Highest     string
	HighestNote string
	Unsustained bool
	Decisions   string
	Chart       *chart
	Schedule    *scheduleView
}

func newPhaseView(id string, p *result.Phase, cols colors) *phaseView {
	v := &phaseView{
		ID:       id,
		Name:     p.Name,
		Model:    modelName(p.Model),
		OpenLoop: p.Schedule != nil,
	}

	v.Measured = formatSeconds(p.DurationS) + " measured"
	if p.WarmupS > 0 {
		v.Measured += " after " + formatSeconds(p.WarmupS) + " warm-up"
	}

	for _, o := range p.Operations {
		v.Ops = append(v.Ops, newOpRow(o, cols))
		v.HasDecode = v.HasDecode || o.Decode != ""
		v.HasClamped = v.HasClamped || o.Clamped > 0
	}

	// Service times, recorded for open-loop phases: an operation without
	// them (none succeeded) shows dashes.
	if slices.ContainsFunc(p.Operations, func(o result.Operation) bool { return o.ServiceLatencyUS != nil }) {
		for _, o := range p.Operations {
			svc := o
			if o.ServiceLatencyUS == nil {
				svc.Count = 0
			} else {
				svc.LatencyUS = *o.ServiceLatencyUS
			}

			v.Service = append(v.Service, newOpRow(svc, cols))
		}
	}

	if p.Schedule != nil {
		v.Schedule = newScheduleView("Schedule", p.Schedule)
	}

	if len(p.Intervals) > 0 {
		v.Charts = phaseCharts(id, p, cols)
	}

	if len(p.Blocks) > 0 {
		v.Blocks = newBlocksView(id, p.Blocks, cols)
	}

	for i := range p.Background {
		v.Background = append(v.Background, newBackgroundView(fmt.Sprintf("%s-bg%d", id, i+1), &p.Background[i], cols))
	}

	return v
}

func newOpRow(o result.Operation, cols colors) opRow {
	l := o.LatencyUS
	row := opRow{
		Name:    o.Name,
		Color:   cols.of(o.Name),
		Count:   groupDigits(o.Count),
		Rate:    formatRate(o.OpsPerSec),
		Mean:    latencyCell(o.Count, l.Mean),
		P50:     latencyCell(o.Count, l.P50),
		P90:     latencyCell(o.Count, l.P90),
		P95:     latencyCell(o.Count, l.P95),
		P99:     latencyCell(o.Count, l.P99),
		P999:    latencyCell(o.Count, l.P999),
		Max:     latencyCell(o.Count, l.Max),
		Errors:  errorsList(o.Errors),
		Failed:  errorTotal(o.Errors) > 0,
		Docs:    groupDigits(o.Docs),
		Clamped: groupDigits(o.Clamped),
		Decode:  o.Decode,
	}

	if o.Decode != "" && o.Docs > 0 {
		row.USPerDoc = fmt.Sprintf("%.2fµs", o.USPerDoc)
	}

	return row
}

func newScheduleView(title string, s *result.Schedule) *scheduleView {
	pct := func(n int64) string {
		if s.Scheduled <= 0 {
			return groupDigits(n)
		}

		return fmt.Sprintf("%s (%.1f%%)", groupDigits(n), 100*float64(n)/float64(s.Scheduled))
	}

	v := &scheduleView{
		Title: title,
		Items: []field{
			{Label: "Due", Value: groupDigits(s.Scheduled)},
			{Label: "Late", Value: pct(s.Late), Class: warnIf(s.Late > 0)},
			{Label: "Dropped", Value: pct(s.Dropped), Class: badIf(s.Dropped > 0)},
			{Label: "Pending at the end", Value: groupDigits(s.Pending)},
		},
		Warning: s.Warning,
	}

	if s.MaxInFlight > 0 {
		v.Items = append(v.Items, field{Label: "In-flight slots", Value: fmt.Sprint(s.MaxInFlight)})
	}

	v.Items = append(v.Items,
		field{Label: "Longest wait for a slot", Value: units.Micros(s.MaxWaitUS)},
		field{Label: "Scheduler lag up to", Value: units.Micros(s.MaxSchedulerLagUS)},
	)

	return v
}

func warnIf(b bool) string {
	if b {
		return "warn"
	}

	return ""
}

func badIf(b bool) string {
	if b {
		return "bad"
	}

	return ""
}

// phaseCharts returns the time series of a phase: latency percentiles,
// throughput (with the plan when there is one) and, if any, errors.
func phaseCharts(id string, p *result.Phase, cols colors) []*chart {
	x := make([]float64, len(p.Intervals))
	for i, iv := range p.Intervals {
		x[i] = iv.ElapsedS
	}

	// Operations by index, as intervals list them in the phase's order.
	names := make([]string, len(p.Operations))
	for i, o := range p.Operations {
		names[i] = o.Name
	}

	opAt := func(iv *result.Interval, i int) *result.Operation {
		if i < len(iv.Operations) && iv.Operations[i].Name == names[i] {
			return &iv.Operations[i]
		}

		for j := range iv.Operations {
			if iv.Operations[j].Name == names[i] {
				return &iv.Operations[j]
			}
		}

		return nil
	}

	lat := &chart{
		ID:        id + "-latency",
		Sync:      id,
		Title:     "Latency percentiles over time",
		Note:      "p50 (solid) and p99 (dashed) of each interval; gaps are intervals without a successful operation.",
		XLabel:    "seconds since the phase started",
		XName:     "time",
		XUnit:     "s",
		YLabel:    "latency",
		YUnit:     "us",
		LogToggle: true,
		X:         x,
	}

	if p.Schedule != nil {
		lat.Note = "Response time from each operation's scheduled start. " + lat.Note
	}

	tput := &chart{
		ID:     id + "-throughput",
		Sync:   id,
		Title:  "Throughput over time",
		Note:   "Successful operations per second in each interval.",
		XLabel: "seconds since the phase started",
		XName:  "time",
		XUnit:  "s",
		YLabel: "operations/s",
		YUnit:  "rate",
		X:      x,
	}

	errs := &chart{
		ID:     id + "-errors",
		Sync:   id,
		Title:  "Errors over time",
		Note:   "Failed operations per second in each interval, all kinds together.",
		XLabel: "seconds since the phase started",
		XName:  "time",
		XUnit:  "s",
		YLabel: "errors/s",
		YUnit:  "rate",
		X:      x,
	}

	anyErrors := false
	total := make([]float64, len(x))
	sliver := analysis.Slivers(p)

	if slices.Contains(sliver, true) {
		const cut = " Intervals a growth block's end cut to a sliver (under a quarter of the usual length) are left out: a few operations over a few milliseconds are no rate."
		tput.Note += cut
		errs.Note += cut
	}

	for i, name := range names {
		col := cols.of(name)
		p50 := series{Label: name + " p50", Color: col, Values: make([]*float64, len(x))}
		p99 := series{Label: name + " p99", Color: col, Dash: "dash", Values: make([]*float64, len(x))}
		ops := series{Label: name, Color: col, Values: make([]*float64, len(x))}
		bad := series{Label: name, Color: col, Values: make([]*float64, len(x))}

		for k := range p.Intervals {
			iv := &p.Intervals[k]

			o := opAt(iv, i)
			if o == nil {
				continue
			}

			if o.Count > 0 {
				p50.Values[k] = num(o.LatencyUS.P50)
				p99.Values[k] = num(o.LatencyUS.P99)
			}

			if sliver[k] {
				continue
			}

			ops.Values[k] = num(o.OpsPerSec)
			total[k] += o.OpsPerSec

			if secs := iv.End.Sub(iv.Start).Seconds(); secs > 0 {
				n := errorTotal(o.Errors)
				bad.Values[k] = num(float64(n) / secs)
				anyErrors = anyErrors || n > 0
			}
		}

		lat.Series = append(lat.Series, p50, p99)
		tput.Series = append(tput.Series, ops)
		errs.Series = append(errs.Series, bad)
	}

	if len(names) > 1 {
		s := series{Label: "all operations", Color: colorTotal, Width: 1.5, Values: make([]*float64, len(x))}
		for k, v := range total {
			if !sliver[k] {
				s.Values[k] = num(v)
			}
		}

		tput.Series = append(tput.Series, s)
	}

	addTargets(tput, p.Targets)

	charts := []*chart{lat, tput}
	if anyErrors {
		charts = append(charts, errs)
	}

	return charts
}

// addTargets overlays a phase's plan on its throughput chart: the planned
// rate on the rate axis, the planned concurrency on a second axis.
func addTargets(c *chart, targets []result.PlanPoint) {
	if len(targets) == 0 || len(c.X) == 0 {
		return
	}

	rate := series{Label: "planned rate", Color: colorTarget, Dash: "dash", Width: 2, Values: make([]*float64, len(c.X))}
	conc := series{Label: "planned workers", Color: colorTarget, Dash: "dot", Width: 2, Axis: 2, Values: make([]*float64, len(c.X))}

	// Half the shortest interval: a plan point belongs to the interval
	// whose end is that close.
	tol := math.Inf(1)
	prev := 0.0

	for _, x := range c.X {
		if d := x - prev; d > 0 {
			tol = min(tol, d/2)
		}

		prev = x
	}

	for i, t := range targets {
		k := i
		if len(targets) != len(c.X) {
			k = nearest(c.X, t.ElapsedS)
			if k < 0 || math.Abs(c.X[k]-t.ElapsedS) > tol {
				continue
			}
		}

		if t.Rate > 0 {
			rate.Values[k] = num(t.Rate)
		}

		if t.Concurrency > 0 {
			conc.Values[k] = num(float64(t.Concurrency))
		}
	}

	if rate.hasValue() {
		c.Series = append(c.Series, rate)
		c.Note += " The dashed grey line is the planned rate."
	}

	if conc.hasValue() {
		c.Series = append(c.Series, conc)
		c.Y2Label = "workers"
		c.Y2Unit = "count"
		c.Note += " The dotted grey line is the planned number of workers (right axis)."
	}
}

// nearest returns the index of the value of xs closest to x, -1 if none.
func nearest(xs []float64, x float64) int {
	best, bestD := -1, math.Inf(1)

	for i, v := range xs {
		if d := math.Abs(v - x); d < bestD {
			best, bestD = i, d
		}
	}

	return best
}

func newBlocksView(id string, blocks []result.Block, cols colors) *blocksView {
	v := &blocksView{}

	for _, b := range blocks {
		block := fmt.Sprint(b.Index + 1)
		if !b.Complete {
			block += "*"
			v.Incomplete = true
		}

		note := b.Collection.Note
		if b.Collection.Error != "" {
			note = b.Collection.Error
		}

		for i, o := range b.Operations {
			v.Rows = append(v.Rows, blockRow{
				First:      i == 0,
				Span:       len(b.Operations),
				Block:      block,
				Documents:  groupDigits(b.Collection.Documents),
				Data:       units.Bytes(b.Collection.DataBytes),
				Indexes:    units.Bytes(b.Collection.IndexBytes),
				SizeNote:   note,
				Incomplete: !b.Complete,
				Op:         newOpRow(o, cols),
			})
		}
	}

	// The chart: blocks whose size is known, by size.
	var known []result.Block

	for _, b := range blocks {
		if b.Collection.Error == "" {
			known = append(known, b)
		}
	}

	sort.SliceStable(known, func(i, j int) bool { return known[i].Collection.Documents < known[j].Collection.Documents })

	if len(known) == 0 {
		return v
	}

	coll := known[0].Collection.Name

	var xs []float64
	for _, b := range known {
		xs = append(xs, float64(b.Collection.Documents))
	}

	var names []string

	seen := map[string]bool{}

	for _, b := range known {
		for _, o := range b.Operations {
			if !seen[o.Name] {
				seen[o.Name] = true
				names = append(names, o.Name)
			}
		}
	}

	// One panel per operation, each with its own latency axis, so that a
	// fast operation is not a flat line under a slow one.
	for n, name := range names {
		col := cols.of(name)
		c := &chart{
			ID:        fmt.Sprintf("%s-blocks-%d", id, n+1),
			Title:     name + ": latency vs collection size",
			Note:      "One point per growth block: p50 (solid), p95 (dashed) and p99 (dotted) of the block's " + name + " operations against the documents in " + coll + " at the block's end.",
			XLabel:    "documents in " + coll,
			XName:     "documents",
			XUnit:     "count",
			YLabel:    "latency",
			YUnit:     "us",
			LogToggle: true,
			Points:    true,
			X:         xs,
		}

		for _, pc := range []struct {
			label, dash string
			get         func(result.Latency) float64
		}{
			{"p50", "", func(l result.Latency) float64 { return l.P50 }},
			{"p95", "dash", func(l result.Latency) float64 { return l.P95 }},
			{"p99", "dot", func(l result.Latency) float64 { return l.P99 }},
		} {
			s := series{Label: name + " " + pc.label, Color: col, Dash: pc.dash, Values: make([]*float64, len(known))}

			for k, b := range known {
				for _, o := range b.Operations {
					if o.Name == name && o.Count > 0 {
						s.Values[k] = num(pc.get(o.LatencyUS))
					}
				}
			}

			c.Series = append(c.Series, s)
		}

		addGrowthFits(c, blocks, name, col, xs)
		v.Charts = append(v.Charts, c)
	}

	return v
}

func newBackgroundView(id string, bg *result.Background, cols colors) *backgroundView {
	v := &backgroundView{Operation: bg.Operation}

	if pc := bg.Pacing; pc != nil {
		v.Mode = fmt.Sprintf("latency-paced on p%g: speeds up ×%g while below %s, slows down ×%g from %s; rate between %s/s and %s/s, starting at %s/s",
			pc.Percentile, pc.SpeedUp, units.Micros(pc.LowUS), pc.SlowDown, units.Micros(pc.HighUS),
			formatRate(pc.Min), formatRate(pc.Max), formatRate(pc.Start))

		if bg.HighestSustainedRate > 0 {
			v.Highest = formatRate(bg.HighestSustainedRate) + "/s"
			v.HighestNote = fmt.Sprintf("highest rate whose following interval kept p%g below %s", pc.Percentile, units.Micros(pc.HighUS))
		} else {
			v.Highest = "none"
			v.HighestNote = fmt.Sprintf("no rate kept p%g below %s", pc.Percentile, units.Micros(pc.HighUS))
			v.Unsustained = true
		}
	} else {
		v.Mode = fmt.Sprintf("fixed rate of %s/s", formatRate(bg.Rate))
	}

	if len(bg.Trajectory) > 0 {
		actions := map[string]int{}

		var order []string

		for _, pt := range bg.Trajectory {
			a := pt.Action
			if a == "" {
				a = "none"
			}

			if actions[a] == 0 {
				order = append(order, a)
			}

			actions[a]++
		}

		parts := make([]string, len(order))
		for i, a := range order {
			parts[i] = fmt.Sprintf("%d × %s", actions[a], a)
		}

		v.Decisions = fmt.Sprintf("%d decisions: %s", len(bg.Trajectory), strings.Join(parts, ", "))
		v.Chart = trajectoryChart(id, bg, cols)
	}

	if bg.Schedule != nil {
		v.Schedule = newScheduleView("Its schedule", bg.Schedule)
	}

	return v
}

func trajectoryChart(id string, bg *result.Background, cols colors) *chart {
	c := &chart{
		ID:      id,
		Title:   "Rate trajectory of " + bg.Operation,
		Note:    "The rate the controller chose at each decision (left axis) and the latency percentile it observed over the interval before (right axis).",
		XLabel:  "seconds since the phase started (warm-up included)",
		XName:   "time",
		XUnit:   "s",
		YLabel:  "operations/s",
		YUnit:   "rate",
		Y2Label: "observed latency",
		Y2Unit:  "us",
		Points:  true,
	}

	n := len(bg.Trajectory)
	rate := series{Label: "rate", Color: cols.of(bg.Operation), Width: 2, Values: make([]*float64, n)}
	obs := series{Label: "observed latency", Color: colorTotal, Axis: 2, Width: 1, Dash: "dash", Values: make([]*float64, n)}

	for i, pt := range bg.Trajectory {
		c.X = append(c.X, pt.OffsetS)
		rate.Values[i] = num(pt.Rate)

		if pt.Samples > 0 {
			obs.Values[i] = num(pt.ObservedUS)
		}
	}

	c.Series = append(c.Series, rate, obs)

	if pc := bg.Pacing; pc != nil {
		if pc.Percentile > 0 {
			obs.Label = fmt.Sprintf("observed p%g", pc.Percentile)
			c.Series[1] = obs
		}

		low := series{Label: "low threshold", Color: colorLow, Axis: 2, Dash: "dot", Width: 1, Values: make([]*float64, n)}
		high := series{Label: "high threshold", Color: colorHigh, Axis: 2, Dash: "dot", Width: 1, Values: make([]*float64, n)}

		for i := range n {
			low.Values[i] = num(pc.LowUS)
			high.Values[i] = num(pc.HighUS)
		}

		c.Series = append(c.Series, low, high)

		if bg.HighestSustainedRate > 0 {
			hs := series{Label: "highest sustained rate", Color: colorTarget, Dash: "dash", Width: 1, Values: make([]*float64, n)}
			for i := range n {
				hs.Values[i] = num(bg.HighestSustainedRate)
			}

			c.Series = append(c.Series, hs)
		}
	}

	return c
}
