package runlog

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// intervals returns n contiguous one-second intervals of two operations
// with pseudo-random latencies, counts, documents and errors ("b" is idle
// in some intervals).
func intervals(n int) []metrics.Interval {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	out := make([]metrics.Interval, n)

	for i := range out {
		iv := metrics.Interval{Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second)}

		for _, name := range []string{"a", "b"} {
			s := metrics.OpStats{Name: name, Errors: map[string]int64{}, Hist: metrics.NewHistogram()}
			k := rng.IntN(40)

			if name == "b" && i%7 == 3 {
				k = 0
			}

			for range k {
				_ = s.Hist.RecordValue(int64(50 + rng.ExpFloat64()*800))
				s.Count++
				s.Docs += int64(rng.IntN(3))
			}

			if rng.IntN(5) == 0 {
				s.Errors["network"] = int64(1 + rng.IntN(3))
			}

			iv.Ops = append(iv.Ops, s)
		}

		out[i] = iv
	}

	return out
}

// writeLog writes a run log of one phase with the given intervals, a plan
// point at each interval's end, and the final record when complete.
func writeLog(t testing.TB, ivs []metrics.Interval, complete bool) string {
	t.Helper()

	return writeLogWith(t, ivs, complete, defaultLimits())
}

// writeLogWith is writeLog with the bounds lim on the points, for a reader
// with the same bounds (build).
func writeLogWith(t testing.TB, ivs []metrics.Interval, complete bool, lim limits) string {
	t.Helper()

	path := filepath.Join(t.TempDir(), "r"+Suffix)

	w, err := create(path, Header{
		MongobenchVersion: "test", Workload: result.Workload{Name: "w"},
		Target: result.Target{Kind: "uri", URI: "mongodb://127.0.0.1/"}, StartedAt: t0, Concurrency: 2,
	}, lim)
	if err != nil {
		t.Fatal(err)
	}

	w.StartPhase(PhaseStart{Phase: 0, Name: result.PhaseRun, Model: "rate"})

	for i, iv := range ivs {
		w.Interval(0, i, iv, nil, &result.PlanPoint{ElapsedS: iv.End.Sub(t0).Seconds(), Rate: float64(i)}, nil)
	}

	if !complete {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}

		return path
	}

	w.EndPhase(PhaseEnd{Phase: 0, Status: "completed"})

	if err := w.Finish(End{Status: result.StatusCompleted, DurationS: float64(len(ivs))}); err != nil {
		t.Fatal(err)
	}

	return path
}

// union merges intervals into one, as one measurement over their span.
func union(ivs []metrics.Interval) metrics.Interval {
	out := metrics.Interval{Start: ivs[0].Start, End: ivs[len(ivs)-1].End}

	for i := range ivs[0].Ops {
		s := metrics.OpStats{Name: ivs[0].Ops[i].Name, Errors: map[string]int64{}, Hist: metrics.NewHistogram()}

		for _, iv := range ivs {
			o := iv.Ops[i]
			s.Count += o.Count
			s.Docs += o.Docs

			for k, v := range o.Errors {
				s.Errors[k] += v
			}

			s.Hist.Merge(o.Hist)
		}

		out.Ops = append(out.Ops, s)
	}

	return out
}

