//go:build e2e

package report_test

import (
	"bytes"
	"context"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/cli"
	"github.com/mongobench/mongobench/internal/report"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
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
	errorsBoxRe = regexp.MustCompile(`(?s)<div id="js-errors"[^>]*>.*?</div>`)
	renderedRe  = regexp.MustCompile(`<body[^>]*\bdata-charts-rendered="(\d+)"`)
	totalRe     = regexp.MustCompile(`<body[^>]*\bdata-charts-total="(\d+)"`)
	// A chart's container and the first canvas inside it, with its size.
	chartRe = regexp.MustCompile(`(?s)<div class="chart" id="([a-z0-9-]+)">.*?<canvas[^>]*\bwidth="(\d+)"[^>]*\bheight="(\d+)"`)
)

// checkInBrowser opens the report at page in a headless Chromium without
// network, checks that no script failed, that every chart was drawn and
// that each chart whose id starts with one of prefixes has a canvas of
// non-zero size; it saves a screenshot 1280 pixels wide and height high as
// shot, and returns the page as the browser built it.
func checkInBrowser(t *testing.T, page, shot string, height int, prefixes ...string) string {
	t.Helper()

	browser := report.FindBrowser(t)

	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}

	url := "file://" + filepath.ToSlash(abs)
	dom := report.Chromium(t, browser, "--dump-dom", url)

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

	report.Screenshot(t, browser, url, shot, "1280,"+strconv.Itoa(height))

	return dom
}

// checkBlocks checks that the page as the browser built it shows the
// comparison blocks of res from the analysis model (analysis.Blocks, which
// the terminal prints): every heading, answer, line and verdict.
func checkBlocks(t *testing.T, dom string, res *result.Result) {
	t.Helper()

	blocks := analysis.Blocks(res)
	if len(blocks) == 0 {
		t.Fatal("the results have no comparison block")
	}

	for _, b := range blocks {
		want := []string{html.EscapeString("Comparison: " + b.Heading())}

		for _, g := range b.Groups {
			if g.Answer != "" {
				want = append(want, "<li>"+html.EscapeString(g.Answer)+"</li>")
			}

			for _, l := range g.Lines {
				want = append(want, html.EscapeString(l.Name), ">"+html.EscapeString(l.Verdict)+"</td>")
			}
		}

		for _, w := range want {
			if !strings.Contains(dom, w) {
				t.Errorf("the page lacks %q of the comparison block", w)
			}
		}
	}
}

// TestGrowthReportInBrowser makes the report of a real growth run
// (internal/analysis/testdata/growth.json: three growth blocks against the
// embedded FerretDB) and checks in Chromium that the growth charts are
// drawn and the growth comparison block is shown, answers first
// (report-growth.png and .html in the artifact directory).
func TestGrowthReportInBrowser(t *testing.T) {
	report.FindBrowser(t)

	dir := report.ArtifactDir(t)
	in := "../analysis/testdata/growth.json"

	res, err := result.Read(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}

	page := filepath.Join(dir, "report-growth.html")
	mongobench(t, "report", in, "--out", page)

	dom := checkInBrowser(t, page, filepath.Join(dir, "report-growth.png"), 2400, "r1-p1-blocks-")
	checkBlocks(t, dom, res)

	if !strings.Contains(dom, `href="#r1-comparison"`) {
		t.Error("the run's navigation has no link to its comparison")
	}
}

// TestMatrixReportInBrowser runs the cleanup study (four variants, six
// rounds) on the embedded default with 300 ms trials, makes the report of
// its results and checks in Chromium that the bar charts with confidence
// whiskers, percentile spectra and latency-over-time overlays are drawn
// (report-matrix.png and .html in the artifact directory).
func TestMatrixReportInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the cleanup study on an embedded FerretDB")
	}

	report.FindBrowser(t)

	dir := report.ArtifactDir(t)

	out := filepath.Join(t.TempDir(), "cleanup.json")
	mongobench(t, "run", "../../workloads/studies/cleanup.yaml", "--out", out, "--quiet", "--no-explain",
		"--server-stats-interval", "0", "--duration", "1s")

	page := filepath.Join(dir, "report-matrix.html")
	mongobench(t, "report", out, "--out", page)

	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}

	for _, want := range []string{"95% CI", "Latency distribution", "Latency over time"} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("the report lacks %q", want)
		}
	}

	dom := checkInBrowser(t, page, filepath.Join(dir, "report-matrix.png"), 2200, "matrix-bars-", "matrix-spectrum-", "matrix-overtime-")

	res, err := result.Read(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}

	checkBlocks(t, dom, res)

	for _, tb := range analysis.MatrixTables(res.Matrix) {
		if !strings.Contains(dom, "<caption>"+html.EscapeString(tb.Title)+"</caption>") {
			t.Errorf("the page lacks the table %q", tb.Title)
		}
	}
}

// TestWriteVerificationReport runs the mongod write-durability study's
// phases (testdata/verification.yaml) on the embedded default at 2 batches
// of 500 and one round: every variant's
// inserts must be acknowledged and found (1,000 documents each, none
// lost), and the report must show the table.
func TestWriteVerificationReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the write-durability study on an embedded FerretDB")
	}

	spec := "testdata/verification.yaml"
	tmp := t.TempDir()

	out := filepath.Join(tmp, "wd.json")
	mongobench(t, "run", spec, "--out", out, "--quiet", "--no-explain", "--server-stats-interval", "0")

	res, err := result.Read(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}

	vs := res.Matrix.Verifications()
	if len(vs) != 3 {
		t.Fatalf("%d verification rows, want one per variant (3): %+v", len(vs), vs)
	}

	for _, v := range vs {
		if v.Collection != "locations" || v.Trials != 1 || v.Acknowledged != 1000 || v.Present != 1000 || v.Lost != 0 {
			t.Errorf("%+v, want 1,000 acknowledged and present in locations", v)
		}
	}

	page := filepath.Join(tmp, "report.html")
	mongobench(t, "report", out, "--out", page)

	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}

	if !bytes.Contains(html, []byte(`<td class="text">majority</td><td class="text mono">locations</td><td>1</td><td>1,000</td><td>1,000</td><td class="ok-text">0</td>`)) {
		t.Errorf("the report lacks the majority variant's verification row")
	}
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

	dom := checkInBrowser(t, page, filepath.Join(dir, "report-compare.png"), 2000, "files-bars-", "files-spectrum-", "files-overtime-")

	// The page's tables and block are compare's (analysis.CompareTable and
	// FilesBlock over the same files): each verdict appears as compare
	// prints it.
	var cfs []*analysis.File

	for i, f := range files {
		r, err := result.Read(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}

		cfs = append(cfs, &analysis.File{Label: analysis.Label(i), Path: f, Res: r, Phase: r.MainPhase()})
	}

	for _, op := range analysis.CompareOperations(cfs, analysis.Judging{}) {
		for _, row := range analysis.CompareTable(cfs, op).Rows {
			if c := row[len(row)-1]; c.IsVerdict && !strings.Contains(dom, ">"+html.EscapeString(c.Text)+"</td>") {
				t.Errorf("the page lacks compare's verdict %q (%s)", c.Text, op.Name)
			}
		}
	}

	if !strings.Contains(dom, "Comparison: ") {
		t.Error("the page lacks the files' comparison block")
	}
}
