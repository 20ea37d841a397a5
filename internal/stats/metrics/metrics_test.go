package metrics

import (
	"maps"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// record is one Handle.Record call.
type record struct {
	op      int
	latency time.Duration
	docs    int64
	kind    string
}

// want is the expected content of one operation in one interval.
type want struct {
	count, docs, clamped int64
	errors               map[string]int64
	max                  float64 // expected Summarize(...).Max, if count > 0
}

func TestRecordAndTick(t *testing.T) {
	ops := []string{"insert", "find"}
	tests := []struct {
		name    string
		records [][]record // per tick
		want    [][]want   // per tick, per op
	}{
		{
			name:    "no records gives zero-count intervals",
			records: [][]record{nil, nil},
			want: [][]want{
				{{}, {}},
				{{}, {}},
			},
		},
		{
			name: "successes and failures",
			records: [][]record{{
				{0, 100 * time.Microsecond, 1, ""},
				{0, 300 * time.Microsecond, 1, ""},
				{0, 5 * time.Second, 0, "timeout"},
				{0, time.Millisecond, 0, "duplicate_key"},
				{0, time.Millisecond, 0, "duplicate_key"},
				{1, 2 * time.Millisecond, 10, ""},
			}},
			want: [][]want{{
				{count: 2, docs: 2, errors: map[string]int64{"timeout": 1, "duplicate_key": 2}, max: 300},
				{count: 1, docs: 10, max: 2000},
			}},
		},
		{
			name: "failed operations still count documents",
			records: [][]record{{
				{0, time.Millisecond, 7, "server_11000"},
			}},
			want: [][]want{{
				{docs: 7, errors: map[string]int64{"server_11000": 1}},
				{},
			}},
		},
		{
			name: "out of range latencies are clamped not dropped",
			records: [][]record{{
				{1, 0, 0, ""},
				{1, 100 * time.Nanosecond, 0, ""},
				{1, -time.Second, 0, ""},
				{1, 2 * time.Hour, 0, ""},
				{1, time.Hour, 0, ""},
			}},
			want: [][]want{{
				{},
				{count: 5, clamped: 4, max: float64(time.Hour / time.Microsecond)},
			}},
		},
		{
			name: "out of range op index is ignored",
			records: [][]record{{
				{-1, time.Millisecond, 1, ""},
				{2, time.Millisecond, 1, ""},
			}},
			want: [][]want{{{}, {}}},
		},
		{
			name: "each tick sees only its own records",
			records: [][]record{
				{{0, 10 * time.Microsecond, 1, ""}},
				{},
				{{0, 20 * time.Microsecond, 1, ""}, {0, 0, 0, "network"}},
			},
			want: [][]want{
				{{count: 1, docs: 1, max: 10}, {}},
				{{}, {}},
				{{count: 1, docs: 1, errors: map[string]int64{"network": 1}, max: 20}, {}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry(ops)
			r.Reset(t0)
			// Two handles, records alternate between them.
			hs := []*Handle{r.NewHandle(), r.NewHandle()}
			var totals [2]want
			for tick, recs := range tt.records {
				for i, rec := range recs {
					hs[i%len(hs)].Record(rec.op, rec.latency, rec.docs, rec.kind)
				}
				now := t0.Add(time.Duration(tick+1) * time.Second)
				iv := r.Tick(now)
				if want := t0.Add(time.Duration(tick) * time.Second); !iv.Start.Equal(want) || !iv.End.Equal(now) {
					t.Errorf("tick %d: interval [%v, %v], want [%v, %v]", tick, iv.Start, iv.End, want, now)
				}
				checkOps(t, iv.Ops, ops, tt.want[tick])
				for i, w := range tt.want[tick] {
					totals[i].count += w.count
					totals[i].docs += w.docs
					totals[i].clamped += w.clamped
					for k, v := range w.errors {
						if totals[i].errors == nil {
							totals[i].errors = map[string]int64{}
						}
						totals[i].errors[k] += v
					}
					totals[i].max = max(totals[i].max, w.max)
				}
			}
			checkOps(t, r.Totals(), ops, totals[:])
			checkInvariants(t, r)
		})
	}
}

// checkOps compares stats with expectations.
func checkOps(t *testing.T, got []OpStats, names []string, want []want) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d ops, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Name != names[i] {
			t.Errorf("op %d: name %q, want %q", i, g.Name, names[i])
		}
		if g.Count != w.count || g.Docs != w.docs || g.Clamped != w.clamped {
			t.Errorf("op %s: count/docs/clamped = %d/%d/%d, want %d/%d/%d",
				g.Name, g.Count, g.Docs, g.Clamped, w.count, w.docs, w.clamped)
		}
		if g.Errors == nil {
			t.Errorf("op %s: Errors is nil", g.Name)
		}
		if !maps.Equal(g.Errors, w.errors) && (len(g.Errors) != 0 || len(w.errors) != 0) {
			t.Errorf("op %s: errors %v, want %v", g.Name, g.Errors, w.errors)
		}
		if g.Hist == nil {
			t.Fatalf("op %s: Hist is nil", g.Name)
		}
		if g.Hist.TotalCount() != g.Count {
			t.Errorf("op %s: histogram count %d, Count %d", g.Name, g.Hist.TotalCount(), g.Count)
		}
		if g.Count > 0 {
			// Values are exact up to 3 significant digits.
			if m := Summarize(g.Hist).Max; m < w.max || m > w.max*1.001 {
				t.Errorf("op %s: max %v, want about %v", g.Name, m, w.max)
			}
		}
	}
}