// TestCapMergesExactly builds phases of cap-1 to 2.5 × cap intervals of two
// operations, under a cap of 16 points (the real one, Points(2) =
// MaxIntervals = 600, takes 1,500 intervals, minutes under the race
// detector, for the same merges): the results keep fewer than cap closed
// points, pairs merged each time cap close (at cap intervals the group
// becomes 2, at 2 × cap it becomes 4), and the open one; each point is
// the exact union of the adjacent intervals it stands for (counts, errors,
// documents, histogram bucket for bucket and so every percentile), with
// the plan point of the last of them; the phase's totals are the union of
// all, and the file passes result.Check.
func TestCapMergesExactly(t *testing.T) {
	t.Parallel()

	const capPts = 16

	lim := defaultLimits()
	lim.maxIntervals = capPts

	for _, tc := range []struct{ n, group, points int }{
		{capPts - 1, 1, capPts - 1}, {capPts, 2, capPts / 2}, {2*capPts - 1, 2, capPts}, {2*capPts + 1, 4, capPts/2 + 1}, {5 * capPts / 2, 4, 5 * capPts / 8},
	} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			ivs := intervals(tc.n)

			res, err := build(context.Background(), writeLogWith(t, ivs, true, lim), lim)
			if err != nil {
				t.Fatal(err)
			}

			p := res.MainPhase()
			if len(p.Intervals) != tc.points || len(p.Targets) != tc.points {
				t.Fatalf("%d intervals, %d plan points; want %d", len(p.Intervals), len(p.Targets), tc.points)
			}

			for j, got := range p.Intervals {
				lo, hi := j*tc.group, min((j+1)*tc.group, tc.n)
				want, err := result.NewInterval(union(ivs[lo:hi]), t0)
				if err != nil {
					t.Fatal(err)
				}

				if g, w := jsonText(t, got), jsonText(t, want); g != w {
					t.Fatalf("point %d (intervals %d..%d):\n%s\nwant the union\n%s", j, lo, hi-1, g, w)
				}

				if p.Targets[j].Rate != float64(hi-1) {
					t.Errorf("point %d: plan point of interval %v, want %d", j, p.Targets[j].Rate, hi-1)
				}
			}

			all := union(ivs)
			for i, op := range p.Operations {
				want, err := result.NewOperation(all.Ops[i], float64(tc.n))
				if err != nil {
					t.Fatal(err)
				}

				if g, w := jsonText(t, op), jsonText(t, want); g != w {
					t.Errorf("phase total of %s:\n%s\nwant\n%s", op.Name, g, w)
				}
			}

			if errs := res.Check(); len(errs) > 0 {
				t.Errorf("Check: %v", errs)
			}

			if res.Status != result.StatusCompleted {
				t.Errorf("status %q", res.Status)
			}
		})
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()

	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}

	return string(b)
}

// TestCutShortLog builds a log without its end whose last line was cut
// mid-write: the results are incomplete, say where the log ends, hold
// exactly the complete intervals and pass result.Check.
func TestCutShortLog(t *testing.T) {
	ivs := intervals(10)
	path := writeLog(t, ivs, false)

	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := f.WriteString(`{"type":"interval","phase":0,"index":10,"start":"2026-01-0`); err != nil {
		t.Fatal(err)
	}

	f.Close()

	res, err := Build(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}

	if res.Status != result.StatusIncomplete || !strings.Contains(res.StatusReason, "10 intervals") {
		t.Errorf("status %q, reason %q", res.Status, res.StatusReason)
	}

	all := union(ivs)
	p := res.MainPhase()

	if len(p.Intervals) != 10 || p.Operations[0].Count != all.Ops[0].Count || p.Operations[1].Count != all.Ops[1].Count {
		t.Errorf("%d intervals, counts %d %d; want 10, %d %d", len(p.Intervals), p.Operations[0].Count, p.Operations[1].Count,
			all.Ops[0].Count, all.Ops[1].Count)
	}

	if res.DurationS != 10 {
		t.Errorf("duration_s %v, want 10 (start to the last interval's end)", res.DurationS)
	}

	if errs := res.Check(); len(errs) > 0 {
		t.Errorf("Check: %v", errs)
	}
}

