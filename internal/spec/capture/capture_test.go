package capture

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/base/golden"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

const fixture = "testdata/shop.log"

func captureFile(t *testing.T, opts Options, path string) *Capture {
	t.Helper()

	c := New(opts)
	if err := c.ReadFile(path); err != nil {
		t.Fatal(err)
	}

	return c
}

func meta() Meta {
	return Meta{Name: "shop", Database: "mongobench_capture_shop", Duration: 2 * time.Second, LoadDocuments: 100, Sources: []string{"shop.log"}}
}

// TestShapeTable checks the shape table of the hand-written fixture: the
// monitoring noise, the getMore, the server's own session updates and the
// update and delete commands whose statements were logged are left out; a
// filter written in another field order is the same shape.
func TestShapeTable(t *testing.T) {
	c := captureFile(t, Options{}, fixture)

	var b bytes.Buffer
	if err := c.WriteTable(&b); err != nil {
		t.Fatal(err)
	}

	if err := c.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}

	golden.Check(t, "testdata/shop.table", b.Bytes())
}

// TestCountsOnce checks the rule for writes on the fixture's counts: two
// update statements followed by their command are two operations, a delete
// statement and its command one, and a slow update command without a
// logged statement one.
func TestCountsOnce(t *testing.T) {
	c := captureFile(t, Options{}, fixture)

	byKind := map[string]int64{}
	for _, s := range c.Shapes() {
		byKind[s.Kind] += s.Count
	}

	want := map[string]int64{"updateOne": 2, "updateMany": 1, "deleteMany": 1, "update": 1}
	for k, n := range want {
		if byKind[k] != n {
			t.Errorf("%s: %d operations, want %d (all: %v)", k, byKind[k], n, byKind)
		}
	}

	st := c.Stats()
	if st.Covered != 2 || st.GetMore != 1 || st.Internal != 1 || st.Bad != 1 {
		t.Errorf("covered %d getMore %d internal %d bad %d, want 2 1 1 1", st.Covered, st.GetMore, st.Internal, st.Bad)
	}
}

// TestWorkloadValidates writes the fixture's workload, with and without
// --keep-values, and parses it as mongobench validate does.
func TestWorkloadValidates(t *testing.T) {
	for _, keep := range []bool{false, true} {
		c := captureFile(t, Options{KeepValues: keep}, fixture)

		out, _, _, err := c.WorkloadAndShapes(meta())
		if err != nil {
			t.Fatal(err)
		}

		if _, errs := workload.Parse("captured.yaml", out); len(errs) > 0 {
			t.Fatalf("keep=%v: generated workload does not validate: %v\n%s", keep, errs, out)
		}
	}
}

// TestWorkloadGolden pins the generated workload of the fixture.
func TestWorkloadGolden(t *testing.T) {
	c := captureFile(t, Options{}, fixture)

	out, _, _, err := c.WorkloadAndShapes(meta())
	if err != nil {
		t.Fatal(err)
	}

	golden.Check(t, "testdata/shop.yaml", out)
}

// TestCanary plants distinctive values in the log (a status string, a
// quantity, an ObjectId) and checks that the workload holds none of them,
// unless values are kept.
func TestCanary(t *testing.T) {
	canaries := []string{"CANARY-7f3a9q", "987654321", "663895a0c1e1f0a1b2c3d401", "archived"}

	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}

	for _, s := range canaries {
		if !bytes.Contains(data, []byte(s)) {
			t.Fatalf("the fixture lost its canary %q", s)
		}
	}

	out, _, _, err := captureFile(t, Options{}, fixture).WorkloadAndShapes(meta())
	if err != nil {
		t.Fatal(err)
	}

	for _, s := range canaries {
		if bytes.Contains(out, []byte(s)) {
			t.Errorf("the workload copies %q from the log:\n%s", s, out)
		}
	}

	if !bytes.Contains(out, []byte("No value of the source is copied")) {
		t.Error("the workload does not say that no value is copied")
	}

	kept, _, _, err := captureFile(t, Options{KeepValues: true}, fixture).WorkloadAndShapes(meta())
	if err != nil {
		t.Fatal(err)
	}

	// With --keep-values the frequent values are copied: the check above
	// can fail.
	if !bytes.Contains(kept, []byte("archived")) {
		t.Errorf("--keep-values did not keep the update's value:\n%s", kept)
	}
}

