package result

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/base/atomicfile"

	goldenfile "github.com/mongobench/mongobench/internal/base/golden"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

var t0 = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)

// step is what the workers record before one tick.
type step struct {
	op      int
	latency time.Duration
	docs    int64
	kind    string
	times   int
}

// recordPhase runs a registry through the given ticks, one second apart,
// starting at start, and returns it.
func recordPhase(ops []string, start time.Time, ticks [][]step) *metrics.Registry {
	reg := metrics.NewRegistry(ops)
	reg.Reset(start)
	handles := []*metrics.Handle{reg.NewHandle(), reg.NewHandle()}
	for n, steps := range ticks {
		for i, s := range steps {
			for range s.times {
				handles[i%2].Record(s.op, s.latency, s.docs, s.kind)
			}
		}
		reg.Tick(start.Add(time.Duration(n+1) * time.Second))
	}
	return reg
}

// buildResult builds the deterministic result stored in testdata/golden.json.
func buildResult(t *testing.T) *Result {
	t.Helper()
	load := recordPhase([]string{"insert"}, t0.Add(time.Second), [][]step{
		{{0, 800 * time.Microsecond, 100, "", 5}},
		{{0, 900 * time.Microsecond, 100, "", 4}, {0, time.Millisecond, 0, "duplicate_key", 1}},
	})
	run := recordPhase([]string{"find", "update"}, t0.Add(5*time.Second), [][]step{
		{{0, 150 * time.Microsecond, 1, "", 20}, {1, 400 * time.Microsecond, 1, "", 5}},
		{{0, 170 * time.Microsecond, 1, "", 18}, {0, 2 * time.Second, 0, "timeout", 2}, {1, 3 * time.Millisecond, 1, "", 6}},
		{{0, 2 * time.Hour, 0, "", 1}, {1, 350 * time.Microsecond, 1, "", 4}, {1, 0, 0, "server_112_WriteConflict", 3}},
	})

	r := &Result{
		SchemaVersion:     SchemaVersion,
		MongobenchVersion: "v0.0.0-test",
		ResultKind:        KindRun,
		Workload: Workload{
			Name: "golden",
			File: "testdata/golden.yaml",
			Spec: map[string]any{
				"name":        "golden",
				"concurrency": 4.0,
				"operations":  []any{map[string]any{"name": "find", "weight": 0.8}, map[string]any{"name": "update", "weight": 0.2}},
			},
		},
		Target: Target{
			Kind:          "uri",
			URI:           "mongodb://bench:s3cret@localhost:27017,localhost:27018/?replicaSet=rs0",
			ServerVersion: "7.0.12",
			Backend:       "",
			Notes:         []string{"single host"},
		},
		StartedAt:    t0,
		DurationS:    9,
		Seed:         42,
		Concurrency:  4,
		Status:       StatusCompleted,
		StatusReason: "",
	}
	for _, p := range []struct {
		name   string
		warmup time.Duration
		reg    *metrics.Registry
	}{
		{PhaseLoad, 0, load},
		{PhaseRun, time.Second, run},
	} {
		phase, err := NewPhase(p.name, p.warmup, p.reg.Intervals())
		if err != nil {
			t.Fatal(err)
		}
		r.AddPhase(phase)
	}
	return r
}

// TestGolden writes the deterministic result and compares it byte for byte
// with testdata/golden.json. After an intended change, rewrite it with
// go test ./internal/results/result -run TestGolden -args -update (which fails, so
// that the diff is reviewed) and review git diff.
func TestGolden(t *testing.T) {
	r := buildResult(t)
	path := filepath.Join(t.TempDir(), "out.json")
	if err := WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "golden.json")
	goldenfile.Check(t, golden, got)
	if bytes.Contains(got, []byte("s3cret")) {
		t.Errorf("results file contains the password")
	}

	back, err := Read(context.Background(), golden)
	if err != nil {
		t.Fatal(err)
	}
	if errs := back.Check(); len(errs) != 0 {
		t.Errorf("golden file fails Check: %v", errs)
	}
}

