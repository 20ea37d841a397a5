package merge

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// shardResult builds shard index of count: one phase "run" starting at
// t0+skew with the given interval lengths (seconds), each interval holding
// latencies base+1..base+n µs of operation "get" for n = 10×(index+1).
func shardResult(t *testing.T, index, count int, skew time.Duration, lengths ...float64) *result.Result {
	t.Helper()

	var ivs []metrics.Interval

	start := t0.Add(skew)

	for k, l := range lengths {
		end := start.Add(time.Duration(l * float64(time.Second)))
		h := metrics.NewHistogram()
		n := 10 * (index + 1)

		for v := range n {
			if err := h.RecordValue(int64(100*index + 10*k + v + 1)); err != nil {
				t.Fatal(err)
			}
		}

		ivs = append(ivs, metrics.Interval{Start: start, End: end, Ops: []metrics.OpStats{
			{Name: "get", Count: int64(n), Docs: int64(n), Errors: map[string]int64{"timeout": int64(index)}, Hist: h},
		}})
		start = end
	}

	p, err := result.NewPhase("run", 0, func(yield func(metrics.Interval, error) bool) {
		for _, iv := range ivs {
			if !yield(iv, nil) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}

	r := &result.Result{
		SchemaVersion: result.SchemaVersion,
		Workload:      result.Workload{Name: "w", Spec: map[string]any{"run": map[string]any{"interval": "1s"}}},
		Target:        result.Target{Kind: "uri", URI: "mongodb://h/"},
		StartedAt:     t0.Add(-time.Second),
		DurationS:     5,
		Concurrency:   index + 1,
		Status:        result.StatusCompleted,
		Shard:         &result.Shard{Index: index, Count: count, StartAt: t0, StartAtMode: "time", SeedScheme: result.SeedScheme, SpecSHA256: "abc"},
	}
	r.AddPhase(p)

	if errs := r.Check(); len(errs) > 0 {
		t.Fatalf("test shard is inconsistent: %v", errs)
	}

	return r
}

func inputs(rs ...*result.Result) []Input {
	in := make([]Input, len(rs))
	for i, r := range rs {
		in[i] = Input{Name: fmt.Sprintf("s%d.json", i), Result: r}
	}

	return in
}

// TestMergeGrid merges shards whose ticks came late by different amounts
// and whose last intervals were cut short, and checks the grid and sums.
func TestMergeGrid(t *testing.T) {
	a := shardResult(t, 0, 3, 0, 1.002, 0.999, 1.001, 0.4)
	b := shardResult(t, 1, 3, 0, 1.010, 0.995, 0.998, 0.2)
	c := shardResult(t, 2, 3, 0, 1.000, 1.000, 1.000)

	m, err := Results(inputs(b, c, a)) // any order
	if err != nil {
		t.Fatal(err)
	}

	if errs := m.Check(); len(errs) > 0 {
		t.Fatalf("merged result is inconsistent: %v", errs)
	}

	p := m.MainPhase()
	if len(p.Intervals) != 4 {
		t.Fatalf("%d merged intervals, want 4 (three full, one short)", len(p.Intervals))
	}

	for k, iv := range p.Intervals[:3] {
		if !iv.Start.Equal(t0.Add(time.Duration(k)*time.Second)) || !iv.End.Equal(t0.Add(time.Duration(k+1)*time.Second)) {
			t.Errorf("interval %d: %s..%s, not on the 1s grid", k, iv.Start, iv.End)
		}

		if got := iv.Operations[0].Count; got != 10+20+30 {
			t.Errorf("interval %d counts %d, want 60", k, got)
		}
	}

	last := p.Intervals[3]
	if got := last.Operations[0].Count; got != 10+20 || !last.End.Equal(a.MainPhase().Intervals[3].End) {
		t.Errorf("last interval counts %d until %s; want 30 until shard 0's end", got, last.End)
	}

	o := p.Operations[0]
	if o.Count != 4*10+4*20+3*30 || o.Errors["timeout"] != 4*1+3*2 {
		t.Errorf("phase total %d ok, %v errors", o.Count, o.Errors)
	}

	union := metrics.NewHistogram()
	for _, r := range []*result.Result{a, b, c} {
		h, _ := metrics.DecodeHistogram(r.MainPhase().Operations[0].Histogram)
		union.Merge(h)
	}

	if s := metrics.Summarize(union); o.LatencyUS.P99 != s.P99 || o.LatencyUS.Max != s.Max || o.LatencyUS.P50 != s.P50 {
		t.Errorf("merged latencies %+v, union %+v", o.LatencyUS, s)
	}

	if m.Concurrency != 6 || m.Merged.Count != 3 || len(m.Merged.Sources) != 3 || m.Merged.Sources[0].File != "s2.json" {
		t.Errorf("merged record: concurrency %d, %+v", m.Concurrency, m.Merged)
	}
}

// TestMergeRefuses checks that inputs of different runs are refused with one
// line naming the file.
func TestMergeRefuses(t *testing.T) {
	mk := func(i int, edit func(*result.Result)) *result.Result {
		r := shardResult(t, i, 3, 0, 1, 1)
		if edit != nil {
			edit(r)
		}

		return r
	}

	cases := []struct {
		name   string
		in     []*result.Result
		file   string
		phrase string
	}{
		{"not a shard", []*result.Result{mk(0, nil), mk(1, func(r *result.Result) { r.Shard = nil }), mk(2, nil)}, "s1.json", "not a shard"},
		{"other workload", []*result.Result{mk(0, nil), mk(1, nil), mk(2, func(r *result.Result) { r.Shard.SpecSHA256 = "def" })}, "s2.json", "different workload"},
		{"seed scheme", []*result.Result{mk(0, nil), mk(1, func(r *result.Result) { r.Shard.SeedScheme = "other" }), mk(2, nil)}, "s1.json", "seed scheme"},
		{"shard count", []*result.Result{mk(0, nil), mk(1, func(r *result.Result) { r.Shard.Count = 4 }), mk(2, nil)}, "s1.json", "4-shard run"},
		{"start", []*result.Result{mk(0, nil), mk(1, nil), mk(2, func(r *result.Result) { r.Shard.StartAt = t0.Add(time.Minute) })}, "s2.json", "started at"},
		{"duplicate", []*result.Result{mk(0, nil), mk(1, nil), mk(1, nil)}, "s2.json", "given twice (also s1.json)"},
		{"missing", []*result.Result{mk(0, nil), mk(2, nil)}, "s0.json", "shard 1 of 3 missing"},
		{"merged", []*result.Result{mk(0, func(r *result.Result) { r.Merged = &result.Merged{} }), mk(1, nil), mk(2, nil)}, "s0.json", "already a merged"},
		{"matrix", []*result.Result{mk(0, nil), mk(1, func(r *result.Result) { r.Matrix = &result.Matrix{} }), mk(2, nil)}, "s1.json", "matrix"},
	}

	for _, c := range cases {
		_, err := Results(inputs(c.in...))

		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: error %v, want an InputError", c.name, err)
			continue
		}

		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, c.file) || !strings.Contains(msg, c.phrase) {
			t.Errorf("%s: %q, want one line naming %s and saying %q", c.name, msg, c.file, c.phrase)
		}
	}

	if _, err := Results(nil); err == nil {
		t.Error("merging nothing succeeded")
	}
}