// checkInvariants verifies that the intervals add up to the totals, both in
// counters and in histograms, and that percentiles are monotone everywhere.
func checkInvariants(t *testing.T, r *Registry) {
	t.Helper()
	totals := r.Totals()
	sumCount := make([]int64, len(totals))
	sumDocs := make([]int64, len(totals))
	sumErrs := make([]map[string]int64, len(totals))
	merged := make([]*Histogram, len(totals))
	for i := range totals {
		sumErrs[i] = map[string]int64{}
		merged[i] = NewHistogram()
	}
	var prevEnd time.Time
	n := 0
	for iv, err := range r.Intervals() {
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 && !iv.Start.Equal(prevEnd) {
			t.Errorf("interval %d starts at %v, previous ended at %v", n, iv.Start, prevEnd)
		}
		prevEnd = iv.End
		for i, s := range iv.Ops {
			sumCount[i] += s.Count
			sumDocs[i] += s.Docs
			for k, v := range s.Errors {
				sumErrs[i][k] += v
			}
			if dropped := merged[i].Merge(s.Hist); dropped != 0 {
				t.Errorf("merge dropped %d values", dropped)
			}
			checkMonotone(t, Summarize(s.Hist))
		}
		n++
	}
	if n != r.NumIntervals() {
		t.Errorf("iterated %d intervals, NumIntervals says %d", n, r.NumIntervals())
	}
	for i, tot := range totals {
		if sumCount[i] != tot.Count || sumDocs[i] != tot.Docs {
			t.Errorf("op %s: intervals sum to count %d docs %d, totals say %d %d",
				tot.Name, sumCount[i], sumDocs[i], tot.Count, tot.Docs)
		}
		if !maps.Equal(sumErrs[i], tot.Errors) {
			t.Errorf("op %s: interval errors %v, totals %v", tot.Name, sumErrs[i], tot.Errors)
		}
		if tot.Hist.TotalCount() != tot.Count {
			t.Errorf("op %s: total histogram count %d, Count %d", tot.Name, tot.Hist.TotalCount(), tot.Count)
		}
		if !merged[i].Equals(tot.Hist) {
			t.Errorf("op %s: merged interval histograms differ from the total histogram", tot.Name)
		}
		checkMonotone(t, Summarize(tot.Hist))
	}
}

func checkMonotone(t *testing.T, l Latency) {
	t.Helper()
	seq := []float64{l.P50, l.P90, l.P95, l.P99, l.P999, l.Max}
	for i := 1; i < len(seq); i++ {
		if seq[i] < seq[i-1] {
			t.Errorf("percentiles not monotone: %+v", l)
			return
		}
	}
	if l.Mean > l.Max {
		t.Errorf("mean above max: %+v", l)
	}
}

