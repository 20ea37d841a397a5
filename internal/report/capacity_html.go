package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/mongobench/mongobench/internal/base/units"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/threshold"
)

// The capacity section of a run's report is drawn on the server as inline
// SVG rather than by the page's chart script: it is a handful of points,
// reads the same printed or without script, and its marks (the SLO line,
// the capacity and its interval) are annotations the line charts lack.

// svg geometry: the plot area inside its margins.
const (
	svgW, svgH                        = 640.0, 340.0
	svgLeft, svgRight, svgTop, svgBot = 70.0, 20.0, 20.0, 50.0
)

// capacitySection is a run's capacity section, ready HTML.
type capacitySection = template.HTML

// capacityHTML is the capacity section of run id, empty without one.
func capacityHTML(id string, c *result.Capacity) capacitySection {
	if c == nil {
		return ""
	}

	var b strings.Builder

	fmt.Fprintf(&b, `<section class="card" id="%s-capacity"><h2>Capacity</h2>`, id)
	fmt.Fprintf(&b, `<p><strong>%s</strong></p><p class="sub">Objectives: %s. %s</p>`,
		esc(CapacityLine(c)), esc(strings.Join(c.SLO, "; ")), esc(capitalise(c.Verdict)+"."))

	b.WriteString(`<div class="charts">`)
	b.WriteString(latencyPicture(c))

	if len(c.Sweep) > 0 {
		b.WriteString(sweepPicture(c))
	}

	b.WriteString(`</div>`)
	b.WriteString(stepsTable("Rate steps (open loop), in the order they ran", c.Steps, false))

	if len(c.Sweep) > 0 {
		b.WriteString(stepsTable("Concurrency sweep (closed loop)", c.Sweep, true))
		b.WriteString(fitText(c.Fit))
	}

	b.WriteString(`</section>`)

	return template.HTML(b.String()) //nolint:gosec // built here from escaped text and numbers
}

func esc(s string) string { return template.HTMLEscapeString(s) }

func capitalise(s string) string {
	if s == "" {
		return s
	}

	return strings.ToUpper(s[:1]) + s[1:]
}

// axis maps values to pixels, linearly or by decades.
type axis struct {
	lo, hi   float64
	log      bool
	from, to float64 // pixels
}

func (a axis) px(v float64) float64 {
	if a.log {
		v, a.lo, a.hi = math.Log10(max(v, 1e-9)), math.Log10(a.lo), math.Log10(a.hi)
	}

	if a.hi == a.lo {
		return a.from
	}

	return a.from + (v-a.lo)/(a.hi-a.lo)*(a.to-a.from)
}