// TestBuiltValues pins the numbers derived for the golden result, so the
// golden file cannot silently absorb a wrong computation.
func TestBuiltValues(t *testing.T) {
	r := buildResult(t)
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"phases", len(r.Phases), 2},
		{"run started", r.Phases[1].StartedAt, t0.Add(5 * time.Second)},
		{"run duration", r.Phases[1].DurationS, 3.0},
		{"run warmup", r.Phases[1].WarmupS, 1.0},
		{"run intervals", len(r.Phases[1].Intervals), 3},
		{"last elapsed", r.Phases[1].Intervals[2].ElapsedS, 3.0},
		{"find count", r.Phases[1].Operations[0].Count, int64(39)},
		{"find errors", r.Phases[1].Operations[0].Errors, map[string]int64{"timeout": 2}},
		{"find clamped", r.Phases[1].Operations[0].Clamped, int64(1)},
		{"find docs", r.Phases[1].Operations[0].Docs, int64(38)},
		{"find ops/s", r.Phases[1].Operations[0].OpsPerSec, 13.0},
		// The clamped 2h op is at the 1h bound, up to 3 significant digits.
		{"find max", math.Abs(r.Phases[1].Operations[0].LatencyUS.Max-3.6e9) <= 3.6e6, true},
		{"update count", r.Phases[1].Operations[1].Count, int64(15)},
		{"update errors", r.Phases[1].Operations[1].Errors, map[string]int64{"server_112_WriteConflict": 3}},
		{"interval ops/s", r.Phases[1].Intervals[0].Operations[0].OpsPerSec, 20.0},
		{"interval p50", r.Phases[1].Intervals[0].Operations[0].LatencyUS.P50, 150.0},
		{"load count", r.Phases[0].Operations[0].Count, int64(9)},
		{"load docs", r.Phases[0].Operations[0].Docs, int64(900)},
		{"top-level is run", r.Operations[0].Name, "find"},
		{"top-level copy", reflect.DeepEqual(r.Operations, r.Phases[1].Operations), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	r := buildResult(t)
	path := filepath.Join(t.TempDir(), "nested", "dirs", "result.json")
	if err := WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	back, err := Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if errs := back.Check(); len(errs) != 0 {
		t.Fatalf("read-back result fails Check: %v", errs)
	}
	if back.Target.URI != "mongodb://bench:xxxxx@localhost:27017,localhost:27018/?replicaSet=rs0" {
		t.Errorf("target uri %q is not the redacted one", back.Target.URI)
	}
	if !strings.Contains(r.Target.URI, "s3cret") {
		t.Errorf("WriteFile modified the caller's result")
	}

	// Apart from the redacted URI, and time zones that JSON does not keep,
	// everything survives.
	want := *r
	want.Target.URI = back.Target.URI
	if !want.StartedAt.Equal(back.StartedAt) {
		t.Errorf("started_at %v, want %v", back.StartedAt, want.StartedAt)
	}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(back)
	if !bytes.Equal(a, b) {
		t.Errorf("round trip changed the result:\n got %s\nwant %s", b, a)
	}
	if got, ok := back.Workload.Spec.(map[string]any); !ok || got["name"] != "golden" {
		t.Errorf("spec read back as %#v", back.Workload.Spec)
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string
		want    []string // substrings of the error
	}{
		{"newer schema", `{"schema_version": 2, "phases": "whatever"}`, []string{"schema_version 2", "v2.json", "only version 1"}},
		{"missing schema", `{"status": "completed"}`, []string{"no schema_version", "missing.json"}},
		{"not json", `schema_version: 1`, []string{"not valid JSON", "notjson.json"}},
		{"wrong type", `{"schema_version": 1, "seed": "abc"}`, []string{"seed", "wrongtype.json"}},
		{"trailing garbage", `{"schema_version": 1} {}`, []string{"trailing.json"}},
	}
	files := map[string]string{
		"newer schema": "v2.json", "missing schema": "missing.json", "not json": "notjson.json",
		"wrong type": "wrongtype.json", "trailing garbage": "trailing.json",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, files[tt.name])
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Read(context.Background(), path)
			if err == nil {
				t.Fatal("ReadFile succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if _, err := Read(context.Background(), filepath.Join(dir, "absent.json")); err == nil || !strings.Contains(err.Error(), "absent.json") {
		t.Errorf("ReadFile of a missing file: %v", err)
	}
}

// TestWriteFileAtomic checks that failed writes leave the previous file
// intact and no temporary files behind.
func TestWriteFileAtomic(t *testing.T) {
	tests := []struct {
		name  string
		write func(path string) error
	}{
		{"unencodable spec", func(path string) error {
			r := buildResult(t)
			r.Workload.Spec = math.NaN()
			return WriteFile(path, r)
		}},
		{"unencodable spec value", func(path string) error {
			r := buildResult(t)
			r.Workload.Spec = map[string]any{"ch": make(chan int)}
			return WriteFile(path, r)
		}},
		{"unknown schema version", func(path string) error {
			r := buildResult(t)
			r.SchemaVersion = 7
			return WriteFile(path, r)
		}},
		{"nil result", func(path string) error { return WriteFile(path, nil) }},
		{"failure half way through writing", func(path string) error {
			return atomicfile.Write(path, func(w io.Writer) error {
				if _, err := w.Write([]byte(`{"schema_version": 1, "trunc`)); err != nil {
					return err
				}
				return errors.New("disk full")
			})
		}},
		{"rename onto a directory fails", func(path string) error {
			dir := filepath.Join(filepath.Dir(path), "adir")
			if err := os.MkdirAll(filepath.Join(dir, "child"), 0o755); err != nil {
				return err
			}
			if err := WriteFile(dir, buildResult(t)); err == nil {
				return nil
			}
			return errors.New("expected")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "result.json")
			old := buildResult(t)
			old.MongobenchVersion = "old"
			if err := WriteFile(path, old); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}

			if err := tt.write(path); err == nil {
				t.Fatal("write succeeded")
			}

			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Errorf("failed write changed the existing file")
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() != "result.json" && e.Name() != "adir" {
					t.Errorf("left behind %s", e.Name())
				}
			}
		})
	}
}

func TestWriteFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	r := buildResult(t)
	r.SchemaVersion = 0 // filled in by WriteFile
	if err := WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	back, err := Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if back.SchemaVersion != SchemaVersion {
		t.Errorf("schema_version %d", back.SchemaVersion)
	}
}

// TestCheckCatchesTampering edits the golden file in various ways and expects
// Check to notice each.
func TestCheckCatchesTampering(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(r *Result)
		want   string // substring of one of the errors
	}{
		{"phase count", func(r *Result) { r.Phases[1].Operations[0].Count++ }, "count 40, but the sum of intervals is 39"},
		{"interval count", func(r *Result) { r.Phases[1].Intervals[1].Operations[1].Count-- }, "histogram holds 6 values, but count is 5"},
		{"p99 edited", func(r *Result) { r.Phases[1].Operations[1].LatencyUS.P99 = 10 }, "not monotone"},
		{"mean edited", func(r *Result) { r.Phases[0].Operations[0].LatencyUS.Mean = 1 }, "does not match its histogram"},
		{"percentiles swapped", func(r *Result) {
			l := &r.Phases[1].Operations[0].LatencyUS
			l.P50, l.Max = l.Max, l.P50
		}, "not monotone"},
		{"histogram swapped", func(r *Result) {
			ops := r.Phases[1].Intervals[0].Operations
			ops[0].Histogram, ops[1].Histogram = ops[1].Histogram, ops[0].Histogram
		}, "histogram holds"},
		{"histogram corrupt", func(r *Result) { r.Phases[1].Operations[0].Histogram = "bm90IGEgaGlzdG9ncmFt" }, "decode histogram"},
		{"docs", func(r *Result) { r.Phases[0].Intervals[0].Operations[0].Docs = 1 }, "docs 900, but the sum of intervals is 401"},
		{"errors", func(r *Result) { r.Phases[1].Operations[0].Errors["timeout"] = 1 }, "errors map[timeout:1]"},
		{"clamped", func(r *Result) { r.Phases[1].Operations[0].Clamped = 0 }, "clamped 0, but the sum of intervals is 1"},
		{"ops per sec", func(r *Result) { r.Phases[1].Operations[0].OpsPerSec *= 2 }, "ops_per_sec"},
		{"interval gap", func(r *Result) {
			r.Phases[1].Intervals[1].Start = r.Phases[1].Intervals[1].Start.Add(time.Millisecond)
		}, "interval 1: starts at"},
		{"elapsed", func(r *Result) { r.Phases[1].Intervals[2].ElapsedS = 2 }, "elapsed_s"},
		{"duration", func(r *Result) { r.Phases[1].DurationS = 10 }, "duration_s 10"},
		{"operation order", func(r *Result) {
			ops := r.Phases[1].Intervals[0].Operations
			ops[0], ops[1] = ops[1], ops[0]
		}, "operation 0 is \"update\""},
		{"top-level operations", func(r *Result) { r.Operations[0].Docs++ }, "top-level operations"},
		{"top-level operations missing", func(r *Result) { r.Operations = nil }, "top-level operations"},
		{"status", func(r *Result) { r.Status = "done" }, "status \"done\""},
		{"target kind", func(r *Result) { r.Target.Kind = "Cloud Atlas" }, "target kind"},
		{"password in uri", func(r *Result) { r.Target.URI = "mongodb://u:pw@h/" }, "not redacted"},
		{"schema version", func(r *Result) { r.SchemaVersion = 3 }, "schema_version is 3"},
		{"duplicate operation", func(r *Result) {
			r.Phases[1].Operations[1].Name = r.Phases[1].Operations[0].Name
		}, "listed twice"},
		{"phase histogram replaced", func(r *Result) {
			// A histogram with the right count but other values.
			h := metrics.NewHistogram()
			_ = h.RecordValues(5, r.Phases[1].Operations[0].Count)
			enc, err := metrics.EncodeHistogram(h)
			if err != nil {
				t.Fatal(err)
			}
			r.Phases[1].Operations[0].Histogram = enc
		}, "differs from the merged interval histograms"},
	}
	golden := filepath.Join("testdata", "golden.json")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Read(context.Background(), golden)
			if err != nil {
				t.Fatal(err)
			}
			tt.tamper(r)
			errs := r.Check()
			if len(errs) == 0 {
				t.Fatal("Check found nothing")
			}
			msgs := make([]string, len(errs))
			for i, e := range errs {
				msgs[i] = e.Error()
			}
			if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, tt.want) }) {
				t.Errorf("no error mentions %q:\n%s", tt.want, strings.Join(msgs, "\n"))
			}
		})
	}
}

