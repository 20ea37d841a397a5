package report

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/base/golden"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets"
)

// Test inputs: a real quickstart run (embedded FerretDB, 5 s) and the
// fixture of fullResult, which has every part the report shows.
const (
	quickstartJSON = "testdata/quickstart.json"
	fullJSON       = "testdata/full.json"
)

// TestFullFixture checks that testdata/full.json, the input of most report
// tests, is what fullResult builds, so that the fixture changes only with
// the code that describes it (and then by the explicit -update step).
func TestFullFixture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "full.json")
	if err := result.WriteFile(path, fullResult(t)); err != nil {
		t.Fatal(err)
	}

	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	golden.Check(t, fullJSON, got)
}

// readInputs reads results files. It never writes them: TestFullFixture
// keeps full.json in step with fullResult.
func readInputs(t *testing.T, paths ...string) []*result.Result {
	t.Helper()

	out := make([]*result.Result, len(paths))

	for i, p := range paths {
		r, err := result.Read(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}

		out[i] = r
	}

	return out
}

func render(t *testing.T, o Options, results []*result.Result) string {
	t.Helper()

	var buf bytes.Buffer
	if err := o.Render(&buf, results); err != nil {
		t.Fatalf("Render: %v", err)
	}

	return buf.String()
}

// inlineRe matches the inlined library and the page's own script and style.
var inlineRe = regexp.MustCompile(`(?s)(<(script|style) data-inline="([a-z]+)">).*?(</(script|style)>)`)

// normalize strips the inlined code, leaving the page's structure and data.
func normalize(page string) string {
	return inlineRe.ReplaceAllString(page, "$1[$3 $2 stripped]$4")
}

// TestReportGolden compares the page's structure with testdata/*.golden.
// After an intended change, rewrite them with
// go test ./internal/report -run 'Golden|FullFixture' -args -update (which
// fails, so that the diff is reviewed) and review git diff.
func TestReportGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		paths  []string
	}{
		{"testdata/full.html.golden", []string{fullJSON}},
		{"testdata/multi.html.golden", []string{quickstartJSON, fullJSON}},
	} {
		t.Run(filepath.Base(tc.golden), func(t *testing.T) {
			results := readInputs(t, tc.paths...)
			got := normalize(render(t, Options{Sources: tc.paths, Generated: t0.Add(time.Hour), DescribeTargetKind: describeKind}, results))

			golden.Check(t, tc.golden, []byte(got))
		})
	}
}

// describeKind is what the commands pass as Options.DescribeTargetKind: the
// launcher's registry of target kinds.
func describeKind(kind string) string {
	if k, ok := targets.LookupKind(kind); ok {
		return k.Description
	}

	return ""
}

// TestTargetKindDescribed: the page describes a target kind only as the
// caller's describer does; without one, or for a kind it does not know,
// the page shows the recorded kind and no description.
func TestTargetKindDescribed(t *testing.T) {
	results := readInputs(t, fullJSON)
	kind := results[0].Target.Kind
	row := "<dt>Target kind</dt><dd>described " + kind + "</dd>"

	page := render(t, Options{DescribeTargetKind: func(k string) string { return "described " + k }}, results)
	if !strings.Contains(page, row) {
		t.Errorf("the page lacks %q", row)
	}

	for name, o := range map[string]Options{
		"no describer":   {},
		"kind not known": {DescribeTargetKind: func(string) string { return "" }},
	} {
		if page := render(t, o, results); strings.Contains(page, "<dt>Target kind</dt>") {
			t.Errorf("%s: the page describes the target kind", name)
		}
	}
}

// External references a page must not have: it must work offline and
// never touch the network when opened.
var externalRefs = []*regexp.Regexp{
	regexp.MustCompile(`(?i)https?:`),
	regexp.MustCompile(`(?i)\b(src|href|action|poster|srcset|background|formaction)\s*=\s*["']?\s*(//|[a-z][a-z0-9+.-]*:)`),
	regexp.MustCompile(`(?i)<link\b`),
	regexp.MustCompile(`(?i)<(iframe|object|embed|img|audio|video|source)\b`),
	regexp.MustCompile(`(?i)@import`),
	regexp.MustCompile(`(?i)url\(`),
	regexp.MustCompile(`(?i)@font-face`),
}