func TestMicros(t *testing.T) {
	tests := []struct {
		in      time.Duration
		want    int64
		clamped bool
	}{
		{-time.Millisecond, 1, true},
		{0, 1, true},
		{499 * time.Nanosecond, 1, true},
		{500 * time.Nanosecond, 1, false},
		{time.Microsecond, 1, false},
		{1499 * time.Nanosecond, 1, false},
		{1500 * time.Nanosecond, 2, false},
		{250 * time.Millisecond, 250000, false},
		{time.Hour, 3600000000, false},
		{time.Hour + time.Microsecond, 3600000000, true},
		{time.Duration(1<<63 - 1), 3600000000, true},
	}
	for _, tt := range tests {
		t.Run(tt.in.String(), func(t *testing.T) {
			got, clamped := micros(tt.in)
			if got != tt.want || clamped != tt.clamped {
				t.Errorf("micros(%v) = %d, %v; want %d, %v", tt.in, got, clamped, tt.want, tt.clamped)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name   string
		values []int64 // microseconds
		want   Latency
	}{
		{name: "empty", values: nil, want: Latency{}},
		{name: "single value", values: []int64{1000}, want: Latency{Mean: 1000, P50: 1000, P90: 1000, P95: 1000, P99: 1000, P999: 1000, Max: 1000}},
		{
			name:   "1 to 1000",
			values: seq(1, 1000),
			want:   Latency{Mean: 500.5, P50: 500, P90: 900, P95: 950, P99: 990, P999: 999, Max: 1000},
		},
		{
			name:   "one slow outlier",
			values: append(repeat(100, 999), 1_000_000),
			want:   Latency{Mean: 1099.9, P50: 100, P90: 100, P95: 100, P99: 100, P999: 100, Max: 1_000_000},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHistogram()
			for _, v := range tt.values {
				if err := h.RecordValue(v); err != nil {
					t.Fatal(err)
				}
			}
			got := Summarize(h)
			checkMonotone(t, got)
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"mean", got.Mean, tt.want.Mean},
				{"p50", got.P50, tt.want.P50},
				{"p90", got.P90, tt.want.P90},
				{"p95", got.P95, tt.want.P95},
				{"p99", got.P99, tt.want.P99},
				{"p999", got.P999, tt.want.P999},
				{"max", got.Max, tt.want.Max},
			} {
				// 3 significant digits: within 0.1% (plus rounding to whole µs).
				if diff := c.got - c.want; diff < -0.001*c.want-1 || diff > 0.001*c.want+1 {
					t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
				}
			}
		})
	}
	if got := Summarize(nil); got != (Latency{}) {
		t.Errorf("Summarize(nil) = %+v, want zeros", got)
	}
}

