package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// browserNames are the commands tried for a headless Chromium.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// findBrowser returns a Chromium to test with. Without one the test is
// skipped, except on CI (env CI set), which installs it: there the test
// fails rather than pass without having looked.
func findBrowser(t *testing.T) string {
	t.Helper()

	for _, name := range browserNames {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}

	if os.Getenv("CI") != "" {
		t.Fatalf("no Chromium found (tried %s); CI must install it (apt-get install -y chromium)", strings.Join(browserNames, ", "))
	}

	t.Skipf("no Chromium found (tried %s); install it to run this test (apt-get install -y chromium)", strings.Join(browserNames, ", "))

	return ""
}

// artifactDir is where the test leaves files for people to look at:
// $MONGOBENCH_ARTIFACTS when set, else a temporary directory.
func artifactDir(t *testing.T) string {
	t.Helper()

	if dir := os.Getenv("MONGOBENCH_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}

		return dir
	}

	return t.TempDir()
}

// screenshot has the headless Chromium draw url into shot in a window of
// size ("1280,2000") and fails the test when there is no picture or one
// too small to show anything (a blank page compresses to a few kilobytes).
func screenshot(t *testing.T, browser, url, shot, size string) {
	t.Helper()

	chromium(t, browser, "--hide-scrollbars", "--window-size="+size, "--screenshot="+shot, url)

	info, err := os.Stat(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}

	if info.Size() < 20<<10 {
		t.Errorf("screenshot is only %d bytes, a blank page?", info.Size())
	}
}

// chromium runs a headless Chromium that cannot reach the network: every
// request goes to a proxy on the discard port, loopback included, and the
// background services that would call home are off. It returns stdout.
func chromium(t *testing.T, browser string, args ...string) string {
	t.Helper()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(),
		"--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
		"--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=5000",
	}

	cmd := exec.CommandContext(ctx, browser, append(base, args...)...)

	var stderr strings.Builder

	cmd.Stderr = &stderr

	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\nstderr:\n%s", browser, strings.Join(args, " "), err, stderr.String())
	}

	return string(out)
}

var (
	renderedRe  = regexp.MustCompile(`<body[^>]*\bdata-charts-rendered="(\d+)"`)
	totalRe     = regexp.MustCompile(`<body[^>]*\bdata-charts-total="(\d+)"`)
	errorsBoxRe = regexp.MustCompile(`(?s)<div id="js-errors"[^>]*>.*?</div>`)
)

// TestReportInBrowser opens a report from disk in a headless Chromium
// without network access and checks that every chart was drawn and no
// script failed; it also leaves a screenshot (report.png) and the report
// (report.html) in the artifact directory.
func TestReportInBrowser(t *testing.T) {
	browser := findBrowser(t)

	dir := artifactDir(t)
	page := filepath.Join(dir, "report.html")

	results := readInputs(t, quickstartJSON, fullJSON)
	if err := (Options{Sources: []string{quickstartJSON, fullJSON}}).WriteFile(page, results); err != nil {
		t.Fatal(err)
	}

	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}

	url := "file://" + filepath.ToSlash(abs)

	dom := chromium(t, browser, "--dump-dom", url)

	box := errorsBoxRe.FindString(dom)
	if box == "" || strings.Contains(box, "<li>") || !strings.Contains(box, "hidden") || strings.Contains(dom, "data-js-errors=") {
		t.Errorf("the page recorded script errors: %s", box)
	}

	m := renderedRe.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the page's script did not finish (no data-charts-rendered on <body>)")
	}

	rendered, _ := strconv.Atoi(m[1])

	total := -1
	if m := totalRe.FindStringSubmatch(dom); m != nil {
		total, _ = strconv.Atoi(m[1])
	}

	if rendered == 0 || rendered != total {
		t.Errorf("%d of %d charts rendered", rendered, total)
	}

	p, err := Options{}.newPage(results)
	if err != nil {
		t.Fatal(err)
	}

	if want := len(p.Data.Charts); total != want {
		t.Errorf("the page says %d charts, the report made %d", total, want)
	}

	// Bar charts are drawn on a canvas of their own, the others by uPlot.
	bars := 0

	for _, c := range p.Data.Charts {
		if c.Kind == "bars" {
			bars++
		}
	}

	if n := strings.Count(dom, `class="uplot`); n != rendered-bars {
		t.Errorf("%d uPlot elements for %d charts, %d of them bar charts", n, rendered, bars)
	}

	if n := strings.Count(dom, "<canvas"); n < rendered {
		t.Errorf("%d canvases for %d charts", n, rendered)
	}

	shot := filepath.Join(dir, "report.png")
	screenshot(t, browser, url, shot, "1280,2000")

	t.Logf("report and screenshot in %s", dir)
}
