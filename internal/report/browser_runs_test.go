package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/cli"
	"github.com/mongobench/mongobench/internal/report"
	"github.com/mongobench/mongobench/internal/wiretest"
)

// syncBuffer is an io.Writer safe for the command's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()

	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()

	return b.buf.String()
}

// mongobench runs the command in-process and fails the test unless it
// exits 0 within two minutes.
func mongobench(t *testing.T, args ...string) {
	t.Helper()

	var stdout, stderr syncBuffer

	st := &cli.State{
		Args: args, Stdout: &stdout, Stderr: &stderr,
		Getenv:      func(k string) string { return map[string]string{"CI": "1"}[k] },
		Signals:     make(chan os.Signal),
		StopSignals: func() {},
		Exit:        func(code int) { t.Errorf("forced exit %d", code) },
		Now:         time.Now,
	}

	done := make(chan int, 1)
	go func() { done <- cli.Main(st) }()

	select {
	case code := <-done:
		if code != cli.ExitOK {
			t.Fatalf("mongobench %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("mongobench %s did not finish in 2 minutes", strings.Join(args, " "))
	}
}

// nullServer starts a wiretest server answering every request after delay.
func nullServer(t *testing.T, delay time.Duration) *wiretest.Server {
	t.Helper()

	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(delay)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	return srv
}

var (
	renderedRe = regexp.MustCompile(`<body[^>]*\bdata-charts-rendered="(\d+)"`)
	totalRe    = regexp.MustCompile(`<body[^>]*\bdata-charts-total="(\d+)"`)
	// A chart's container and the first canvas inside it, with its size.
	chartRe = regexp.MustCompile(`(?s)<div class="chart" id="([a-z0-9-]+)">.*?<canvas[^>]*\bwidth="(\d+)"[^>]*\bheight="(\d+)"`)
)

// checkInBrowser opens the report at page in a headless Chromium without
// network, checks that no script failed, that every chart was drawn and
// that each chart whose id starts with one of prefixes has a canvas of
// non-zero size; it saves a 1280-pixel-wide screenshot as shot.
func checkInBrowser(t *testing.T, page, shot string, prefixes ...string) {
	t.Helper()

	browser := report.FindBrowser(t)

	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}

	url := "file://" + filepath.ToSlash(abs)
	dom := report.Chromium(t, browser, "--dump-dom", url)

	if strings.Contains(dom, "data-js-errors=") || strings.Contains(dom, "<li>") && strings.Contains(dom, `id="js-errors" class="callout bad">`) {
		t.Errorf("the page recorded script errors")
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

	sized := map[string]bool{}

	for _, m := range chartRe.FindAllStringSubmatch(dom, -1) {
		w, _ := strconv.Atoi(m[2])
		h, _ := strconv.Atoi(m[3])
		sized[m[1]] = w > 0 && h > 0
	}

	for _, prefix := range prefixes {
		n := 0

		for id, ok := range sized {
			if strings.HasPrefix(id, prefix) {
				n++

				if !ok {
					t.Errorf("chart %s has a canvas of zero size", id)
				}
			}
		}

		if n == 0 {
			t.Errorf("no chart %s* with a canvas in the page", prefix)
		}
	}

	report.Chromium(t, browser, "--hide-scrollbars", "--window-size=1280,2400", "--screenshot="+shot, url)

	info, err := os.Stat(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}

	if info.Size() < 20<<10 {
		t.Errorf("screenshot is only %d bytes, a blank page?", info.Size())
	}
}

// TestMatrixReportInBrowser runs a workload on two null servers answering
// in 1 ms and 5 ms (a matrix of two targets, default rounds), makes the
// report of the results and checks in Chromium that its bar charts with
// confidence whiskers, percentile spectra and latency-over-time overlays
// are drawn (report-matrix.png and .html in the artifact directory).
func TestMatrixReportInBrowser(t *testing.T) {
	report.FindBrowser(t)

	dir := report.ArtifactDir(t)
	fast, slow := nullServer(t, time.Millisecond), nullServer(t, 5*time.Millisecond)

	out := filepath.Join(t.TempDir(), "matrix.json")
	mongobench(t, "run", "testdata/null_pair.yaml", "--out", out, "--quiet", "--no-explain",
		"--server-stats-interval", "0", "--duration", "600ms",
		"--target", "uri:name=fast-1ms,"+fast.URI(), "--target", "uri:name=slow-5ms,"+slow.URI())

	page := filepath.Join(dir, "report-matrix.html")
	mongobench(t, "report", out, "--out", page)

	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}

	for _, want := range []string{"slower, 95% CI", "Latency distribution", "Latency over time"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("the report lacks %q", want)
		}
	}

	checkInBrowser(t, page, filepath.Join(dir, "report-matrix.png"), "matrix-bars-", "matrix-spectrum-", "matrix-overtime-")
}

// TestCompareReportInBrowser makes the report of two real short runs, on
// null servers answering in 1 ms and 5 ms, and checks in Chromium that the
// files' comparison charts are drawn (report-compare.png and .html in the
// artifact directory).
func TestCompareReportInBrowser(t *testing.T) {
	report.FindBrowser(t)

	dir := report.ArtifactDir(t)
	tmp := t.TempDir()

	var files []string

	for _, run := range []struct {
		name  string
		delay time.Duration
	}{{"fast-1ms", time.Millisecond}, {"slow-5ms", 5 * time.Millisecond}} {
		srv := nullServer(t, run.delay)
		out := filepath.Join(tmp, run.name+".json")
		mongobench(t, "run", "testdata/null_pair.yaml", "--uri", srv.URI(), "--out", out, "--quiet",
			"--no-explain", "--server-stats-interval", "0", "--duration", "2s")

		files = append(files, out)
	}

	page := filepath.Join(dir, "report-compare.html")
	mongobench(t, append([]string{"report"}, append(files, "--out", page)...)...)

	checkInBrowser(t, page, filepath.Join(dir, "report-compare.png"), "files-bars-", "files-spectrum-", "files-overtime-")
}
