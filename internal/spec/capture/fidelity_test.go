package capture

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/base/golden"
)

// fixtureShapes is the shape file of the fixture's workload.
func fixtureShapes(t *testing.T) *ShapeFile {
	t.Helper()

	c := captureFile(t, Options{}, fixture)

	_, sf, _, err := c.WorkloadAndShapes(meta())
	if err != nil {
		t.Fatal(err)
	}

	return sf
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")

	return lines[len(lines)-1]
}

// TestShapeFileNames checks that the shape file names, for each shape the
// workload holds, the operation capture wrote for it, and leaves the shape
// it cannot hold without one, and the fixture's inserts, which all ran
// before any other operation and are the load step (Loaded 5 of 5).
func TestShapeFileNames(t *testing.T) {
	sf := fixtureShapes(t)

	want := map[string]string{
		"findOne customers filter {_id: ?}":         "findOne_customers",
		"insert orders":                             "",
		"update orders (statements not in the log)": "",
	}

	for _, s := range sf.Shapes {
		if op, ok := want[s.Text]; ok && s.Operation != op {
			t.Errorf("%s: operation %q, want %q", s.Text, s.Operation, op)
		}

		if wantLoaded := map[bool]int64{true: 5}[s.Text == "insert orders"]; s.Loaded != wantLoaded {
			t.Errorf("%s: loaded %d, want %d", s.Text, s.Loaded, wantLoaded)
		}
	}

	if len(sf.Shapes) != 9 || sf.Format != ShapeFormat || len(sf.WorkloadSHA256) != 64 {
		t.Errorf("%d shapes, format %q, sha %q; want 9, %q and a SHA-256", len(sf.Shapes), sf.Format, sf.WorkloadSHA256, ShapeFormat)
	}
}

// TestFidelityExact: a run whose mix is the captured one exactly (ten
// times each count) and whose p50 is 1.1 times each captured median is
// within 0 points and reproduces every p50 within 25%.
func TestFidelityExact(t *testing.T) {
	sf := fixtureShapes(t)

	var run []RunOperation

	for _, s := range sf.Shapes {
		if s.Operation != "" {
			run = append(run, RunOperation{Name: s.Operation, Issued: 10 * s.Count, P50US: 1100 * float64(s.P50MS), P99US: 1000 * float64(s.P99MS)})
		}
	}

	f, err := CompareRun(sf, run, 25)
	if err != nil {
		t.Fatal(err)
	}

	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}

	if got, want := lastLine(b.String()), "mix within 0.0 points, p50 within 25% for 7 of 7 shapes"; got != want {
		t.Errorf("summary %q, want %q\n%s", got, want, b.String())
	}
}

// TestFidelityTable: a run with one shape missing (deleteMany_orders), an
// operation added after capture, and p50 ratios on both sides of the 25%
// tolerance. By hand: the captured shares are count/27 (the update command
// without statements is not in the workload, and the five inserts are its
// load), the run's issued/260; deleteMany's 1/27 = 3.7% missing is the
// largest difference; the p50 ratios are findOne 2.4/2 = 1.2, find 20/14 =
// 1.43, aggregate 58/58 = 1, updateOne 10/6 = 1.67, distinct 17.6/22 =
// 0.8, updateMany 151.2/120 = 1.26: three of the six that ran are within.
func TestFidelityTable(t *testing.T) {
	sf := fixtureShapes(t)

	run := []RunOperation{
		{Name: "findOne_customers", Issued: 120, P50US: 2400, P99US: 4000},
		{Name: "find_orders", Issued: 70, P50US: 20000, P99US: 31000},
		{Name: "aggregate_orders", Issued: 30, P50US: 58000, P99US: 61000},
		{Name: "updateOne_orders", Issued: 20, P50US: 10000, P99US: 14000},
		{Name: "distinct_orders", Issued: 10, P50US: 17600, P99US: 22000},
		{Name: "updateMany_orders", Issued: 10, P50US: 151200, P99US: 151200},
		{Name: "mine", Issued: 999, P50US: 1000, P99US: 1000},
	}

	f, err := CompareRun(sf, run, 25)
	if err != nil {
		t.Fatal(err)
	}

	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}

	if got, want := lastLine(b.String()), "mix within 3.7 points, p50 within 25% for 3 of 6 shapes"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}

	golden.Check(t, "testdata/shop.fidelity", b.Bytes())
}

