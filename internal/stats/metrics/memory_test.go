package metrics

import (
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// denseHistogram is the dense histogram mongobench used before histograms
// became sparse, with the same geometry.
func denseHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(int64(LowestLatency/time.Microsecond), int64(HighestLatency/time.Microsecond), SignificantDigits)
}

// denseSummary is Summarize as computed on a dense histogram.
func denseSummary(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	p := h.ValueAtPercentilesSlice([]float64{50, 90, 95, 99, 99.9})
	return Latency{
		Mean: h.Mean(), P50: float64(p[0]), P90: float64(p[1]), P95: float64(p[2]),
		P99: float64(p[3]), P999: float64(p[4]), Max: float64(h.Max()),
	}
}

// TestHistogramMatchesDense records the same latencies the old way (into a
// dense per-worker histogram, merged into a dense interval histogram, merged
// into dense totals) and the new way (through a Registry), and requires the
// results-file content to be identical: the encoded histogram strings byte
// for byte and every summary figure exactly.
func TestHistogramMatchesDense(t *testing.T) {
	shapes := []struct {
		name string
		draw func(r *rand.Rand) time.Duration
	}{
		{"fast and narrow", func(r *rand.Rand) time.Duration {
			return time.Duration(80+r.IntN(40)) * time.Microsecond
		}},
		{"lognormal", func(r *rand.Rand) time.Duration {
			return time.Duration(float64(time.Millisecond) * (1 + r.ExpFloat64()*r.ExpFloat64()*5))
		}},
		{"whole range with clamping", func(r *rand.Rand) time.Duration {
			return time.Duration(r.Int64N(int64(2 * time.Hour)))
		}},
		{"bimodal with outliers", func(r *rand.Rand) time.Duration {
			switch r.IntN(100) {
			case 0:
				return time.Duration(r.IntN(30)) * time.Second
			case 1, 2, 3, 4, 5, 6, 7, 8, 9:
				return time.Duration(20_000+r.IntN(5000)) * time.Microsecond
			}
			return time.Duration(300+r.IntN(100)) * time.Microsecond
		}},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(sh.name))))
			const workers, ticks = 4, 3
			reg := NewRegistry([]string{"a", "b"})
			handles := make([]*Handle, workers)
			for w := range handles {
				handles[w] = reg.NewHandle()
			}
			denseTotals := []*hdrhistogram.Histogram{denseHistogram(), denseHistogram()}
			for tick := range ticks {
				denseWorkers := make([][]*hdrhistogram.Histogram, workers)
				for w := range denseWorkers {
					denseWorkers[w] = []*hdrhistogram.Histogram{denseHistogram(), denseHistogram()}
				}
				for range 3000 {
					w, op, d := rng.IntN(workers), rng.IntN(2), sh.draw(rng)
					handles[w].Record(op, d, 1, "")
					us, _ := micros(d)
					if err := denseWorkers[w][op].RecordValue(us); err != nil {
						t.Fatal(err)
					}
				}
				iv := reg.Tick(t0.Add(time.Duration(tick+1) * time.Second))
				for op := range 2 {
					dense := denseHistogram()
					for w := range workers {
						dense.Merge(denseWorkers[w][op])
					}
					denseTotals[op].Merge(dense)
					sameContent(t, "interval", iv.Ops[op].Hist, dense)
				}
			}
			for op, tot := range reg.Totals() {
				sameContent(t, "totals", tot.Hist, denseTotals[op])
			}
			n := 0
			for iv, err := range reg.Intervals() {
				if err != nil {
					t.Fatal(err)
				}
				n++
				for _, s := range iv.Ops {
					if s.Hist.TotalCount() != s.Count {
						t.Errorf("stored interval: histogram holds %d, count %d", s.Hist.TotalCount(), s.Count)
					}
				}
			}
			if n != ticks {
				t.Errorf("%d stored intervals, want %d", n, ticks)
			}
		})
	}
}