// TestRunLogMasksSecrets plants a password in every kind of field a run
// log holds (the target's URI and notes, the workload's source and parsed
// form, a phase's and the run's reasons) and finds it nowhere in the file,
// nor in the results built from it.
func TestRunLogMasksSecrets(t *testing.T) {
	const canary = "Canary7pw"

	path := filepath.Join(t.TempDir(), "r"+Suffix)

	w, err := Create(path, Header{
		Workload: result.Workload{
			Name:   "w",
			Source: "uri: mongodb://u:" + canary + "@h/\npassword: " + canary + "\n",
			Spec:   map[string]any{"password": canary, "targets": []any{map[string]any{"uri": "mongodb://u:" + canary + "@h/"}}},
		},
		Target:    result.Target{Kind: "uri", URI: "mongodb://u:" + canary + "@h/", Notes: []string{"connect with password=" + canary}},
		StartedAt: t0,
	})
	if err != nil {
		t.Fatal(err)
	}

	w.StartPhase(PhaseStart{Phase: 0, Name: "run", Model: "closed"})

	for i, iv := range intervals(3) {
		w.Interval(0, i, iv, nil, nil, nil)
	}

	w.EndPhase(PhaseEnd{Phase: 0, Status: "aborted", Reason: "server mongodb://u:" + canary + "@h/ unreachable"})

	if err := w.Finish(End{Status: result.StatusAborted, StatusReason: "token=" + canary}); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	if strings.Contains(string(data), canary) {
		t.Errorf("the run log holds the password:\n%s", data)
	}

	res, err := Build(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}

	if out, err := result.Marshal(res); err != nil || strings.Contains(string(out), canary) {
		t.Errorf("the results built from the run log hold the password (or failed: %v)", err)
	}
}

// TestBuildRefuses gives Build files that are not run logs it can read:
// each is refused with a message naming the file and, past the header,
// the line ("x.runlog.jsonl:3: ..."). The header is of version 1, which has
// no run ids and is still read; v2 is the same header with one.
func TestBuildRefuses(t *testing.T) {
	header := `{"type":"header","format":"mongobench-runlog","version":1,"schema_version":1,"workload":{"name":"w","file":"","spec":null},"target":{"kind":"uri","uri":"","server_version":"","backend":"","notes":null},"seed":0,"concurrency":1,"started_at":"2026-01-02T03:04:05Z"}`
	v2 := strings.Replace(strings.TrimSuffix(header, "}"), `"version":1`, `"version":2`, 1) + `,"run_id":"r1"}`
	phase := `{"type":"phase","phase":0,"name":"run","warmup_s":0}`
	phase2 := `{"type":"phase","run":"r1","phase":0,"name":"run","warmup_s":0}`
	iv := func(run string, index int, start, end string) string {
		r := ""
		if run != "" {
			r = `"run":"` + run + `",`
		}

		return fmt.Sprintf(`{"type":"interval",%s"phase":0,"index":%d,"start":"2026-01-02T03:04:%s","end":"2026-01-02T03:04:%s","operations":[]}`, r, index, start, end)
	}
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "empty file"},
		{"not JSON", "hello\n", "line 1 is not JSON"},
		{"results file", `{"schema_version":1,"phases":[]}` + "\n", "not a mongobench run log"},
		{"newer version", strings.Replace(header, `"version":1`, `"version":3`, 1) + "\n", "version 3"},
		{"unknown record", lines(header, phase, `{"type":"surprise"}`), Suffix + ":3: unknown record type"},
		{"unknown field", lines(header, `{"type":"phase","phase":0,"name":"run","warmup_s":0,"colour":"red"}`), Suffix + ":2:"},
		{"interval of no phase", lines(header, `{"type":"interval","phase":0,"index":0}`), Suffix + ":2: record of phase 0, which was not opened"},
		{"interval skipped", lines(header, phase, `{"type":"interval","phase":0,"index":1}`), Suffix + ":3: phase \"run\": interval 1 where 0 was expected"},
		{"gap", lines(header, phase, iv("", 0, "05Z", "06Z"), iv("", 1, "13Z", "14Z")), Suffix + ":4: phase \"run\": interval 1 starts 7.0s after interval 0 ended"},
		{"overlap", lines(header, phase, iv("", 0, "05Z", "06Z"), iv("", 1, "05.750Z", "06.750Z")), Suffix + ":4: phase \"run\": interval 1 starts 0.250s before interval 0 ended"},
		{"backwards", lines(header, phase, iv("", 0, "06Z", "05Z")), Suffix + ":3: phase \"run\": interval 0 ends 1.0s before it starts"},
		{"v2 without run id", strings.Replace(v2, `,"run_id":"r1"`, "", 1) + "\n", "version 2 without a run_id"},
		{"v1 with run id", strings.Replace(v2, `"version":2`, `"version":1`, 1) + "\n", "version 1 with a run_id"},
		{"record of another run", lines(v2, phase2, iv("r1", 0, "05Z", "06Z"), iv("r2", 1, "06Z", "07Z")), Suffix + ":4: interval 1 belongs to run r2, not r1"},
		{"record without run id", lines(v2, phase), Suffix + ":2: phase 0 has no run id, but the header (line 1) is of run r1"},
		{"run id under an old header", lines(header, phase2), Suffix + ":2: phase 0 belongs to run r1, but the header (line 1) is of a run log without run ids"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x"+Suffix)
			if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}

			_, err := Build(context.Background(), path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want one naming %s and saying %q", err, path, tc.want)
			}
		})
	}
}