// ticks are about five round values over a linear axis, or the decades
// (and their halves) of a log one.
func (a axis) ticks() []float64 {
	var out []float64

	if !(a.hi > a.lo) || math.IsInf(a.hi, 0) || a.log && !(a.lo > 0) {
		return nil // nothing to mark, and no loop without an end
	}

	if a.log {
		for d := math.Floor(math.Log10(a.lo)); d <= math.Ceil(math.Log10(a.hi)); d++ {
			for _, m := range []float64{1, 2, 5} {
				if v := m * math.Pow(10, d); v >= a.lo && v <= a.hi {
					out = append(out, v)
				}
			}
		}

		return out
	}

	step := math.Pow(10, math.Floor(math.Log10((a.hi-a.lo)/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (a.hi-a.lo)/(step*m) <= 6 {
			step *= m
			break
		}
	}

	for v := math.Ceil(a.lo/step) * step; v <= a.hi+step/1e6; v += step {
		out = append(out, v)
	}

	return out
}

// frame draws the axes, their ticks and labels.
func frame(b *strings.Builder, title string, x, y axis, xLabel, yLabel string, xFmt, yFmt func(float64) string) {
	// The picture scales down with its column (two side by side may
	// not have 2 × svgW of width) and never up beyond its drawn size.
	fmt.Fprintf(b, `<figure class="chart" style="margin:0;min-width:0"><figcaption>%s</figcaption><svg viewBox="0 0 %.0f %.0f" style="width:100%%;max-width:%.0fpx;height:auto" role="img" aria-label="%s" font-size="11" font-family="sans-serif">`,
		esc(title), svgW, svgH, svgW, esc(title))
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#999"/>`, svgLeft, svgTop, svgW-svgLeft-svgRight, svgH-svgTop-svgBot)

	for _, t := range x.ticks() {
		p := x.px(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`,
			p, svgTop, p, svgH-svgBot, p, svgH-svgBot+15, esc(xFmt(t)))
	}

	for _, t := range y.ticks() {
		p := y.px(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/><text x="%.1f" y="%.1f" text-anchor="end">%s</text>`,
			svgLeft, p, svgW-svgRight, p, svgLeft-5, p+4, esc(yFmt(t)))
	}

	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, (svgLeft+svgW-svgRight)/2, svgH-12, esc(xLabel))
	fmt.Fprintf(b, `<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, (svgTop+svgH-svgBot)/2, esc(yLabel))
}

func rate(v float64) string { return fmt.Sprintf("%g", v) }

// latencyPicture is p50 and p99 against the achieved throughput of every
// rate step, the latency objectives as horizontal lines, and the found
// capacity as a vertical line in its shaded interval.
func latencyPicture(c *result.Capacity) string {
	var xs, ys []float64

	for _, s := range c.Steps {
		if s.Count > 0 {
			xs = append(xs, s.AchievedRate)
			ys = append(ys, max(s.P50US, 1), max(s.P99US, 1))
		}
	}

	limits := latencyLimits(c.SLO)
	ys = append(ys, limits...)
	xs = append(xs, c.MaxRateCI[1], c.MaxRate)

	if len(ys) == 0 {
		return ""
	}

	x := axis{lo: 0, hi: max(slices.Max(xs)*1.05, 1), from: svgLeft, to: svgW - svgRight}
	y := axis{lo: max(slices.Min(ys)/1.5, 1), hi: max(slices.Max(ys)*1.5, 10), log: true, from: svgH - svgBot, to: svgTop}

	var b strings.Builder

	frame(&b, "Latency against achieved throughput", x, y, "achieved throughput (ops/s)", "response time (log)", rate,
		threshold.FormatLatency)

	if c.MaxRate > 0 {
		if !c.ClientLimited && c.MaxRateCI[1] > 0 {
			l, r := x.px(c.MaxRateCI[0]), x.px(c.MaxRateCI[1])
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#2a7" fill-opacity="0.15"/>`, l, svgTop, max(r-l, 1), svgH-svgTop-svgBot)
		}

		p := x.px(c.MaxRate)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#2a7" stroke-width="2"/><text x="%.1f" y="%.1f" fill="#164">%s %.0f ops/s</text>`,
			p, svgTop, p, svgH-svgBot, p+4, svgTop+12, map[bool]string{true: "at least", false: "capacity"}[c.ClientLimited], c.MaxRate)
	}

	for _, l := range limits {
		p := y.px(l)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#c33" stroke-dasharray="6 4"/><text x="%.1f" y="%.1f" fill="#c33" text-anchor="end">SLO %s</text>`,
			svgLeft, p, svgW-svgRight, p, svgW-svgRight-4, p-4, esc(threshold.FormatLatency(l)))
	}

	for _, s := range c.Steps {
		if s.Count == 0 {
			continue
		}

		stroke := "#247"
		if !s.Passed {
			stroke = "#c33"
		}

		px := x.px(s.AchievedRate)
		tip := esc(fmt.Sprintf("%s step at %.1f ops/s offered: achieved %.1f, p50 %s, p99 %s%s", s.Kind, s.OfferedRate, s.AchievedRate,
			units.Micros(s.P50US), units.Micros(s.P99US), map[bool]string{true: "", false: " — broke: " + s.Cause}[s.Passed]))
		fmt.Fprintf(&b, `<g><title>%s</title><circle cx="%.1f" cy="%.1f" r="4" fill="none" stroke="%s" stroke-width="1.5"/><rect x="%.1f" y="%.1f" width="8" height="8" fill="%s"/></g>`,
			tip, px, y.px(max(s.P50US, 1)), stroke, px-4, y.px(max(s.P99US, 1))-4, stroke)
	}

	legend(&b, []string{"○ p50", "■ p99", "blue: met the SLO", "red: broke it"})
	b.WriteString(`</svg></figure>`)

	return b.String()
}