// sameContent fails unless h and dense would be written identically.
func sameContent(t *testing.T, where string, h *Histogram, dense *hdrhistogram.Histogram) {
	t.Helper()
	got, err := EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	want, err := dense.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s: encoded histogram differs from the dense one", where)
	}
	if g, w := Summarize(h), denseSummary(dense); g != w {
		t.Errorf("%s: summary %+v, dense %+v", where, g, w)
	}
	for _, q := range []float64{0, 1, 33.3, 50, 99.99, 100} {
		if g, w := h.ValueAtQuantile(q), dense.ValueAtQuantile(q); g != w {
			t.Errorf("%s: ValueAtQuantile(%v) = %d, dense %d", where, q, g, w)
		}
	}
}

// TestHandleAllocatesOnlyWhatItRuns checks that a worker holds nothing but
// its fixed counters for operations it does not run, and gives back the
// histogram of an operation it stopped running.
func TestHandleAllocatesOnlyWhatItRuns(t *testing.T) {
	r := NewRegistry([]string{"a", "b", "c"})
	h := r.NewHandle()
	h.Record(0, time.Millisecond, 1, "")
	h.Record(1, time.Millisecond, 0, "timeout")

	if h.ops[0].hist == nil {
		t.Fatal("no histogram for the operation that succeeded")
	}
	for i := 1; i < 3; i++ {
		if h.ops[i].hist != nil {
			t.Errorf("operation %d never succeeded but has a histogram", i)
		}
	}
	if h.ops[2].errors != nil {
		t.Error("operation c never failed but has an error map")
	}

	r.Tick(t0.Add(time.Second))
	// The taken histogram went to the tick; the handle got the (empty)
	// spare, or nothing.
	if o := h.ops[0].hist; o != nil && o.TotalCount() != 0 {
		t.Errorf("after a tick the handle still holds %d values", o.TotalCount())
	}

	// A whole interval without operation a: its histogram is given back.
	h.Record(2, time.Millisecond, 0, "")
	r.Tick(t0.Add(2 * time.Second))
	r.Tick(t0.Add(3 * time.Second))
	if h.ops[0].hist != nil {
		t.Error("a histogram idle for a whole interval was kept")
	}
	checkInvariants(t, r)
}

// TestRegistryBytes checks the memory accounting against what a registry
// is built of.
func TestRegistryBytes(t *testing.T) {
	const ops, workers = 5, 3
	names := []string{"a", "b", "c", "d", "e"}
	r := NewRegistry(names)
	for range workers {
		r.NewHandle()
	}
	empty := NewHistogram().Bytes()
	if empty <= 0 {
		t.Fatalf("an empty histogram accounts for %d bytes", empty)
	}
	fixed := workers*ops*handleOpBytes + ops*(int64(unsafe.Sizeof(OpStats{}))+empty)
	if got := r.Bytes(); got != fixed {
		t.Errorf("fresh registry: %d bytes, want %d (handles %d × %d ops × %d, totals %d × (%d + %d))",
			got, fixed, workers, ops, handleOpBytes, ops, unsafe.Sizeof(OpStats{}), empty)
	}

	// One success for one operation: one histogram in one handle.
	r.handles[0].Record(2, time.Millisecond, 1, "")
	withHist := r.handles[0].ops[2].hist.Bytes()
	if got := r.Bytes(); got != fixed+withHist {
		t.Errorf("after one record: %d bytes, want %d", got, fixed+withHist)
	}

	// After a tick: the interval keeps a histogram only for operation c.
	r.Tick(t0.Add(time.Second))
	want := workers * ops * handleOpBytes
	for _, h := range r.handles {
		for _, o := range h.ops {
			want += o.hist.Bytes()
		}
	}
	want += r.spare.Bytes()
	for _, tot := range r.totals {
		want += int64(unsafe.Sizeof(tot)) + tot.Hist.Bytes()
	}
	want += ops * int64(unsafe.Sizeof(storedOp{}))
	want += int64(cap(r.intervals[0].ops[2].payload))
	for i, so := range r.intervals[0].ops {
		if (so.payload != nil) != (i == 2) || so.hist != nil {
			t.Errorf("stored interval: operation %d has payload %v, histogram %v", i, so.payload != nil, so.hist != nil)
		}
	}
	if got := r.Bytes(); got != want {
		t.Errorf("after a tick: %d bytes, want %d", got, want)
	}
}