// TestMergeShardWithoutIntervals merges a shard that stopped before it
// measured anything: the others' grid is kept, the sums are theirs.
func TestMergeShardWithoutIntervals(t *testing.T) {
	a := shardResult(t, 0, 2, 0, 1, 1)
	b := shardResult(t, 1, 2, 0)
	b.Status, b.StatusReason = result.StatusAborted, "the server is unreachable"

	m, err := Results(inputs(a, b))
	if err != nil {
		t.Fatal(err)
	}

	if errs := m.Check(); len(errs) > 0 {
		t.Fatalf("merged result is inconsistent: %v", errs)
	}

	p := m.MainPhase()
	if !p.StartedAt.Equal(t0) || len(p.Intervals) != 2 || p.Operations[0].Count != 20 {
		t.Errorf("merged phase starts %s with %d intervals and %d gets; want t0, 2, 20", p.StartedAt, len(p.Intervals), p.Operations[0].Count)
	}

	if m.Status != result.StatusAborted || !strings.Contains(m.StatusReason, "shard 1 (s1.json): aborted: the server is unreachable") {
		t.Errorf("merged status %q, reason %q", m.Status, m.StatusReason)
	}
}

// TestMergeCappedPoints merges shards of a phase longer than a results file
// keeps interval by interval, whose points therefore span 2 intervals: the
// merged grid steps by 2 s too, with no empty cell between the points (on a
// 1 s grid every other cell would be empty and the rest doubled).
func TestMergeCappedPoints(t *testing.T) {
	a := shardResult(t, 0, 2, 0, 2, 2, 2, 1)
	b := shardResult(t, 1, 2, 0, 2, 2, 2, 1.9)

	m, err := Results(inputs(a, b))
	if err != nil {
		t.Fatal(err)
	}

	if errs := m.Check(); len(errs) > 0 {
		t.Fatalf("merged result is inconsistent: %v", errs)
	}

	p := m.MainPhase()
	if len(p.Intervals) != 4 {
		t.Fatalf("%d merged intervals, want 4 (three of 2 s, one short)", len(p.Intervals))
	}

	for k, iv := range p.Intervals[:3] {
		if !iv.Start.Equal(t0.Add(time.Duration(2*k)*time.Second)) || iv.End.Sub(iv.Start) != 2*time.Second {
			t.Errorf("interval %d: %s..%s, not on the 2 s grid", k, iv.Start, iv.End)
		}

		if got := iv.Operations[0].Count; got != 10+20 {
			t.Errorf("interval %d counts %d, want both shards' 30", k, got)
		}
	}
}