func legend(b *strings.Builder, items []string) {
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="#444">%s</text>`, svgLeft+6, svgH-svgBot-8, esc(strings.Join(items, "   ")))
}

// latencyLimits are the limits of the latency objectives, microseconds.
func latencyLimits(slo []string) []float64 {
	var out []float64

	for _, s := range slo {
		if op, cond, ok := strings.Cut(s, ":"); ok && !strings.ContainsAny(op, "<>") {
			s = cond
		}

		c, err := threshold.Parse(s)
		if err == nil && c.Metric.Latency() {
			out = append(out, c.Limit)
		}
	}

	return out
}

// sweepPicture is throughput against workers, with the fitted USL curve.
func sweepPicture(c *result.Capacity) string {
	var xs, ys []float64

	for _, s := range c.Sweep {
		xs = append(xs, float64(s.Workers))
		ys = append(ys, s.AchievedRate)
	}

	f := c.Fit
	fitted := f != nil && f.Supported

	if fitted && f.PeakX > 0 {
		ys = append(ys, f.PeakX)
	}

	x := axis{lo: 0, hi: max(slices.Max(xs)*1.05, 1), from: svgLeft, to: svgW - svgRight}
	y := axis{lo: 0, hi: max(slices.Max(ys)*1.15, 1), from: svgH - svgBot, to: svgTop}

	var b strings.Builder

	frame(&b, "Throughput against workers", x, y, "workers (closed loop)", "throughput (ops/s)", rate, rate)

	if fitted {
		var pts []string

		for i := 0; i <= 100; i++ {
			n := max(x.hi*float64(i)/100, 0.01)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x.px(n), y.px(f.Throughput(n))))
		}

		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#2a7" stroke-width="2"/>`, strings.Join(pts, " "))
	}

	for _, s := range c.Sweep {
		fmt.Fprintf(&b, `<g><title>%s</title><circle cx="%.1f" cy="%.1f" r="4" fill="#247"/></g>`,
			esc(fmt.Sprintf("%d workers: %.1f ops/s, p99 %s", s.Workers, s.AchievedRate, units.Micros(s.P99US))),
			x.px(float64(s.Workers)), y.px(s.AchievedRate))
	}

	items := []string{"● measured"}
	if fitted {
		items = append(items, fmt.Sprintf("— USL fit: σ %.3f, κ %.4f", f.Sigma, f.Kappa))
	} else {
		items = append(items, "no USL fit")
	}

	legend(&b, items)
	b.WriteString(`</svg></figure>`)

	return b.String()
}

func stepsTable(caption string, steps []result.CapacityStep, workers bool) string {
	var b strings.Builder

	fmt.Fprintf(&b, `<div class="table-wrap"><table><caption>%s</caption><thead><tr><th class="text">step</th><th>%s</th><th>achieved ops/s</th><th>p50</th><th>p99</th><th>p99.9</th><th>errors</th><th>client CPU</th><th class="text">verdict</th></tr></thead><tbody>`,
		esc(caption), map[bool]string{true: "workers", false: "offered ops/s"}[workers])

	for _, s := range steps {
		what := fmt.Sprintf("%.1f", s.OfferedRate)
		if workers {
			what = fmt.Sprint(s.Workers)
		}

		verdict, class := "met the SLO", "ok-text"
		if !s.Passed {
			verdict, class = s.Cause+": "+s.Why, "bad"
		}

		fmt.Fprintf(&b, `<tr><td class="text">%s</td><td>%s</td><td>%.1f</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%.0f%%</td><td class="text %s">%s</td></tr>`,
			esc(s.Kind), what, s.AchievedRate, units.Micros(s.P50US), units.Micros(s.P99US), units.Micros(s.P999US), s.Errors, 100*s.ClientCPU, class, esc(verdict))
	}

	b.WriteString(`</tbody></table></div>`)

	return b.String()
}

func fitText(f *result.USLFit) string {
	switch {
	case f == nil:
		return `<p class="sub">No Universal Scalability Law fit was made for this sweep.</p>`
	case !f.Supported:
		return fmt.Sprintf(`<p class="sub">The data do not support a Universal Scalability Law fit: %s</p>`, esc(f.Reason))
	}

	peak := "no peak (κ = 0)"

	switch {
	case f.PeakReason != "":
		peak = "peak not located: " + f.PeakReason
	case f.PeakN > 0:
		peak = fmt.Sprintf("peak %.1f ops/s at %.1f workers", f.PeakX, f.PeakN)
	}

	return fmt.Sprintf(`<p>USL fit: λ %.1f ops/s [%.1f, %.1f], σ %.3f [%.3f, %.3f], κ %.5f [%.5f, %.5f], R² %.3f; %s.</p>`,
		f.Lambda, f.LambdaCI[0], f.LambdaCI[1], f.Sigma, f.SigmaCI[0], f.SigmaCI[1], f.Kappa, f.KappaCI[0], f.KappaCI[1], f.R2, esc(peak))
}