func seq(from, to int64) []int64 {
	var out []int64
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestEncodeDecode(t *testing.T) {
	tests := []struct {
		name   string
		values []int64
	}{
		{"empty", nil},
		{"one", []int64{42}},
		{"wide", []int64{1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 3_600_000_000}},
		{"many", seq(1, 5000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHistogram()
			for _, v := range tt.values {
				if err := h.RecordValue(v); err != nil {
					t.Fatal(err)
				}
			}
			s, err := EncodeHistogram(h)
			if err != nil {
				t.Fatal(err)
			}
			back, err := DecodeHistogram(s)
			if err != nil {
				t.Fatal(err)
			}
			if !back.Equals(h) {
				t.Errorf("round trip changed the histogram")
			}
			if Summarize(back) != Summarize(h) {
				t.Errorf("round trip changed the summary: %+v vs %+v", Summarize(back), Summarize(h))
			}
		})
	}

	for _, bad := range []string{"", "not base64!", "AAAA", "HISTFAAAACl4nJNpmSzMwMDAxAABzFCaEUz/"} {
		if _, err := DecodeHistogram(bad); err == nil {
			t.Errorf("DecodeHistogram(%q) succeeded", bad)
		}
	}
}

func TestReset(t *testing.T) {
	r := NewRegistry([]string{"op"})
	h := r.NewHandle()
	h.Record(0, time.Millisecond, 1, "")
	r.Tick(t0.Add(time.Second))
	h.Record(0, time.Millisecond, 1, "")
	h.Record(0, time.Millisecond, 1, "timeout")

	start := t0.Add(10 * time.Second)
	r.Reset(start)
	if n := r.NumIntervals(); n != 0 {
		t.Errorf("after Reset: %d intervals", n)
	}
	if tot := r.Totals(); tot[0].Count != 0 || len(tot[0].Errors) != 0 || tot[0].Hist.TotalCount() != 0 {
		t.Errorf("after Reset: totals %+v", tot[0])
	}
	h.Record(0, 2*time.Millisecond, 1, "")
	iv := r.Tick(start.Add(time.Second))
	if !iv.Start.Equal(start) {
		t.Errorf("first interval after Reset starts at %v, want %v", iv.Start, start)
	}
	if iv.Ops[0].Count != 1 || iv.Ops[0].Docs != 1 || len(iv.Ops[0].Errors) != 0 {
		t.Errorf("interval after Reset: %+v", iv.Ops[0])
	}
	checkInvariants(t, r)
}

func TestTotalsAndIntervalsAreCopies(t *testing.T) {
	r := NewRegistry([]string{"op"})
	h := r.NewHandle()
	h.Record(0, time.Millisecond, 1, "timeout")
	h.Record(0, time.Millisecond, 1, "")
	iv := r.Tick(t0)

	// Scribble over everything handed out.
	iv.Ops[0].Errors["timeout"] = 100
	_ = iv.Ops[0].Hist.RecordValue(5)
	tot := r.Totals()
	tot[0].Errors["timeout"] = 100
	_ = tot[0].Hist.RecordValue(5)
	for got, err := range r.Intervals() {
		if err != nil {
			t.Fatal(err)
		}
		got.Ops[0].Errors["x"] = 1
		_ = got.Ops[0].Hist.RecordValue(5)
	}
	names := r.Ops()
	names[0] = "changed"

	tot = r.Totals()
	if tot[0].Errors["timeout"] != 1 || tot[0].Hist.TotalCount() != 1 || tot[0].Name != "op" {
		t.Errorf("registry state changed through a returned value: %+v", tot[0])
	}
	checkInvariants(t, r)
}

func TestIntervalsStopEarly(t *testing.T) {
	r := NewRegistry([]string{"op"})
	for i := range 5 {
		r.Tick(t0.Add(time.Duration(i) * time.Second))
	}
	n := 0
	for _, err := range r.Intervals() {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("iterated %d intervals, want 2", n)
	}
}

// TestConcurrentRecordAndTick records from many goroutines while another
// ticks, then checks that nothing was lost or counted twice. Run with -race.
// Every worker records half its values, waits until the ticker has ticked
// twice, and records the rest, so ticks and records overlap on any machine.
func TestConcurrentRecordAndTick(t *testing.T) {
	ops := []string{"insert", "find", "update"}
	const workers, perWorker = 16, 3000
	r := NewRegistry(ops)
	r.Reset(t0)

	ticking := make(chan struct{}) // closed after the ticker's second tick

	var expect [3]struct{ ok, failed, docs atomic.Int64 }
	var wg sync.WaitGroup
	for w := range workers {
		h := r.NewHandle()
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range perWorker {
				if i == perWorker/2 {
					<-ticking
				}
				op := rng.IntN(len(ops))
				lat := time.Duration(rng.ExpFloat64() * float64(time.Millisecond))
				kind := ""
				if rng.IntN(20) == 0 {
					kind = "timeout"
					expect[op].failed.Add(1)
				} else {
					expect[op].ok.Add(1)
				}
				expect[op].docs.Add(2)
				h.Record(op, lat, 2, kind)
			}
		})
	}

	stop := make(chan struct{})
	ticked := make(chan int)
	go func() {
		n := 0
		now := t0
		for {
			select {
			case <-stop:
				ticked <- n
				return
			default:
			}
			now = now.Add(time.Millisecond)
			iv := r.Tick(now)
			checkMonotone(t, Summarize(iv.Ops[0].Hist))
			n++
			if n == 2 {
				close(ticking)
			}
			runtime.Gosched()
		}
	}()
	wg.Wait()
	close(stop)
	n := <-ticked
	r.Tick(t0.Add(time.Hour)) // collect whatever the last tick missed
	if n < 2 {
		t.Errorf("the ticker ticked %d times, want at least the 2 the workers waited for", n)
	}

	tot := r.Totals()
	for i := range ops {
		if tot[i].Count != expect[i].ok.Load() || tot[i].Errors["timeout"] != expect[i].failed.Load() || tot[i].Docs != expect[i].docs.Load() {
			t.Errorf("op %s: count %d errors %d docs %d, want %d %d %d", ops[i],
				tot[i].Count, tot[i].Errors["timeout"], tot[i].Docs,
				expect[i].ok.Load(), expect[i].failed.Load(), expect[i].docs.Load())
		}
	}
	checkInvariants(t, r)
}

// BenchmarkRecord measures the cost of one Record call with every goroutine
// using its own handle, as workers do.
func BenchmarkRecord(b *testing.B) {
	r := NewRegistry([]string{"insert", "find"})
	b.RunParallel(func(pb *testing.PB) {
		h := r.NewHandle()
		i := 0
		for pb.Next() {
			h.Record(i&1, time.Duration(100+i%10_000)*time.Microsecond, 1, "")
			i++
		}
	})
}

// BenchmarkTick measures a tick over 64 handles that each recorded a little
// for every operation.
func BenchmarkTick(b *testing.B) {
	ops := []string{"insert", "find", "update", "delete"}
	r := NewRegistry(ops)
	hs := make([]*Handle, 64)
	for i := range hs {
		hs[i] = r.NewHandle()
	}
	now := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, h := range hs {
			for op := range ops {
				h.Record(op, time.Duration(200+i%1000)*time.Microsecond, 1, "")
			}
		}
		now = now.Add(time.Second)
		r.Tick(now)
	}
}