// TestCheckCatchesTamperedBytes edits the file text itself, as a person with
// an editor would, rather than the parsed value.
func TestCheckCatchesTamperedBytes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(data, []byte(`"count": 39`), []byte(`"count": 3900`), 1)
	if bytes.Equal(tampered, data) {
		t.Fatal("golden file has no \"count\": 39 to tamper with")
	}
	path := filepath.Join(t.TempDir(), "tampered.json")
	if err := os.WriteFile(path, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if errs := r.Check(); len(errs) == 0 {
		t.Error("Check accepted a file whose count was edited")
	}
}

func TestNewPhaseEdgeCases(t *testing.T) {
	hist := func(values ...int64) *metrics.OpStats {
		h := metrics.NewHistogram()
		for _, v := range values {
			_ = h.RecordValue(v)
		}
		return &metrics.OpStats{Name: "op", Count: int64(len(values)), Errors: map[string]int64{}, Hist: h}
	}
	seq := func(ivs ...metrics.Interval) func(func(metrics.Interval, error) bool) {
		return func(yield func(metrics.Interval, error) bool) {
			for _, iv := range ivs {
				if !yield(iv, nil) {
					return
				}
			}
		}
	}
	tests := []struct {
		name    string
		ivs     []metrics.Interval
		wantErr string
		check   func(t *testing.T, p Phase)
	}{
		{
			name: "no intervals",
			check: func(t *testing.T, p Phase) {
				if p.DurationS != 0 || len(p.Operations) != 0 || len(p.Intervals) != 0 || p.Operations == nil {
					t.Errorf("phase %+v", p)
				}
			},
		},
		{
			name: "zero-length interval has zero rate",
			ivs:  []metrics.Interval{{Start: t0, End: t0, Ops: []metrics.OpStats{*hist(10, 20)}}},
			check: func(t *testing.T, p Phase) {
				if p.Operations[0].OpsPerSec != 0 || p.Intervals[0].Operations[0].OpsPerSec != 0 {
					t.Errorf("rates %v %v", p.Operations[0].OpsPerSec, p.Intervals[0].Operations[0].OpsPerSec)
				}
			},
		},
		{
			name: "count not matching histogram",
			ivs: []metrics.Interval{{Start: t0, End: t0.Add(time.Second), Ops: []metrics.OpStats{
				{Name: "op", Count: 3, Errors: map[string]int64{}, Hist: metrics.NewHistogram()},
			}}},
			wantErr: "histogram holds 0 values but count is 3",
		},
		{
			name: "operations change between intervals",
			ivs: []metrics.Interval{
				{Start: t0, End: t0.Add(time.Second), Ops: []metrics.OpStats{*hist(1)}},
				{Start: t0.Add(time.Second), End: t0.Add(2 * time.Second), Ops: []metrics.OpStats{*hist(1), *hist(2)}},
			},
			wantErr: "has 2 operations, the first had 1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPhase("run", 0, seq(tt.ivs...))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, p)
			r := &Result{SchemaVersion: SchemaVersion, Status: StatusCompleted, Target: Target{Kind: "embedded"}}
			r.AddPhase(p)
			if errs := r.Check(); len(errs) != 0 {
				t.Errorf("Check: %v", errs)
			}
		})
	}
}