// TestWriterResultIsBuild writes logs of a blocks phase with service
// times (two blocks over five intervals) and of a long rate phase (56
// intervals under a cap of 8 points, so its points are merged three times
// and the writer logs spans of up to 8 intervals' histograms, as a phase of
// thousands of intervals does under the real cap; 56 so that the last span
// is closed before the end, Build leaving out an open one), and finds the results
// the writer kept as it wrote (Writer.Result, what a run writes) identical
// to those Build reads from the file (what finish writes), both before the
// log's end (status incomplete) and after it.
func TestWriterResultIsBuild(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "r"+Suffix)

	// The real cap (600 points) takes 1,200 intervals to merge twice, minutes
	// under the race detector; 8 runs the same merges on 56.
	lim := defaultLimits()
	lim.maxIntervals = 8

	w, err := create(path, Header{
		MongobenchVersion: "test", Workload: result.Workload{Name: "w"},
		Target: result.Target{Kind: "uri", URI: "mongodb://u:pw@127.0.0.1/"}, StartedAt: t0, Concurrency: 2,
	}, lim)
	if err != nil {
		t.Fatal(err)
	}

	ivs := intervals(61)

	w.StartPhase(PhaseStart{Phase: 0, Name: "grow", Model: "blocks"})

	for i, iv := range ivs[:5] {
		svc := union(ivs[i : i+1])
		w.Interval(0, i, iv, &svc, nil, nil)

		if i == 2 || i == 4 {
			first := 0
			if i == 4 {
				first = 3
			}

			w.Block(BlockRecord{
				Phase: 0, Index: i / 3, Start: ivs[first].Start, End: iv.End, Complete: true,
				FirstInterval: first, EndInterval: i + 1,
			})
		}
	}

	w.EndPhase(PhaseEnd{Phase: 0, Status: "completed"})
	w.StartPhase(PhaseStart{Phase: 1, Name: result.PhaseRun, Model: "rate"})

	for i, iv := range ivs[5:] {
		w.Interval(1, i, iv, nil, &result.PlanPoint{ElapsedS: float64(i), Rate: float64(i)}, nil)
	}

	same := func(when string) {
		t.Helper()

		kept, err := w.Result()
		if err != nil {
			t.Fatal(err)
		}

		built, err := build(context.Background(), path, lim)
		if err != nil {
			t.Fatal(err)
		}

		if k, b := jsonText(t, kept), jsonText(t, built); k != b {
			t.Fatalf("%s: the writer's results differ from the log's:\n%.2000s\nBuild:\n%.2000s", when, k, b)
		}

		if errs := kept.Check(); len(errs) > 0 {
			t.Errorf("%s: Check: %v", when, errs)
		}

		if got := len(kept.Phases[0].Blocks); got != 2 {
			t.Errorf("%s: %d blocks, want 2", when, got)
		}

		// Merged three times (group 8): 7 points of 8 intervals.
		pts := kept.Phases[1].Intervals
		if len(pts) != 7 || pts[0].End.Sub(pts[0].Start) != 8*time.Second {
			t.Errorf("%s: %d points, the first of %v; want 7, of 8s", when, len(pts), pts[0].End.Sub(pts[0].Start))
		}
	}

	same("before the end")

	w.EndPhase(PhaseEnd{Phase: 1, Status: "completed"})

	if err := w.Finish(End{Status: result.StatusCompleted, DurationS: float64(len(ivs))}); err != nil {
		t.Fatal(err)
	}

	same("after the end")
}

