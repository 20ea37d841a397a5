package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

// TestClientSection checks the section of a run measured through an
// external stack: stack and versions, and the profile's top frames in two
// tables ordered by self and by cumulative time, escaped.
func TestClientSection(t *testing.T) {
	t.Parallel()

	r := readInputs(t, quickstartJSON)[0]
	r.Client = &result.Client{
		Stack:    "node-mongoose",
		Versions: map[string]string{"node": "20.20.2", "mongoose": "8.24.10"},
		Starved:  3,
		Profile: &result.ClientProfile{Prefix: "/tmp/prof", Frames: []result.ProfileFrame{
			{Function: "hydrate", File: "document.js", Line: 10, SelfMS: 5, TotalMS: 50, Calls: 7},
			{Function: "<script>cast</script>", File: "cast.js", Line: 3, SelfMS: 40, TotalMS: 41},
			{Function: "", File: "x.js", SelfMS: 1, TotalMS: 90},
		}},
	}

	html := render(t, Options{}, []*result.Result{r})

	if strings.Contains(html, "<script>cast</script>") {
		t.Error("a frame's name is not escaped")
	}

	for _, want := range []string{
		`<h2>Client</h2>`, `<dd>mongoose 8.24.10, node 20.20.2</dd>`, `<dd>3</dd>`, `href="#r1-client"`,
		`<dd class="mono">/tmp/prof</dd>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report has no %s", want)
		}
	}

	// Rows of each table, in order: by self cast (40), hydrate (5),
	// anonymous (1); by cumulative anonymous (90), hydrate (50), cast (41).
	sections := strings.Split(html, "<h3>Top frames by ")
	if len(sections) != 3 {
		t.Fatalf("want two tables of top frames, found %d", len(sections)-1)
	}

	fn := regexp.MustCompile(`<tr><td class="text mono">([^<]*)</td>`)
	for i, want := range [][]string{
		{"&lt;script&gt;cast&lt;/script&gt;", "hydrate", "(anonymous)"},
		{"(anonymous)", "hydrate", "&lt;script&gt;cast&lt;/script&gt;"},
	} {
		table, _, _ := strings.Cut(sections[i+1], "</table>")

		var got []string
		for _, m := range fn.FindAllStringSubmatch(table, -1) {
			got = append(got, m[1])
		}

		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("table %d: frames %v, want %v", i+1, got, want)
		}
	}
}

// TestNoClientSection checks that a Go engine run has no client section.
func TestNoClientSection(t *testing.T) {
	t.Parallel()

	html := render(t, Options{}, readInputs(t, quickstartJSON))
	if strings.Contains(html, "<h2>Client</h2>") {
		t.Error("a run of the Go engine shows a client section")
	}
}