func TestMainPhase(t *testing.T) {
	tests := []struct {
		name   string
		phases []string
		want   int // index, -1 for nil
	}{
		{"none", nil, -1},
		{"load only", []string{"load"}, 0},
		{"load and run", []string{"load", "run"}, 1},
		{"run then cleanup", []string{"load", "run", "cleanup"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Result{}
			for _, name := range tt.phases {
				r.AddPhase(Phase{Name: name, Operations: []Operation{{Name: name + "-op"}}})
			}
			got := r.MainPhase()
			switch {
			case tt.want < 0 && got != nil:
				t.Errorf("got phase %q, want none", got.Name)
			case tt.want >= 0 && (got == nil || got != &r.Phases[tt.want]):
				t.Errorf("got %v, want phase %d", got, tt.want)
			case tt.want >= 0 && r.Operations[0].Name != tt.phases[tt.want]+"-op":
				t.Errorf("top-level operations %v", r.Operations)
			}
		})
	}
}

// TestIndentToMatchesIndent holds the streaming indenter WriteFile uses to
// what json.Indent followed by json.HTMLEscape write, on documents with
// every construct: nesting, empty objects and arrays, escapes, characters
// json.Marshal escapes for HTML, and a real results file.
func TestIndentToMatchesIndent(t *testing.T) {
	docs := []string{
		`{}`, `[]`, `"x"`, `1.5e-3`, `null`,
		`{"a":[],"b":{},"c":[{},[]],"d":[1,2,{"e":"f"}]}`,
		`{"s":"quote \" backslash \\ slash \/ <b>&amp;</b> \u2028 \u2029 ` + "\u2028\u2029" + ` é ☃","n":[true,false,null]}`,
		`{"k:,{}[]":"v:,{}[]","x":{"y":{"z":[[[]]]}}}`,
	}
	if data, err := os.ReadFile(filepath.Join("testdata", "golden.json")); err == nil {
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, buf.String())
	} else {
		t.Fatal(err)
	}

	for _, doc := range docs {
		var indented, want bytes.Buffer
		if err := json.Indent(&indented, []byte(doc), "", "  "); err != nil {
			t.Fatalf("%.60s: %v", doc, err)
		}
		json.HTMLEscape(&want, indented.Bytes())
		want.WriteByte('\n')

		var got bytes.Buffer
		bw := bufio.NewWriter(&got)
		if err := indentTo(bw, []byte(doc)); err != nil {
			t.Fatalf("%.60s: %v", doc, err)
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%.60s: indentTo wrote\n%.400s\nwant\n%.400s", doc, got.String(), want.String())
		}
	}

	for _, bad := range []string{`{"a":`, `{"a":"b`, `[[1]`} {
		if err := indentTo(bufio.NewWriter(io.Discard), []byte(bad)); err == nil {
			t.Errorf("indentTo(%q) succeeded", bad)
		}
	}
}