// TestManyOperationsBounded builds a phase of many operations over 25 and
// 60 intervals (as a run does, from the measurements a Writer is given):
// however many intervals, the results keep at most Points(ops) = 12
// points (at most PointCells operation entries) of about PointBytes, and
// the whole results file
// is no larger than the bound its representation gives: one entry per
// operation per point plus the phase's totals, each no larger than the
// largest entry in it, and a few KiB of the rest.
//
// The real bounds give 12 points at 1,000 operations, whose histograms take
// minutes to encode under the race detector; the test scales the bounds
// down twentyfold (50 operations, 600 cells, 12 points) and halves the size
// per operation (4 KiB above a least size of 64 KiB), so that the points'
// size, not only their number, makes them merge: the test fails if the size
// rule is left out.
func TestManyOperationsBounded(t *testing.T) {
	t.Parallel()

	const ops = 50

	lim := limits{maxIntervals: MaxIntervals, pointCells: PointCells / 20, minBytes: 64 << 10, opBytes: 4 << 10}
	if lim.points(ops)*ops > lim.pointCells || lim.points(ops) != 12 || lim.bytes(ops) != ops*lim.opBytes {
		t.Fatalf("points(%d) = %d, bytes %d", ops, lim.points(ops), lim.bytes(ops))
	}

	if Points(1000) != 12 || PointBytes(1000) != 1000*8<<10 {
		t.Fatalf("Points(1000) = %d, PointBytes(1000) = %d; the scaled bounds above no longer stand for the real ones", Points(1000), PointBytes(1000))
	}

	header := `{"type":"header","format":"mongobench-runlog","version":1,"schema_version":1,"workload":{"name":"w","file":"","spec":null},"target":{"kind":"uri","uri":"","server_version":"","backend":"","notes":null},"seed":0,"concurrency":1,"started_at":"2026-01-02T03:04:05Z"}`

	for _, n := range []int{25, 60} {
		b := newBuilder(lim)
		if err := b.record(1, typeHeader, []byte(header)); err != nil {
			t.Fatal(err)
		}

		if err := b.record(2, typePhase, []byte(`{"type":"phase","phase":0,"name":"run","warmup_s":0}`)); err != nil {
			t.Fatal(err)
		}

		rng := rand.New(rand.NewPCG(7, uint64(n)))

		for i := range n {
			iv := metrics.Interval{Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second)}

			for k := range ops {
				s := metrics.OpStats{Name: fmt.Sprintf("op%d", k), Errors: map[string]int64{}, Hist: metrics.NewHistogram()}
				for range 1 + rng.IntN(20) {
					_ = s.Hist.RecordValue(int64(100 + rng.ExpFloat64()*2000))
					s.Count++
				}

				iv.Ops = append(iv.Ops, s)
			}

			if err := b.live(0, i, iv, nil, nil, nil); err != nil {
				t.Fatal(err)
			}
		}

		res, err := b.Result()
		if err != nil {
			t.Fatal(err)
		}

		p := res.MainPhase()
		if len(p.Intervals) > lim.points(ops) || len(p.Intervals) < 2 {
			t.Errorf("%d intervals: %d points, want 2 to %d", n, len(p.Intervals), lim.points(ops))
		}

		// At most one closed point past the size bound (an odd number is not
		// merged), and the open one.
		size, largestPoint := 0, 0
		for _, pt := range p.Intervals {
			size += pointSize(pt)
			largestPoint = max(largestPoint, pointSize(pt))
		}

		if size > lim.bytes(ops)+2*largestPoint {
			t.Errorf("%d intervals: points of %d bytes, above %d and two points of %d", n, size, lim.bytes(ops), largestPoint)
		}

		data, err := result.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}

		largest := 0
		for _, op := range p.Operations {
			largest = max(largest, len(jsonText(t, op)))
		}

		for _, pt := range p.Intervals {
			for _, op := range pt.Operations {
				largest = max(largest, len(jsonText(t, op)))
			}
		}

		// Marshal indents: each entry's fields gain a line and an
		// indentation of at most 16 spaces; 20 fields at most.
		entry := largest + 20*17
		bound := (len(p.Intervals)+1)*ops*entry + 8<<10

		if len(data) > bound {
			t.Errorf("%d intervals: results of %d bytes, above the bound %d", n, len(data), bound)
		}
	}
}

