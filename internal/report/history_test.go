package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis/history"
)

// hostileLabel is a run label that must stay text wherever it is shown.
const hostileLabel = `<script>alert("x")</script>`

// steppedSeries is a series of 20 runs whose read p50, p95 and p99 step up
// by half at run 13 (index 12), throughput falling by a third, with the
// change points a detector would report there; the runs of the step are
// labelled hostileLabel.
func steppedSeries() history.Series {
	start := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)

	s := history.Series{Key: history.Key{Workload: "ycsb-c", Spec: "77fd6636", Target: "uri", Client: "go engine"}}

	for i := range 20 {
		label := "v1"
		if i >= 12 {
			label = hostileLabel
		}

		s.Runs = append(s.Runs, history.Run{File: fmt.Sprintf("results/night-%02d.json", i+1), Label: label, StartedAt: start.Add(time.Duration(i) * 24 * time.Hour)})
	}

	level := func(before, after float64) ([]history.Value, []history.Value) {
		vals, noise := make([]history.Value, 20), make([]history.Value, 20)

		for i := range vals {
			v := before
			if i >= 12 {
				v = after
			}

			// ±1% around the level, so that each level has a spread.
			vals[i] = history.Value(v * (1 + 0.01*float64(i%3-1)))
			noise[i] = history.Value(0.03)
		}

		noise[0] = history.Value(math.NaN()) // a run too short to have its own dispersion

		return vals, noise
	}

	add := func(metric string, before, after float64, worse bool) {
		vals, noise := level(before, after)
		s.Metrics = append(s.Metrics, history.Metric{
			Operation: "read", Metric: metric, Values: vals, Noise: noise,
			Changes: []history.Change{{
				Run: 12, File: s.Runs[12].File, Label: s.Runs[12].Label, Before: before, After: after,
				Ratio: after / before, RatioLo: after / before * 0.98, RatioHi: after / before * 1.02, P: 0.005, Worse: worse,
			}},
		})
	}

	add("throughput", 600, 400, true)
	add("p50", 10000, 15000, true)
	add("p95", 12000, 18000, true)
	add("p99", 14000, 21000, true)

	return s
}

// flatSeries is a series of 20 unlabelled runs without a change point.
func flatSeries() history.Series {
	s := history.Series{Key: history.Key{Workload: "ycsb-a", Spec: "0f87a727", Target: "uri", Client: "go engine"}}
	start := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)

	for i := range 20 {
		s.Runs = append(s.Runs, history.Run{File: fmt.Sprintf("results/a-%02d.json", i+1), StartedAt: start.Add(time.Duration(i) * time.Hour)})
	}

	for _, op := range []string{"read", "update"} {
		for _, m := range []struct {
			name string
			v    float64
		}{{"throughput", 900}, {"p50", 2000}, {"p95", 2500}, {"p99", 3000}, {"error_rate", 0}} {
			vals := make([]history.Value, 20)
			for i := range vals {
				vals[i] = history.Value(m.v)
			}

			// The newest run 10% above the others.
			vals[19] = history.Value(m.v * 1.1)

			s.Metrics = append(s.Metrics, history.Metric{Operation: op, Metric: m.name, Values: vals, Noise: make([]history.Value, 20)})
		}
	}

	return s
}

// checkWellFormed parses page as HTML with the void elements closed and
// fails on a tag closed by another, or left open.
func checkWellFormed(t *testing.T, page string) {
	t.Helper()

	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict = false
	d.AutoClose = []string{"meta", "link", "br", "hr", "img", "input"}
	d.Entity = xml.HTMLEntity

	var open []string

	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}

		if err != nil {
			t.Fatalf("the page is not well formed: %v", err)
		}

		switch tok := tok.(type) {
		case xml.StartElement:
			open = append(open, tok.Name.Local)
		case xml.EndElement:
			if len(open) == 0 || open[len(open)-1] != tok.Name.Local {
				t.Fatalf("</%s> closes %v", tok.Name.Local, open)
			}

			open = open[:len(open)-1]
		}
	}

	if len(open) != 0 {
		t.Fatalf("elements left open: %v", open)
	}
}