// TestManyOperationsStayWithinEstimate is the tester's case in small: many
// operations, every worker running every one of them. The registry must stay
// within RecorderBytes and far below what dense per-worker histograms cost.
func TestManyOperationsStayWithinEstimate(t *testing.T) {
	const ops, workers = 1000, 8
	names := make([]string, ops)
	for i := range names {
		names[i] = "op" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
	}
	r := NewRegistry(names)
	rng := rand.New(rand.NewPCG(3, 4))
	hs := make([]*Handle, workers)
	for w := range hs {
		hs[w] = r.NewHandle()
	}
	for tick := range 3 {
		for _, h := range hs {
			for op := range ops {
				for range 3 {
					h.Record(op, time.Duration(200+rng.IntN(800))*time.Microsecond, 1, "")
				}
			}
		}
		r.Tick(t0.Add(time.Duration(tick+1) * time.Second))
	}
	got := r.Bytes()
	// The estimate covers handles and totals; each closed interval adds a
	// record and (here, since every operation ran) a histogram per
	// operation.
	perInterval := ops * (int64(unsafe.Sizeof(storedOp{})) + typicalBuckets*bucketBytes)
	if est := RecorderBytes(ops, workers, 1) + 3*perInterval; got > est {
		t.Errorf("registry holds %d bytes, more than the estimate %d for it and three intervals", got, est)
	}
	const denseBytes = 23552 * 8 // counts of one dense histogram of this geometry
	if dense := int64(ops*workers+ops) * denseBytes; got > dense/20 {
		t.Errorf("registry holds %d bytes, not far below the %d of dense histograms", got, dense)
	}
	t.Logf("%d operations × %d workers: %d KiB held (estimate %d KiB)", ops, workers, got>>10, RecorderBytes(ops, workers, 1)>>10)
}

// TestEncodeMatchesLibrary holds the cached-compressor encoder to the
// library's, byte for byte, on histograms of every shape: empty, one value,
// single and long zero runs, both ends of the range, large counts.
func TestEncodeMatchesLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	cases := map[string][]int64{
		"empty":            nil,
		"one":              {1},
		"lowest two":       {1, 2},
		"gap of one":       {1, 3},
		"bucket edges":     {2047, 2048, 2049, 4095, 4096, 4097},
		"top of the range": {3_600_000_000, 1},
		"many":             seq(1, 5000),
	}
	for i := range 20 {
		var vs []int64
		for range rng.IntN(2000) {
			vs = append(vs, 1+rng.Int64N(int64(1)<<uint(1+rng.IntN(31))))
		}
		cases["random "+string(rune('a'+i))] = vs
	}
	for name, values := range cases {
		h := NewHistogram()
		for _, v := range values {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		// Large counts take more varint bytes.
		if len(values) > 0 {
			if err := h.RecordValues(values[0], 1<<40); err != nil {
				t.Fatal(err)
			}
		}
		for _, hh := range []*Histogram{h, NewHistogram()} {
			got, ok := encode(hh)
			if !ok {
				t.Fatalf("%s: fast encoder declined", name)
			}
			want, err := hh.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s: encoding differs from the library's", name)
			}
		}
	}

	// A decoded histogram of this geometry is decoded natively and goes
	// to the fast encoder again; one of another geometry is decoded by
	// the library and goes to the library's encoder.
	h := NewHistogram()
	_ = h.RecordValue(42)
	s, err := EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeHistogram(s)
	if err != nil {
		t.Fatal(err)
	}
	if again, ok := encode(back); !ok || again != s {
		t.Errorf("re-encoding a decoded histogram: fast encoder took it %v, same %v", ok, again == s)
	}

	other := &Histogram{PackedHistogram: hdrhistogram.NewPacked(1, 1000, 2)}
	_ = other.RecordValue(42)
	enc, err := other.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err = DecodeHistogram(string(enc))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := encode(back); ok || back.HighestTrackableValue() != 1000 {
		t.Error("a histogram of another geometry was decoded as one of this package's")
	}
	if again, err := EncodeHistogram(back); err != nil || again != string(enc) {
		t.Errorf("re-encoding a histogram of another geometry: %v, same %v", err, again == string(enc))
	}
}

