package capture

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/spec/workload"
)

// rec is one operation of a made-up log: its connection, when it ended (ms
// after the log's origin), its duration (whole ms) and its "Slow query"
// attributes after type and ns (command, counts).
type rec struct {
	conn   string
	end    int64
	millis int64
	typ    string // "command", "update" or "remove"
	attrs  string
	// micros, when > 0, is written as durationMicros, as the recording
	// proxy does.
	micros int64
}

// origin is the made-up log's time zero.
var origin = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)

// logOf writes records as logv2 lines, as mongod (or the recording proxy)
// writes them.
func logOf(recs []rec) string {
	var b strings.Builder

	for _, r := range recs {
		typ := r.typ
		if typ == "" {
			typ = "command"
		}

		micros := ""
		if r.micros > 0 {
			micros = fmt.Sprintf(`,"durationMicros":%d`, r.micros)
		}

		fmt.Fprintf(&b, `{"t":{"$date":%q},"s":"I","c":"COMMAND","id":51803,"ctx":%q,"msg":"Slow query","attr":{"type":%q,"ns":"app.orders",%s,"durationMillis":%d%s}}`+"\n",
			origin.Add(time.Duration(r.end)*time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00"), r.conn, typ, r.attrs, r.millis, micros)
	}

	return b.String()
}

func captureRecs(t *testing.T, opts Options, recs []rec) *Capture {
	t.Helper()

	c := New(opts)
	if err := c.Read("app.log", strings.NewReader(logOf(recs))); err != nil {
		t.Fatal(err)
	}

	if st := c.Stats(); st.Bad > 0 {
		t.Fatalf("made-up log has bad lines: %v", st.BadLines)
	}

	return c
}

func findOne(conn string, end, millis int64) rec {
	return rec{conn: conn, end: end, millis: millis, attrs: fmt.Sprintf(`"command":{"find":"orders","filter":{"_id":%d},"limit":1,"$db":"app"}`, end%97)}
}

// sequential is n findOnes on each connection, each taking dur ms and the
// next starting gap ms after the previous ended, the connections' first
// operations starting at 0.
func sequential(conns, n int, dur, gap int64) []rec {
	var out []rec

	for c := range conns {
		end := dur

		for range n {
			out = append(out, findOne(fmt.Sprintf("conn%d", c+1), end, dur))
			end += gap + dur
		}
	}

	return out
}

func inferred(t *testing.T, c *Capture, m Meta) LoadModel {
	t.Helper()

	lm, err := c.InferLoadModel(m)
	if err != nil {
		t.Fatal(err)
	}

	return lm
}

// TestLoadModelSequentialIsClosed: three connections, each sending its
// next findOne 1 ms after the previous returned (5 ms each, busy 5/6 of the
// time, over 2.4 s), are three synchronous clients: a closed loop of 3.
func TestLoadModelSequentialIsClosed(t *testing.T) {
	c := captureRecs(t, Options{}, sequential(3, 400, 5, 1))

	lm := inferred(t, c, meta())
	if !lm.Closed || lm.Workers != 3 {
		t.Fatalf("model %+v, want a closed loop of 3 workers", lm)
	}

	if !strings.Contains(lm.Why, "busy 83%") {
		t.Errorf("why %q, want the busy share 83%% (5 of every 6 ms)", lm.Why)
	}

	out, _, _, err := c.WorkloadAndShapes(meta())
	if err != nil {
		t.Fatal(err)
	}

	spec, errs := workload.Parse("w.yaml", out)
	if len(errs) > 0 {
		t.Fatalf("%v\n%s", errs, out)
	}

	if spec.Run.Concurrency != 3 || spec.Run.Rate != 0 {
		t.Errorf("run: concurrency %d rate %v, want a closed loop of 3\n%s", spec.Run.Concurrency, spec.Run.Rate, out)
	}

	// Each connection waited 1 ms between a reply and its next request:
	// the closed loop thinks as long, and says so.
	if spec.Run.ThinkTime.D() != time.Millisecond || lm.ThinkTime != time.Millisecond || !strings.Contains(lm.Why, "think time 1ms") {
		t.Errorf("think time %s in the workload, %s inferred (%q); want 1ms\n%s", spec.Run.ThinkTime.D(), lm.ThinkTime, lm.Why, out)
	}
}

// TestThinkTimeMicros: a recording's times are whole milliseconds but its
// durations are microseconds. An application that thinks 1.3 ms between a
// reply and its next request, whose operations take 2.0 to 2.9 ms, shows
// gaps of 0.3 to 2.3 ms (each end truncated on its own); their median is
// the 1.3 ms within the times' resolution, which a median of whole
// milliseconds (1 or 2) would not be.
func TestThinkTimeMicros(t *testing.T) {
	const think = 1300

	var (
		recs []rec
		now  int64 // µs after origin, the true clock
	)

	for i := range 2000 {
		svc := 2000 + int64(i*337%900)
		now += svc
		r := findOne("conn1", now/1000, svc/1000)
		r.micros = svc
		recs = append(recs, r)
		now += think
	}

	c := captureRecs(t, Options{}, recs)

	d, ok := c.ThinkTime()
	if !ok || d < (think-100)*time.Microsecond || d > (think+100)*time.Microsecond {
		t.Errorf("think time %s (%v), want 1.3ms within 0.1ms", d, ok)
	}

	if lm := inferred(t, c, meta()); !lm.Closed || lm.ThinkTime != d {
		t.Errorf("model %+v, want a closed loop thinking %s", lm, d)
	}
}

// TestThinkTimeNotAfterTheLoad: the gaps between the load's inserts, and
// after the last of them, are the loader's, not the steady mix's think
// time: 300 inserts 10 ms apart, then 200 findOnes 1 ms apart, think 1 ms
// (with the load's gaps counted, the median would be 10 ms).
func TestThinkTimeNotAfterTheLoad(t *testing.T) {
	var recs []rec

	end := int64(0)

	for i := range 300 {
		end += 10 + 2
		recs = append(recs, insertOf("conn1", end, 2, i))
	}

	for _, r := range sequential(1, 200, 5, 1) {
		r.end += end + 10
		recs = append(recs, r)
	}

	c := captureRecs(t, Options{}, recs)

	if d, ok := c.ThinkTime(); !ok || d != time.Millisecond {
		t.Errorf("think time %s (%v), want 1ms", d, ok)
	}

	// Without a steady mix to load (--replay keeps the inserts in the
	// timeline, but the rule is the load's): a capture of inserts alone
	// is all mix, and its gaps are its think time.
	c = captureRecs(t, Options{}, recs[:300])
	if d, ok := c.ThinkTime(); !ok || d != 10*time.Millisecond {
		t.Errorf("inserts alone: think time %s (%v), want 10ms", d, ok)
	}
}

// TestThinkTimeNone: with one operation per connection there is no gap,
// and the closed loop does not think.
func TestThinkTimeNone(t *testing.T) {
	c := captureRecs(t, Options{}, sequential(5, 1, 3, 0))

	if d, ok := c.ThinkTime(); ok {
		t.Errorf("think time %s from single operations, want none", d)
	}

	lm := inferred(t, c, meta())
	if !lm.Closed || lm.ThinkTime != 0 || strings.Contains(lm.Why, "think") {
		t.Errorf("model %+v, want a closed loop without think time", lm)
	}
}

// TestLoadModelOverlapIsOpen: one operation that started 3 ms before the
// previous one on its connection returned (a pipelined request) makes the
// run an open loop at the arrival rate; one that started 1 ms before (the
// log's truncation can show that much of a sequential connection) does not.
func TestLoadModelOverlapIsOpen(t *testing.T) {
	for _, tc := range []struct {
		early  int64
		closed bool
	}{{1, true}, {3, false}} {
		recs := sequential(1, 400, 5, 1)
		// The 11th starts early: it ends 5 ms after it started.
		recs[10].end = recs[9].end - tc.early + 5

		c := captureRecs(t, Options{}, recs)

		lm := inferred(t, c, meta())
		if lm.Closed != tc.closed {
			t.Errorf("started %d ms before the previous end: closed %v, want %v (%s)", tc.early, lm.Closed, tc.closed, lm.Why)
		}

		if !tc.closed && (lm.Rate <= 0 || !strings.Contains(lm.Why, "1 of 1 connections")) {
			t.Errorf("open loop %+v, want a rate and the overlapping connection named in why", lm)
		}
	}
}

// TestLoadModelThinkTimeIsOpen: connections that never overlap but wait
// 20 ms between 2 ms operations (busy 9% of the time) are not held by
// the server: a closed loop without think time would send ten times their
// rate, so the run is an open loop at the arrival rate: 2 connections ×
// 100 operations over 22 ms × 100 - 20 ms = 2.18 s, 91.7/s.
func TestLoadModelThinkTimeIsOpen(t *testing.T) {
	c := captureRecs(t, Options{}, sequential(2, 100, 2, 20))

	lm := inferred(t, c, meta())
	if lm.Closed || lm.Rate != 91.7 || !strings.Contains(lm.Why, "busy only 9%") {
		t.Errorf("model %+v, want an open loop at 91.7/s, busy only 9%%", lm)
	}
}

// TestLoadModelStatementsOfOneCommand: the statements of one update
// command, written by a recording proxy with the command's end time and a
// share of its time each, are one request, not an overlap.
func TestLoadModelStatementsOfOneCommand(t *testing.T) {
	recs := sequential(1, 300, 5, 1)
	end := recs[len(recs)-1].end + 11

	for i := range 3 {
		recs = append(recs, rec{
			conn: "conn1", end: end, millis: 3, typ: "update",
			attrs: fmt.Sprintf(`"command":{"q":{"_id":%d},"u":{"$inc":{"qty":1}},"multi":false,"upsert":false}`, i),
		})
	}

	recs = append(recs, rec{conn: "conn1", end: end, millis: 10, attrs: `"command":{"update":"orders","ordered":true,"$db":"app"}`})

	c := captureRecs(t, Options{}, recs)
	if lm := inferred(t, c, meta()); !lm.Closed {
		t.Errorf("model %+v, want a closed loop: the statements of one command do not overlap", lm)
	}
}

// TestLoadModelOverrides: --closed-loop and --open-loop win over the
// inference; --open-loop without a rate (times spanning under a second)
// is refused, and the inference then is a closed loop.
func TestLoadModelOverrides(t *testing.T) {
	seq := captureRecs(t, Options{}, sequential(1, 400, 5, 1))
	think := captureRecs(t, Options{}, sequential(2, 100, 2, 20))
	short := captureRecs(t, Options{}, sequential(2, 10, 2, 20))

	m := meta()
	m.Open = true

	if lm := inferred(t, seq, m); lm.Closed || lm.Rate == 0 || !strings.Contains(lm.Why, "--open-loop") {
		t.Errorf("--open-loop on a sequential capture: %+v, want an open loop", lm)
	}

	if _, err := short.InferLoadModel(m); err == nil || !strings.Contains(err.Error(), "--open-loop") {
		t.Errorf("--open-loop with 0.2 s of times: error %v, want a refusal naming --open-loop", err)
	}

	m = meta()
	m.Closed = true

	// Behind --closed-loop the gaps (20 ms, idle 91% of the time) need not
	// be think time: the closed loop does not think.
	if lm := inferred(t, think, m); !lm.Closed || lm.Workers != 2 || !strings.Contains(lm.Why, "--closed-loop") || lm.ThinkTime != 0 {
		t.Errorf("--closed-loop: %+v, want a closed loop of 2 without think time", lm)
	}

	if lm := inferred(t, short, meta()); !lm.Closed || !strings.Contains(lm.Why, "less than a second") {
		t.Errorf("0.2 s of times: %+v, want a closed loop for want of a rate", lm)
	}
}

func insertOf(conn string, end, millis int64, ids ...int) rec {
	docs := make([]string, len(ids))
	for i, id := range ids {
		docs[i] = fmt.Sprintf(`{"_id":%d,"status":"s%d","qty":%d}`, id, id%3, id%50)
	}

	return rec{
		conn: conn, end: end, millis: millis,
		attrs: fmt.Sprintf(`"command":{"insert":"orders","documents":[%s],"$db":"app"},"ninserted":%d`, strings.Join(docs, ","), len(ids)),
	}
}

func ids(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}

	return out
}

// leadingLoad is an application that inserts 150 documents in two bulk
// inserts (100 and 50) before anything else, then runs findOnes and, once
// in the middle, inserts one document.
func leadingLoad() []rec {
	recs := []rec{insertOf("conn1", 20, 20, ids(0, 100)...), insertOf("conn1", 35, 10, ids(100, 50)...)}
	for _, r := range sequential(1, 400, 5, 1) {
		r.end += 40
		recs = append(recs, r)
	}

	// The insert starts 1 ms after the 198th findOne returned; the
	// findOnes after it, 1 ms after it returned.
	for i := 200; i < len(recs); i++ {
		recs[i].end += 3
	}

	return append(recs[:200], append([]rec{insertOf("conn1", recs[199].end+3, 2, 999)}, recs[200:]...)...)
}

func parsed(t *testing.T, c *Capture, m Meta) (*workload.Spec, []string, *ShapeFile) {
	t.Helper()

	out, sf, notes, err := c.WorkloadAndShapes(m)
	if err != nil {
		t.Fatal(err)
	}

	spec, errs := workload.Parse("w.yaml", out)
	if len(errs) > 0 {
		t.Fatalf("%v\n%s", errs, out)
	}

	return spec, notes, sf
}

// TestLeadingInsertsAreTheLoad: the inserts before any other operation are
// the load step (100 + 50 = 150 documents, with their template), not
// operations of the mix; the insert in the middle stays in the mix, one
// document at a time, with weight 1; the shape file says 2 of the shape's
// 3 operations were loaded.
func TestLeadingInsertsAreTheLoad(t *testing.T) {
	c := captureRecs(t, Options{}, leadingLoad())

	spec, notes, sf := parsed(t, c, meta())

	if len(spec.Load) != 1 || spec.Load[0].Collection != "orders" || spec.Load[0].Documents != 150 {
		t.Errorf("load %+v, want 150 documents into orders", spec.Load)
	}

	var insert *workload.Operation

	for i := range spec.Operations {
		if spec.Operations[i].Collection == "orders" && strings.HasPrefix(spec.Operations[i].Op, "insert") {
			insert = &spec.Operations[i]
		}
	}

	if insert == nil || insert.Op != "insertOne" || insert.Weight == nil || *insert.Weight != 1 {
		t.Errorf("insert operation %+v, want insertOne with weight 1", insert)
	}

	if !strings.Contains(strings.Join(notes, "\n"), "2 inserts (150 documents into orders) ran before any other operation") {
		t.Errorf("notes %q, want the load named", notes)
	}

	for _, s := range sf.Shapes {
		if s.Text == "insert orders" && (s.Count != 3 || s.Loaded != 2) {
			t.Errorf("shape file: insert orders count %d loaded %d, want 3 and 2", s.Count, s.Loaded)
		}
	}

	// A --load-documents the user gave applies to every collection.
	m := meta()
	m.LoadDocuments, m.LoadSet = 40, true

	if spec, _, _ := parsed(t, c, m); len(spec.Load) != 1 || spec.Load[0].Documents != 40 {
		t.Errorf("--load-documents 40: load %+v, want 40 documents", spec.Load)
	}

	// The loader's inserts do not make the mix's rate: 400 findOnes and
	// the insert from the first findOne's start.
	if lm := inferred(t, c, meta()); !lm.Closed || lm.Workers != 1 {
		t.Errorf("model %+v, want a closed loop of 1", lm)
	}
}

// TestLeadingInsertsOnlyWhenFollowed: a capture of inserts alone is all
// mix (there is no steady mix for them to load), inserts after the first
// other operation are the mix's, and a replay sends the timeline as it
// was, leading inserts included.
func TestLeadingInsertsOnlyWhenFollowed(t *testing.T) {
	var only []rec
	for i := range 20 {
		only = append(only, insertOf("conn1", int64(100*i+10), 5, ids(10*i, 10)...))
	}

	spec, _, _ := parsed(t, captureRecs(t, Options{}, only), meta())
	if len(spec.Load) != 0 || len(spec.Operations) != 1 || *spec.Operations[0].Weight != 20 || spec.Operations[0].BatchSize.N != 10 {
		t.Errorf("inserts alone: load %+v operations %+v, want no load and insertMany of 10, weight 20", spec.Load, spec.Operations)
	}

	late := append([]rec{findOne("conn1", 5, 5)}, leadingLoad()...)
	for i := 1; i < len(late); i++ {
		late[i].end += 10
	}

	spec, _, _ = parsed(t, captureRecs(t, Options{}, late), meta())
	if spec.Load[0].Documents != meta().LoadDocuments {
		t.Errorf("inserts after a find: load %+v, want the default %d", spec.Load, meta().LoadDocuments)
	}

	for _, o := range spec.Operations {
		if o.Op == "insertMany" && *o.Weight != 3 {
			t.Errorf("inserts after a find: %s weight %v, want all 3 in the mix", o.Name, *o.Weight)
		}
	}

	c := captureRecs(t, Options{Timeline: true}, leadingLoad())

	m := meta()
	m.Replay, m.Speed = true, 1

	spec, _, _ = parsed(t, c, m)
	if spec.Load[0].Documents != meta().LoadDocuments || spec.Run.Replay == nil {
		t.Errorf("replay: load %+v, want the default %d, and a replay", spec.Load, meta().LoadDocuments)
	}
}

// TestFidelityMicros: a recording gives each operation's time in
// microseconds as well as in whole (truncated) milliseconds; the captured
// median is then 3.5 ms (of 3.1, 3.5 and 3.9), not 3, and a run p50 of
// 4 ms is within 25% of it (1.14), where against 3 ms it would not be
// (1.33). A shape with one operation without microseconds keeps whole
// milliseconds.
func TestFidelityMicros(t *testing.T) {
	var recs []rec

	for i, us := range []int64{3900, 3100, 3500} {
		r := findOne("conn1", int64(400*i+10), 3)
		r.attrs += fmt.Sprintf(`,"durationMicros":%d`, us)
		recs = append(recs, r)
	}

	for i := range 2 {
		r := rec{conn: "conn1", end: int64(2000 + 400*i), millis: 3, attrs: `"command":{"count":"orders","query":{},"$db":"app"}`}
		if i == 0 {
			r.attrs += `,"durationMicros":3900`
		}

		recs = append(recs, r)
	}

	_, _, sf := parsed(t, captureRecs(t, Options{}, recs), meta())

	var run []RunOperation

	for _, s := range sf.Shapes {
		want := map[bool][2]int64{true: {3500, 3900}, false: {0, 0}}[strings.HasPrefix(s.Text, "findOne")]
		if s.P50US != want[0] || s.P99US != want[1] || s.P50MS != 3 {
			t.Errorf("%s: p50 %d µs, p99 %d µs, p50 %d ms; want %d, %d and 3", s.Text, s.P50US, s.P99US, s.P50MS, want[0], want[1])
		}

		run = append(run, RunOperation{Name: s.Operation, Issued: s.Count, P50US: 4000, P99US: 5000})
	}

	f, err := CompareRun(sf, run, 25)
	if err != nil {
		t.Fatal(err)
	}

	if f.Within != 1 || f.Compared != 2 {
		t.Errorf("within %d of %d, want 1 of 2 (findOne 4/3.5, not countDocuments 4/3)", f.Within, f.Compared)
	}
}

// TestGapSampleBounded: the sample of gaps stays within maxGaps however
// many gaps a log has, and stays spread over all of them: a million gaps
// cycling through 0..999 µs keep their median.
func TestGapSampleBounded(t *testing.T) {
	var g gapSample

	for i := range 1_000_000 {
		g.add(int64(i % 1000))
	}

	if len(g.gaps) > maxGaps || len(g.gaps) < maxGaps/2 {
		t.Fatalf("%d gaps kept, want between %d and %d", len(g.gaps), maxGaps/2, maxGaps)
	}

	c := &Capture{steady: true, gaps: g}
	if d, _ := c.ThinkTime(); d < 480*time.Microsecond || d > 520*time.Microsecond {
		t.Errorf("median %s of gaps cycling through 0..999 µs, want about 500µs", d)
	}
}