// TestFidelityUnresolved: a shape whose captured median is 0 ms (under the
// log's resolution) gets no ratio and is not counted among the compared.
func TestFidelityUnresolved(t *testing.T) {
	sf := &ShapeFile{Format: ShapeFormat, Shapes: []ShapeEntry{
		{ID: "a", Operation: "fast", Count: 1, P50MS: 0, P99MS: 1},
		{ID: "b", Operation: "slow", Count: 1, P50MS: 10, P99MS: 10},
	}}

	f, err := CompareRun(sf, []RunOperation{{Name: "fast", Issued: 5, P50US: 300}, {Name: "slow", Issued: 5, P50US: 10500}}, 25)
	if err != nil {
		t.Fatal(err)
	}

	if f.Unresolved != 1 || f.Compared != 1 || f.Within != 1 {
		t.Errorf("unresolved %d compared %d within %d, want 1 1 1", f.Unresolved, f.Compared, f.Within)
	}
}

// TestFidelityRefusals: a run of another workload (no operation named by
// the shape file) and files that are not shape files are errors naming
// the file.
func TestFidelityRefusals(t *testing.T) {
	sf := fixtureShapes(t)
	if _, err := CompareRun(sf, []RunOperation{{Name: "other", Issued: 3}}, 25); err == nil || !strings.Contains(err.Error(), "no operation of the captured workload") {
		t.Errorf("a run of another workload: %v", err)
	}

	for _, tc := range []struct{ data, want string }{
		{`{"schema_version": 1}`, `s.json: format ""`},
		{`not json`, "s.json: not a shape file"},
		{`{"format": "` + ShapeFormat + `", "shapes": [{"count": 1}]}`, "s.json: shapes[0]: needs an id"},
	} {
		if _, err := ParseShapeFile("s.json", []byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.data, err, tc.want)
		}
	}
}

// TestFidelityAtTheProxy: a recording of the run through a proxy is
// matched with the capture by shape id. Its mix is the captured one (ten
// times each count, and its own load step's inserts loaded), its p50 1.1
// times each captured median: within 0 points and 7 of 7 p50s within 25%.
// The run's inserts of the shape the capture made its load are neither
// side's mix; a shape the capture has not (the run's own bookkeeping) is
// named and left out; the legend says both times are the proxy's.
func TestFidelityAtTheProxy(t *testing.T) {
	sf := fixtureShapes(t)

	rec := &ShapeFile{Format: ShapeFormat}

	for _, s := range sf.Shapes {
		e := ShapeEntry{ID: s.ID, Text: s.Text, Count: 10 * s.Count, P50MS: s.P50MS, P50US: 1100 * s.P50MS, P99MS: s.P99MS}
		if s.Text == "insert orders" {
			e.Count, e.Loaded = 7, 0
		}

		rec.Shapes = append(rec.Shapes, e)
	}

	rec.Shapes = append(rec.Shapes, ShapeEntry{ID: "0badf00d", Text: "insert mongobench.owner", Count: 1, P50MS: 1})

	f, err := CompareShapes(sf, rec, 25)
	if err != nil {
		t.Fatal(err)
	}

	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}

	out := b.String()
	if got, want := lastLine(out), "mix within 0.0 points, p50 within 25% for 7 of 7 shapes"; got != want {
		t.Errorf("summary %q, want %q\n%s", got, want, out)
	}

	if !strings.Contains(out, "left out: 0badf00d insert mongobench.owner.\n") || strings.Contains(out, "insert orders.") {
		t.Errorf("extra shapes: want the owner's insert named and the load's inserts not\n%s", out)
	}

	if !strings.Contains(out, "both taken at the recording proxy") {
		t.Errorf("legend does not say both times are the proxy's\n%s", out)
	}

	// A recording of something else has no shape of the capture.
	other := &ShapeFile{Format: ShapeFormat, Shapes: []ShapeEntry{{ID: "0badf00d", Text: "insert mongobench.owner", Count: 1}}}
	if _, err := CompareShapes(sf, other, 25); err == nil || !strings.Contains(err.Error(), "no shape of the capture") {
		t.Errorf("a recording without the capture's shapes: error %v", err)
	}
}