// BenchmarkDecode measures decoding one interval histogram, as finish does
// for every operation of every logged interval.
func BenchmarkDecode(b *testing.B) {
	h := NewHistogram()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		_ = h.RecordValue(200 + rng.Int64N(2000))
	}
	s, err := EncodeHistogram(h)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeHistogram(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode measures encoding one interval histogram of a few hundred
// buckets, as writing a results file does for every operation and interval.
func BenchmarkEncode(b *testing.B) {
	h := NewHistogram()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		_ = h.RecordValue(200 + rng.Int64N(2000))
	}
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			if _, err := EncodeHistogram(h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		for b.Loop() {
			if _, err := h.Encode(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestPayloadRoundTrip checks that the compact interval form gives back the
// same histogram, including long zero runs and both ends of the range.
func TestPayloadRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 50 {
		h := NewHistogram()
		for range rng.IntN(3000) {
			_ = h.RecordValue(1 + rng.Int64N(int64(1)<<uint(1+rng.IntN(31))))
		}
		if n%5 == 0 {
			_ = h.RecordValues(3_600_000_000, 1<<40)
			_ = h.RecordValue(1)
		}
		p, ok := appendPayload(nil, h)
		if !ok {
			t.Fatal("payload not written")
		}
		back, err := histogramFromPayload(p)
		if err != nil {
			t.Fatal(err)
		}
		if !back.Equals(h) {
			t.Fatalf("histogram %d changed in the round trip", n)
		}
	}
	for i := range 23552 {
		if got := countsIndex(valueAt(i)); got != i {
			t.Fatalf("countsIndex(valueAt(%d)) = %d", i, got)
		}
	}
	if _, err := histogramFromPayload([]byte{0x80}); err == nil {
		t.Error("a truncated payload decoded")
	}
}

// TestRetainBoundsIntervals ticks a registry that retains 4 intervals a
// thousand times with data in every interval: the intervals it holds never
// pass 4, its accounted memory does not grow with the number of intervals,
// NumIntervals counts every one, and the totals hold everything recorded.
func TestRetainBoundsIntervals(t *testing.T) {
	const keep, ticks = 4, 1000

	r := NewRegistry([]string{"a", "b"})
	r.Retain(keep)

	h := r.NewHandle()
	now := time.Now()
	r.Reset(now)

	// Measured once the totals' bucket counts need two bytes (past 255),
	// as they do to the end: only the intervals could then grow it.
	var after300 int64

	for i := range ticks {
		for k := range 20 {
			h.Record(k%2, time.Duration(100+k*37)*time.Microsecond, 1, "")
		}

		now = now.Add(time.Second)
		r.Tick(now)

		if got := r.RetainedIntervals(); got > keep {
			t.Fatalf("after %d ticks the registry holds %d intervals, want at most %d", i+1, got, keep)
		}

		if got := r.NumIntervals(); got != i+1 {
			t.Fatalf("after %d ticks NumIntervals is %d", i+1, got)
		}

		if i == 299 {
			after300 = r.Bytes()
		}
	}

	if got := r.Bytes(); got > after300 {
		t.Errorf("registry accounts for %d bytes after %d intervals, %d after 300: it grows with the run's length", got, ticks, after300)
	}

	n := 0
	for _, err := range r.Intervals() {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}

	if n != keep {
		t.Errorf("Intervals yields %d, want the last %d", n, keep)
	}

	if tot := r.Totals(); tot[0].Count+tot[1].Count != 20*ticks {
		t.Errorf("totals hold %d operations, want %d", tot[0].Count+tot[1].Count, 20*ticks)
	}
}
