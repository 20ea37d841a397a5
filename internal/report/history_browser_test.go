//go:build e2e

package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/analysis/history"
)

// TestHistoryPageInBrowser opens a history page from disk in a headless
// Chromium without network access, as TestReportInBrowser does the run
// report: the browser must parse every chart as SVG (the DOM it builds
// holds each chart's elements), keep the hostile label as text, and the
// screenshot (history.png, beside history.html in the artifact directory)
// must not be blank.
func TestHistoryPageInBrowser(t *testing.T) {
	browser := findBrowser(t)

	dir := artifactDir(t)
	page := filepath.Join(dir, "history.html")

	series := []history.Series{steppedSeries(), flatSeries()}
	if err := (HistoryOptions{}).WriteFile(page, series); err != nil {
		t.Fatal(err)
	}

	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}

	url := "file://" + filepath.ToSlash(abs)

	dom := chromium(t, browser, "--dump-dom", url)

	// The serialised DOM: six charts, each with its line per metric and
	// a circle per run with a value (4 metrics × 20 runs in the stepped
	// series, 8 × 20 in the flat one), all inside svg elements.
	if n := strings.Count(dom, `<svg class="history-chart"`); n != 6 {
		t.Errorf("the browser built %d charts, want 6", n)
	}

	if n := strings.Count(dom, `<circle class="point"`); n != 4*20+8*20 {
		t.Errorf("the browser built %d points, want %d", n, 4*20+8*20)
	}

	if n := strings.Count(dom, `<line class="mark"`); n != 4 {
		t.Errorf("the browser built %d change point marks, want 4", n)
	}

	// A label that looks like a script is text in the DOM: the browser
	// serialises it escaped, and there is no script element at all.
	if strings.Contains(dom, "<script") || !strings.Contains(dom, "&lt;script&gt;alert(") {
		t.Errorf("the hostile label is not text in the browser's DOM")
	}

	shot := filepath.Join(dir, "history.png")
	screenshot(t, browser, url, shot, "1200,1600")

	t.Logf("history page and screenshot in %s", dir)
}