// TestReportSelfContained checks the whole page, library included, for
// anything that would load from elsewhere.
func TestReportSelfContained(t *testing.T) {
	results := readInputs(t, quickstartJSON, fullJSON)
	page := render(t, Options{}, results)

	for _, re := range externalRefs {
		if loc := re.FindStringIndex(page); loc != nil {
			t.Errorf("page has an external reference (%s): …%s…", re, page[max(0, loc[0]-80):min(len(page), loc[1]+80)])
		}
	}

	for _, want := range []string{`<script data-inline="uplot">`, "uPlot licence", "Leon Sorokin", "Permission is hereby granted"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q (library or licence not inlined)", want)
		}
	}

	if n := strings.Count(page, "<script"); n != 4 {
		t.Errorf("page has %d script elements, want 4 (error recorder, data, library, page)", n)
	}
}

// TestReportEscapes checks that text from results files stays text, in
// the page and in the embedded chart data.
func TestReportEscapes(t *testing.T) {
	r := fullResult(t)
	r.Workload.Name = hostile
	r.Phases[2].Operations[0].Name = hostile
	r.Phases[2].Intervals[0].Operations[0].Name = hostile

	page := render(t, Options{Sources: []string{hostile}}, []*result.Result{r})

	for _, bad := range []string{"<script>alert", "<img src=x", "</script><script>"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q unescaped", bad)
		}
	}

	// The data must still parse to the original text.
	m := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no chart data in the page")
	}

	var data struct {
		Charts []struct {
			Series []struct {
				Label string `json:"label"`
			} `json:"series"`
		} `json:"charts"`
	}

	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatalf("chart data is not JSON: %v", err)
	}

	found := false

	for _, c := range data.Charts {
		for _, s := range c.Series {
			found = found || strings.HasPrefix(s.Label, hostile)
		}
	}

	if !found {
		t.Error("the hostile operation name did not survive the round trip through the chart data")
	}
}

// TestReportSections checks what the page shows for the fixture.
func TestReportSections(t *testing.T) {
	page := render(t, Options{}, []*result.Result{fullResult(t)})

	for _, want := range []string{
		`id="r1-meta"`, `id="r1-findings"`, `id="r1-explain"`, `id="r1-load"`, `id="r1-p3"`, `id="r1-p4"`, `id="r1-server"`, `id="r1-errors"`,
		`<tr class="warning"><td class="text"><span class="sev">warning</span></td>`,
		`<tr class="collscan">`, `collection scan</span>`, "explain failed: explain is not supported",
		`<span class="badge bad">aborted</span>`, "no operation succeeded for 15s",
		"warm (closed, 2.0 s, measure: false): not measured",
		"Service time", "480.50µs", "<th>clamped</th>",
		"Latency is response time", "15 (0.7%)", "the server did not keep up",
		`id="r1-p3-latency"`, `id="r1-p3-throughput"`, `id="r1-p3-errors"`, `id="r1-p4-blocks-1"`, `id="r1-p4-blocks-2"`, `id="r1-p4-bg1"`,
		"Growth blocks", "3*", "cut short by the end of the run",
		"Background job touch", "2.20/s", "Background job sweep", "fixed rate of 0.50/s",
		"collStats: not supported", `id="r1-server-opcounters"`, `id="r1-server-cache"`, `id="r1-server-tickets"`, `id="r1-server-db"`,
		"fixture.items", "Phases: load:items: 2.0–4.0 s; run: 6.0–8.0 s; grow: 10.0–10.0 s.",
		`<td class="text bad">timeout</td><td>4</td>`, `<td class="text bad">duplicate_key</td>`,
		"Workload file as run (workloads/fixture.yaml)", "Parsed workload, defaults applied",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}

	if strings.Contains(page, `id="overview"`) {
		t.Error("a single run has the overview of several runs")
	}

	if strings.Contains(page, `id="matrix"`) {
		t.Error("the variants/targets matrix is shown though results have none")
	}
}