func TestHistoryPage(t *testing.T) {
	step, flat := steppedSeries(), flatSeries()

	var buf bytes.Buffer
	if err := (HistoryOptions{}).Render(&buf, []history.Series{step, flat}); err != nil {
		t.Fatal(err)
	}

	page := buf.String()

	checkWellFormed(t, page)

	// The page has no script at all: a label that looks like one is text.
	if strings.Contains(page, "<script") {
		t.Errorf("the page holds a <script> element")
	}

	if esc := template.HTMLEscapeString(hostileLabel); !strings.Contains(page, esc) {
		t.Errorf("the hostileLabel label is not shown escaped (%s)", esc)
	}

	// Each series has its section, its title and its charts: read
	// latency and throughput for the stepped series, and both for each
	// of the flat series' two operations.
	for _, s := range []history.Series{step, flat} {
		if !strings.Contains(page, "<h2>"+template.HTMLEscapeString(s.Key.String())+"</h2>") {
			t.Errorf("no section titled %q", s.Key.String())
		}
	}

	if n, want := strings.Count(page, `<svg class="history-chart"`), 2+2*2; n != want {
		t.Errorf("%d charts, want %d", n, want)
	}

	// The change points drawn: p50, p95 and p99 on the latency chart,
	// throughput on its own, each with its ratio, and listed in the
	// change-point table with the run's label.
	if n := strings.Count(page, `<line class="mark"`); n != 4 {
		t.Errorf("%d change point marks, want 4 (p50, p95, p99, throughput)", n)
	}

	for _, label := range []string{">p50 ×1.50<", ">p99 ×1.50<", ">×0.67<"} {
		if !strings.Contains(page, label) {
			t.Errorf("no change point label %q", label)
		}
	}

	if !strings.Contains(page, "13: results/night-13.json ("+template.HTMLEscapeString(hostileLabel)+")") {
		t.Errorf("the change-point table does not name run 13 with its label")
	}

	// One band and one level line per segment: two segments for each of
	// the stepped series' four metrics, one for each of the flat series'
	// eight drawn (two operations, four metrics).
	if n, want := strings.Count(page, `<rect class="band"`), 4*2+2*4; n != want {
		t.Errorf("%d shaded bands, want %d", n, want)
	}

	// Whiskers where a run has its own dispersion: the stepped series'
	// 19 runs with one (the first has none), 4 metrics.
	if n, want := strings.Count(page, `<line class="whisker"`), 19*4+2*4*20; n != want {
		t.Errorf("%d whiskers, want %d", n, want)
	}

	// The x axis names the runs: the label where it changes, dates for
	// runs without one.
	if !strings.Contains(page, ">13 · "+template.HTMLEscapeString(truncate(hostileLabel, 12))+"<") || !strings.Contains(page, ">1 · v1<") || !strings.Contains(page, ">2<") {
		t.Errorf("the x axis does not name the runs by number and label")
	}

	if !strings.Contains(page, ">1 · 11-26 03:00<") {
		t.Errorf("the x axis does not name an unlabelled run by its start")
	}
}

func TestHistoryPageEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := (HistoryOptions{}).Render(&buf, nil); err != nil {
		t.Fatal(err)
	}

	checkWellFormed(t, buf.String())

	if !strings.Contains(buf.String(), "No runs to make a history of.") {
		t.Errorf("an empty history does not say so")
	}
}

func TestHistoryTables(t *testing.T) {
	step, flat := steppedSeries(), flatSeries()

	var buf bytes.Buffer

	WriteHistoryTables(&buf, []history.Series{step, flat}, 0.05, 8)

	out := buf.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")

	row := func(fields ...string) {
		t.Helper()

		for _, l := range lines {
			if strings.Join(strings.Fields(l), " ") == strings.Join(fields, " ") {
				return
			}
		}

		t.Errorf("no row %q in\n%s", strings.Join(fields, " "), out)
	}

	// The stepped series: the level since run 13 against the one before,
	// with the change's ratio and interval and the runs behind each.
	row("read", "p50", "15.00ms", "8", "10.00ms", "12", "1.50×", "1.47×–1.53×", "run", "13", "("+hostileLabel+"),", "p", "=", "0.005,", "worse")
	row("read", "throughput", "400.0/s", "8", "600.0/s", "12", "0.67×", "0.65×–0.68×", "run", "13", "("+hostileLabel+"),", "p", "=", "0.005,", "worse")

	// The flat series: the newest run against the median of the others,
	// no interval; its error rate, without a change point, is left out.
	row("update", "p99", "3.30ms", "1", "3.00ms", "19", "1.10×", "-", "no", "change", "point")

	if strings.Contains(out, "error_rate") {
		t.Errorf("a metric without a change point beyond throughput and p50/p95/p99 is shown:\n%s", out)
	}

	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "Changed recently (within the newest 8 runs): ycsb-c read throughput 0.67× worse from run 13") ||
		strings.Contains(last, "ycsb-a") {
		t.Errorf("last line %q; want the stepped series' changes, not the flat one", last)
	}

	// Eight runs after the change: with --recent 7 it is no longer recent.
	buf.Reset()
	WriteHistoryTables(&buf, []history.Series{step, flat}, 0.05, 7)

	if lines := strings.Split(strings.TrimSpace(buf.String()), "\n"); lines[len(lines)-1] != "Changed recently: nothing (no change point within the newest 7 runs of any series)." {
		t.Errorf("last line %q with --recent 7", lines[len(lines)-1])
	}
}

// TestHistoryPageTooFew: a series shorter than twice --min-size is said
// to be too short for a change point, and drawn all the same.
func TestHistoryPageTooFew(t *testing.T) {
	s := steppedSeries()
	s.Runs = s.Runs[:5]

	for i := range s.Metrics {
		s.Metrics[i].Values, s.Metrics[i].Noise, s.Metrics[i].Changes = s.Metrics[i].Values[:5], s.Metrics[i].Noise[:5], nil
	}

	for _, c := range []struct {
		minSize int
		tooFew  bool
	}{{0, true}, {3, true}, {2, false}} {
		var buf bytes.Buffer
		if err := (HistoryOptions{MinSize: c.minSize}).Render(&buf, []history.Series{s}); err != nil {
			t.Fatal(err)
		}

		page := buf.String()
		checkWellFormed(t, page)

		if got := strings.Contains(page, "Too few runs to find a change point (5;"); got != c.tooFew {
			t.Errorf("5 runs, min size %d: says too few %v, want %v", c.minSize, got, c.tooFew)
		}

		if n := strings.Count(page, `<svg class="history-chart"`); n != 2 {
			t.Errorf("5 runs, min size %d: %d charts, want 2", c.minSize, n)
		}
	}
}