// TestWideHistogramsBoundedBySize logs 50 intervals of two operations
// whose histograms are wide (12,000 latencies spread evenly over the
// magnitudes of 1 µs – 1 s, most in buckets of their own), under a size
// bound of a tenth of PointBytes(2): 50 points would pass it, so pairs are
// merged long before Points(2) = 600 is reached, and the points stay within
// the bound and two points. (At the real bound this takes 500 intervals,
// minutes of histogram encoding under the race detector; the ratio of
// points to bound, and so the merging, is the same.)
func TestWideHistogramsBoundedBySize(t *testing.T) {
	t.Parallel()

	lim := defaultLimits()
	lim.minBytes = PointBytes(2) / 10

	// Sixteen distinct wide histograms per operation, taken in turn by the
	// 50 intervals: as wide as 50 distinct ones, for a third of the
	// recording.
	rng := rand.New(rand.NewPCG(3, 4))

	var wide [2][16]*metrics.Histogram

	for k := range wide {
		for j := range wide[k] {
			h := metrics.NewHistogram()
			for range 12000 {
				_ = h.RecordValue(int64(math.Exp(rng.Float64() * math.Log(1e6))))
			}

			wide[k][j] = h
		}
	}

	ivs := make([]metrics.Interval, 50)

	for i := range ivs {
		iv := metrics.Interval{Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second)}

		for k, name := range []string{"a", "b"} {
			h := metrics.NewHistogram()
			h.Merge(wide[k][i%len(wide[k])])

			iv.Ops = append(iv.Ops, metrics.OpStats{Name: name, Errors: map[string]int64{}, Hist: h, Count: 12000})
		}

		ivs[i] = iv
	}

	res, err := build(context.Background(), writeLogWith(t, ivs, true, lim), lim)
	if err != nil {
		t.Fatal(err)
	}

	p := res.MainPhase()
	size, largest := 0, 0

	for _, pt := range p.Intervals {
		size += pointSize(pt)
		largest = max(largest, pointSize(pt))
	}

	if len(p.Intervals) >= len(ivs) || size > lim.bytes(2)+2*largest {
		t.Errorf("%d points of %d bytes (largest %d) for %d intervals; want them merged within %d and two points",
			len(p.Intervals), size, largest, len(ivs), lim.bytes(2))
	}

	if errs := res.Check(); len(errs) > 0 {
		t.Errorf("Check: %v", errs[0])
	}
}