// TestReportPartial checks that results with only some parts give a page
// without the others, and that odd values do not break it.
func TestReportPartial(t *testing.T) {
	empty := &result.Result{SchemaVersion: 1, Workload: result.Workload{Name: "empty"}, Status: result.StatusInterrupted}

	noIntervals := fullResult(t)
	noIntervals.Server = &result.Server{Supported: map[string]bool{"serverStatus": false}}
	noIntervals.Explain, noIntervals.Findings = nil, nil

	for i := range noIntervals.Phases {
		noIntervals.Phases[i].Intervals = nil
		noIntervals.Phases[i].Blocks = nil
		noIntervals.Phases[i].Background = nil
	}

	page := render(t, Options{}, []*result.Result{empty, noIntervals})

	for _, absent := range []string{`id="r1-findings"`, `id="r1-explain"`, `id="r1-load"`, `id="r1-server"`, `id="r1-p`, `id="r2-p3-latency"`, `id="r2-server-`, "Growth blocks"} {
		if strings.Contains(page, absent) {
			t.Errorf("page has %q for a result without it", absent)
		}
	}

	for _, want := range []string{`id="overview"`, `<span class="badge warn">interrupted</span>`, "No operation failed.", `id="r2-server"`, "serverStatus: not supported"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}

	if !strings.Contains(page, `{"charts":[]}`) {
		t.Error("chart data is not an empty list")
	}
}

func TestReportOptionsErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := (Options{}).Render(&buf, nil); err == nil {
		t.Error("no error for no results")
	}

	if err := (Options{Sources: []string{"a", "b"}}).Render(&buf, []*result.Result{fullResult(t)}); err == nil {
		t.Error("no error for sources that do not match the results")
	}

	if err := (Options{}).Render(&buf, []*result.Result{nil}); err == nil {
		t.Error("no error for a nil result")
	}
}

// TestReportWriteFile checks the atomic write.
func TestReportWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "report.html")

	if err := (Options{}).WriteFile(path, []*result.Result{fullResult(t)}); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	if !bytes.HasPrefix(data, []byte("<!DOCTYPE html>")) {
		t.Errorf("report starts with %q", data[:min(40, len(data))])
	}

	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}

	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the report (temporary file left behind?)", len(entries))
	}

	// A directory in the way fails without leaving anything behind.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
		t.Fatal(err)
	}

	if err := (Options{}).WriteFile(blocked, []*result.Result{fullResult(t)}); err == nil {
		t.Error("no error writing over a directory")
	}

	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d entries in the directory after a failed write, want 2", len(entries))
	}
}

// TestReportSpecText checks the parsed workload's display: the writer's
// key order (a struct in-process) and text that is not HTML-escaped twice.
func TestReportSpecText(t *testing.T) {
	spec := struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Database    string `json:"database"`
	}{"w", "reads & writes <fast>", "db"}

	desc, text := specText(&spec)
	if desc != "reads & writes <fast>" {
		t.Errorf("description = %q", desc)
	}

	want := "{\n  \"name\": \"w\",\n  \"description\": \"reads & writes <fast>\",\n  \"database\": \"db\"\n}"
	if text != want {
		t.Errorf("spec text =\n%s\nwant\n%s", text, want)
	}

	if desc, text := specText(nil); desc != "" || text != "" {
		t.Errorf("nil spec gives %q, %q", desc, text)
	}

	if _, text := specText(func() {}); text != "" {
		t.Errorf("unencodable spec gives %q", text)
	}
}

// TestReportFindingsOnce renders the fixture, whose findings are a
// collection scan, a schedule not kept and failed operations, and counts
// each finding's words in the page: each appears once, in the table of
// groups (the page used to list every finding again below that table).
func TestReportFindingsOnce(t *testing.T) {
	r := fullResult(t)
	page := render(t, Options{}, []*result.Result{r})

	if len(r.Findings) == 0 {
		t.Fatal("the fixture has no findings")
	}

	for _, g := range analysis.GroupFindings(r) {
		if n := strings.Count(page, template.HTMLEscapeString(g.Cause)); n != 1 {
			t.Errorf("finding %q appears %d times in the page, want once", g.Cause, n)
		}
	}

	if n := strings.Count(page, `<section class="card" id="r1-findings">`); n != 1 {
		t.Errorf("%d findings sections, want 1", n)
	}
}