// TestGzip reads the fixture compressed and finds the same table.
func TestGzip(t *testing.T) {
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}

	var z bytes.Buffer

	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}

	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(t.TempDir(), "shop.log.gz")
	if err := os.WriteFile(path, z.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	var plain, gz bytes.Buffer

	if err := captureFile(t, Options{}, fixture).WriteTable(&plain); err != nil {
		t.Fatal(err)
	}

	if err := captureFile(t, Options{}, path).WriteTable(&gz); err != nil {
		t.Fatal(err)
	}

	if plain.String() != gz.String() {
		t.Errorf("gzip table differs:\n%s\nplain:\n%s", gz.String(), plain.String())
	}
}

// TestBadFile checks that a file that is not a JSON log is refused with one
// line naming the file and the line, and that a bad line later on is
// counted instead.
func TestBadFile(t *testing.T) {
	cases := []struct {
		name, content, want string
	}{
		{"legacy", "2019-01-01T00:00:00.000+0000 I COMMAND [conn1] command shop.orders find\n", "legacy.log:1: not a MongoDB JSON log"},
		{"blank-first", "\n\nnot json\n", "blank-first.log:3: not a MongoDB JSON log"},
		{"binary", "\x00\x01\x02", "binary.log:1: not a MongoDB JSON log"},
		{"bad-gzip", "\x1f\x8b\x08\x00garbage", "bad-gzip.log"},
	}

	for _, tc := range cases {
		path := filepath.Join(t.TempDir(), tc.name+".log")
		if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}

		err := New(Options{}).ReadFile(path)

		var fe *FileError
		if !errors.As(err, &fe) {
			t.Fatalf("%s: %v, want a *FileError", tc.name, err)
		}

		if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q, want one line containing %q", tc.name, msg, tc.want)
		}
	}
}

// TestBadLinesCounted checks that malformed slow-query lines, a line that
// is not JSON and an over-long line after a good first line are counted and
// quoted, never fatal.
func TestBadLinesCounted(t *testing.T) {
	good := `{"t":{"$date":"2024-05-06T10:00:00.001+00:00"},"s":"I","c":"CONTROL","id":20698,"ctx":"main","msg":"***** SERVER RESTARTED *****"}`
	lines := []string{
		good,
		`{"t":{"$date":"2024-05-06T10:00:01.000+00:00"},"s":"I","c":"COMMAND","id":51803,"ctx":"conn1","msg":"Slow query","attr":{"type":"command"`,
		`{"t":{"$date":"2024-05-06T10:00:01.000+00:00"},"s":"I","c":"COMMAND","id":51803,"ctx":"conn1","msg":"Slow query","attr":{"type":"command","ns":"a.b"}}`,
		`plain text`,
		`{"t":{"$date":"2024-05-06T10:00:01.000+00:00"},"msg":"Slow query","attr":{"command":{"find":"b","filter":{"x":[[[[` + strings.Repeat("[", 300) + `}}}`,
		good,
	}

	c := New(Options{})
	if err := c.Read("x.log", strings.NewReader(strings.Join(lines, "\n"))); err != nil {
		t.Fatal(err)
	}

	st := c.Stats()
	if st.Bad != 4 || st.Lines != 6 {
		t.Fatalf("bad %d of %d lines, want 4 of 6: %v", st.Bad, st.Lines, st.BadLines)
	}

	if !strings.HasPrefix(st.BadLines[0], "x.log:2: ") || !strings.HasPrefix(st.BadLines[2], "x.log:4: ") {
		t.Errorf("bad lines not named by line: %q", st.BadLines)
	}
}

// TestLongLine checks that a line beyond the cap is skipped as bad without
// being held whole.
func TestLongLine(t *testing.T) {
	good := `{"t":{"$date":"2024-05-06T10:00:00.001+00:00"},"msg":"x"}`
	long := `{"msg":"Slow query","attr":"` + strings.Repeat("a", maxLine+10) + `"}`

	c := New(Options{})
	if err := c.Read("x.log", strings.NewReader(good+"\n"+long+"\n"+good+"\n")); err != nil {
		t.Fatal(err)
	}

	if st := c.Stats(); st.Bad != 1 || st.Lines != 3 || !strings.Contains(st.BadLines[0], "x.log:2: line longer than") {
		t.Errorf("stats %+v", st)
	}
}