// TestVersion1LogsStayReadable rewrites a log as version 1 wrote it (no
// run_id in the header, no run in the records) and builds the same results
// from it as from the log itself: old logs are read, with their intervals
// still checked for continuity but no run ids to compare.
func TestVersion1LogsStayReadable(t *testing.T) {
	path := writeLog(t, intervals(20), true)

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	var h Header
	if err := json.Unmarshal(data[:strings.IndexByte(string(data), '\n')], &h); err != nil || h.RunID == "" || h.Version != Version {
		t.Fatalf("header version %d, run id %q (%v)", h.Version, h.RunID, err)
	}

	old := strings.NewReplacer(`,"run_id":"`+h.RunID+`"`, "", `"run":"`+h.RunID+`",`, "",
		fmt.Sprintf(`"version":%d`, Version), `"version":1`).Replace(string(data))
	if strings.Contains(old, h.RunID) || strings.Count(old, `"version":1`) != 1 {
		t.Fatalf("the rewrite left the run id or no version 1:\n%s", old)
	}

	oldPath := filepath.Join(t.TempDir(), "old"+Suffix)
	if err := os.WriteFile(oldPath, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}

	want, err := Build(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}

	got, err := Build(context.Background(), oldPath)
	if err != nil {
		t.Fatalf("a version 1 log is refused: %v", err)
	}

	if g, w := jsonText(t, got), jsonText(t, want); g != w {
		t.Errorf("results of the version 1 log:\n%s\nwant\n%s", g, w)
	}
}

// TestWriterChecksContinuity gives a Writer intervals that a log could
// only hold if it were spliced (one starting 7 s after the previous one
// ended, one ending before it starts): the results it kept as it wrote are
// refused with the message Build gives for the same lines of its log, so
// that a run's own results are checked as finish checks them.
func TestWriterChecksContinuity(t *testing.T) {
	ivs := intervals(3)
	gap := ivs[2]
	gap.Start, gap.End = ivs[1].End.Add(7*time.Second), ivs[1].End.Add(8*time.Second)
	backwards := ivs[1]
	backwards.Start, backwards.End = ivs[1].End, ivs[1].Start

	for _, tc := range []struct {
		name string
		ivs  []metrics.Interval
		want string
	}{
		{"gap", []metrics.Interval{ivs[0], ivs[1], gap}, Suffix + ":5: phase \"run\": interval 2 starts 7.0s after interval 1 ended"},
		{"backwards", []metrics.Interval{ivs[0], backwards}, Suffix + ":4: phase \"run\": interval 1 ends 1.0s before it starts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "w"+Suffix)

			w, err := Create(path, Header{MongobenchVersion: "test", Workload: result.Workload{Name: "w"}, StartedAt: t0, Concurrency: 1})
			if err != nil {
				t.Fatal(err)
			}

			w.StartPhase(PhaseStart{Phase: 0, Name: result.PhaseRun, Model: "closed"})

			for i, iv := range tc.ivs {
				w.Interval(0, i, iv, nil, nil, nil)
			}

			_, kept := w.Result()

			if err := w.Close(); err != nil {
				t.Fatal(err)
			}

			_, built := Build(context.Background(), path)

			for what, err := range map[string]error{"Writer.Result": kept, "Build": built} {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
					t.Errorf("%s: error %v, want one naming %s and saying %q", what, err, path, tc.want)
				}
			}
		})
	}
}

// manyOps returns n contiguous one-second intervals of k operations, each
// with a few pseudo-random latencies.
func manyOps(n, k int) []metrics.Interval {
	rng := rand.New(rand.NewPCG(7, uint64(n*k)))
	out := make([]metrics.Interval, n)

	for i := range out {
		iv := metrics.Interval{Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second)}

		for j := range k {
			s := metrics.OpStats{Name: fmt.Sprintf("op%d", j), Errors: map[string]int64{}, Hist: metrics.NewHistogram()}
			for range rng.IntN(5) / 2 {
				_ = s.Hist.RecordValue(int64(50 + rng.ExpFloat64()*800))
				s.Count++
			}

			iv.Ops = append(iv.Ops, s)
		}

		out[i] = iv
	}

	return out
}

// TestSpansShrinkTheLog writes a phase long enough that its results points
// span several intervals (many operations: Points(ops) = 12): the log then
// carries one histogram per span of intervals instead of one per interval,
// finish rebuilds exactly the results the writer kept, a log killed before
// its last span's histograms loses only that span, and a span whose
// closing record claims another width is refused with its line.
func TestSpansShrinkTheLog(t *testing.T) {
	t.Parallel()

	// The real bounds give 12 points at 1,000 operations, minutes of
	// histogram encoding under the race detector; bounds scaled down
	// twentyfold give the same 12 points, spans and size rule at 50.
	const n, k = 61, 50

	lim := limits{maxIntervals: MaxIntervals, pointCells: PointCells / 20, minBytes: (4 << 20) / 20, opBytes: 8 << 10}
	if lim.points(k) != Points(1000) || lim.bytes(k)*20 != PointBytes(1000) {
		t.Fatalf("scaled bounds: %d points of %d bytes, against the real %d of %d at 1,000 operations",
			lim.points(k), lim.bytes(k), Points(1000), PointBytes(1000))
	}

	ivs := manyOps(n, k)
	path := filepath.Join(t.TempDir(), "r"+Suffix)

	w, err := create(path, Header{MongobenchVersion: "test", Workload: result.Workload{Name: "w"}, StartedAt: t0, Concurrency: 1}, lim)
	if err != nil {
		t.Fatal(err)
	}

	w.StartPhase(PhaseStart{Phase: 0, Name: result.PhaseRun})

	for i, iv := range ivs {
		w.Interval(0, i, iv, nil, nil, nil)
	}

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	kept, err := w.Result()
	if err != nil {
		t.Fatal(err)
	}

	built, err := build(context.Background(), path, lim)
	if err != nil {
		t.Fatal(err)
	}

	if a, b := jsonText(t, kept), jsonText(t, built); a != b {
		t.Fatalf("the writer's results differ from the log's:\n%.1500s\nBuild:\n%.1500s", a, b)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	withHists, deferred := 0, 0

	for _, l := range lines {
		switch {
		case strings.Contains(l, `"deferred":true`):
			deferred++
		case strings.Contains(l, `"type":"interval"`):
			withHists++
		}
	}

	if withHists+deferred != n || withHists > n/2 {
		t.Errorf("%d intervals with histograms and %d deferred, want %d in all and at most %d with histograms", withHists, deferred, n, n/2)
	}

	last := lines[len(lines)-1]

	var hr histogramsRecord
	if err := json.Unmarshal([]byte(last), &hr); err != nil || hr.Type != typeHists || hr.Last != n-1 {
		t.Fatalf("last line is not the histograms of the open span (%v): %.200s", err, last)
	}

	// Killed before the last span's histograms: the intervals before the
	// span are all there, exactly.
	cut := filepath.Join(t.TempDir(), "cut"+Suffix)
	if err := os.WriteFile(cut, []byte(strings.Join(lines[:len(lines)-1], "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	res, err := build(context.Background(), cut, lim)
	if err != nil {
		t.Fatalf("a log cut before its last span's histograms: %v", err)
	}

	want := union(ivs[:hr.First])
	if got := res.Phases[0].Operations[5].Count; res.Status != result.StatusIncomplete || got != want.Ops[5].Count {
		t.Errorf("cut log: status %s, op5 count %d, want incomplete and %d (intervals before %d)", res.Status, got, want.Ops[5].Count, hr.First)
	}

	// A span's closing record edited to claim another width is refused
	// at its line.
	for i, l := range lines {
		if !strings.Contains(l, `"group":`) || strings.Contains(l, `"group":2,`) {
			continue
		}

		bad := slices.Clone(lines)
		bad[i] = strings.Replace(l, `"group":`, `"group":2`, 1)
		badPath := filepath.Join(t.TempDir(), "bad"+Suffix)

		if err := os.WriteFile(badPath, []byte(strings.Join(bad, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}

		if _, err := build(context.Background(), badPath, lim); err == nil || !strings.Contains(err.Error(), fmt.Sprintf(":%d: ", i+1)) {
			t.Errorf("a span's group edited to 2 followed by its width: %v, want an error naming line %d", err, i+1)
		}

		break
	}
}
