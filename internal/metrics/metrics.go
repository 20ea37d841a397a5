// Package metrics records what a benchmark run measures: per-operation
// counts, error counts by kind, document counts and latency histograms.
//
// Latency is kept only in HdrHistograms, never as raw samples, so memory does
// not grow with the number of operations. Each worker records into its own
// Handle; a periodic Tick merges all handles into an Interval and into
// cumulative totals, the way cockroachdb's pkg/workload does it. Workers
// therefore never contend with each other, only (briefly) with the tick.
package metrics

import (
	"fmt"
	"iter"
	"maps"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry shared by every histogram mongobench writes. Values are
// latencies in microseconds.
const (
	// LowestLatency is the smallest latency a histogram can tell apart from
	// zero; shorter latencies are recorded as this value and counted as
	// clamped.
	LowestLatency = time.Microsecond
	// HighestLatency is the largest latency a histogram tracks; longer
	// latencies are recorded as this value and counted as clamped.
	HighestLatency = time.Hour
	// SignificantDigits is the number of significant decimal digits every
	// recorded value keeps, i.e. a relative error of at most 0.1%.
	SignificantDigits = 3
)

// NewHistogram returns an empty histogram with mongobench's latency geometry
// (microseconds from LowestLatency to HighestLatency, SignificantDigits
// digits). Every histogram this package produces has this geometry, which is
// what makes merging them lossless.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(int64(LowestLatency/time.Microsecond), int64(HighestLatency/time.Microsecond), SignificantDigits)
}

// OpStats are the measurements of one operation over some period.
type OpStats struct {
	// Name is the operation name given to NewRegistry.
	Name string
	// Count is the number of operations that succeeded; only these are in
	// Hist.
	Count int64
	// Errors counts failed operations by error kind (see package errkind).
	// Failed operations are not in Count and their latency is not in Hist,
	// so a fast-failing server cannot make latencies look better. It is never
	// nil.
	Errors map[string]int64
	// Docs is the number of documents returned or written, by successful and
	// failed operations alike (a failed bulk write may still write some).
	Docs int64
	// Clamped is how many of the Count latencies were outside
	// [LowestLatency, HighestLatency] and recorded at the nearest bound.
	Clamped int64
	// Hist holds the latency, in microseconds, of each successful operation.
	// It is never nil and Hist.TotalCount() equals Count.
	Hist *hdrhistogram.Histogram
}

// clone returns a deep copy of s, so callers can keep or modify it without
// touching the registry's state.
func (s OpStats) clone() OpStats {
	s.Errors = maps.Clone(s.Errors)
	s.Hist = s.Hist.Clone()
	return s
}

// Interval is the measurements of all operations between two ticks.
type Interval struct {
	// Start is the end of the previous interval (or the registry's start).
	Start time.Time
	// End is the time passed to the Tick that closed the interval.
	End time.Time
	// Ops has one entry per operation, in the registry's order.
	Ops []OpStats
}

// Latency summarises a latency histogram. All values are microseconds, as
// resolved by the histogram (within 0.1% of the recorded values).
type Latency struct {
	// Mean is the average latency.
	Mean float64
	// P50 is the median: half of the operations were at least this fast.
	P50 float64
	// P90 is the latency 90% of the operations did not exceed.
	P90 float64
	// P95 is the latency 95% of the operations did not exceed.
	P95 float64
	// P99 is the latency 99% of the operations did not exceed.
	P99 float64
	// P999 is the latency 99.9% of the operations did not exceed.
	P999 float64
	// Max is the slowest operation's latency.
	Max float64
}

// Summarize computes the summary statistics reported for a histogram. The
// percentiles are the histogram's highest equivalent values, so they never
// decrease from P50 to Max. An empty or nil histogram gives all zeros.
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	p := h.ValueAtPercentilesSlice([]float64{50, 90, 95, 99, 99.9})
	return Latency{
		Mean: h.Mean(),
		P50:  float64(p[0]),
		P90:  float64(p[1]),
		P95:  float64(p[2]),
		P99:  float64(p[3]),
		P999: float64(p[4]),
		Max:  float64(h.Max()),
	}
}

// EncodeHistogram serialises h in the HdrHistogram V2 compressed format,
// base64 encoded, which is how results files store histograms. Other
// HdrHistogram implementations (Java, HdrHistogram.js, the plotting tools)
// can read it.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram parses a histogram written by EncodeHistogram (or any
// V2 compressed base64 HdrHistogram).
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

// Registry collects the measurements of one phase of a run for a fixed list
// of operation names.
//
// Only the cumulative totals are kept as full histograms. Closed intervals
// are kept in the compact encoded form (a few kilobytes per operation even for
// a wide latency spread, instead of the ~190 KB of a full histogram), so a
// long run with frequent ticks does not eat the memory of the machine it is
// measuring.
type Registry struct {
	ops []string

	// mu serialises NewHandle, Tick, Reset and the readers, and guards every
	// field below. It is never held by Record.
	mu        sync.Mutex
	handles   []*Handle
	last      time.Time
	totals    []OpStats
	intervals []storedInterval
	// spare is an empty histogram swapped into a handle in place of the one
	// the tick takes out, so a tick needs only one extra histogram however
	// many handles there are.
	spare *hdrhistogram.Histogram
}

// storedInterval is a closed interval in compact form.
type storedInterval struct {
	start, end time.Time
	ops        []storedOp
}

// storedOp is OpStats with the histogram encoded.
type storedOp struct {
	count, docs, clamped int64
	errors               map[string]int64
	hist                 string                  // EncodeHistogram output
	dense                *hdrhistogram.Histogram // used instead of hist if encoding failed
}

// NewRegistry returns a registry for the given operation names, in the order
// Handle.Record refers to them by index. Names should be unique. The first
// interval starts now; call Reset to start it at a chosen time.
func NewRegistry(ops []string) *Registry {
	r := &Registry{
		ops:  append([]string(nil), ops...),
		last: time.Now(),
	}
	r.totals = r.emptyStats()
	return r
}

// emptyStats returns zeroed stats for every operation.
func (r *Registry) emptyStats() []OpStats {
	out := make([]OpStats, len(r.ops))
	for i, name := range r.ops {
		out[i] = OpStats{Name: name, Errors: map[string]int64{}, Hist: NewHistogram()}
	}
	return out
}

// Ops returns a copy of the operation names, in index order.
func (r *Registry) Ops() []string {
	return append([]string(nil), r.ops...)
}

// Handle is one worker's private recorder. Record locks only the handle's own
// mutex, which Tick takes briefly, once per operation, to swap the histogram
// out and copy the counters. A Handle is safe for concurrent use, but giving
// each worker its own is what keeps recording contention-free.
type Handle struct {
	mu  sync.Mutex
	ops []handleOp
}

// handleOp is what a handle has recorded for one operation since the last
// tick.
type handleOp struct {
	count, docs, clamped int64
	errors               map[string]int64
	hist                 *hdrhistogram.Histogram // nil until the first success
}

// NewHandle returns a new recorder that the registry's ticks will collect
// from. Handles live as long as the registry: data recorded by a worker that
// has exited is still collected by the next tick.
func (r *Registry) NewHandle() *Handle {
	h := &Handle{ops: make([]handleOp, len(r.ops))}
	r.mu.Lock()
	r.handles = append(r.handles, h)
	r.mu.Unlock()
	return h
}

// Record adds one completed operation. op is the operation's index in the
// registry's names; an index out of range is ignored. kind is "" for a
// success, whose latency goes into the histogram (clamped into
// [LowestLatency, HighestLatency] and counted as clamped rather than
// dropped); otherwise it is the error kind whose count increments, and the
// latency is not recorded: failed operations are counted, not timed. docs is
// the number of documents returned or written and is added in both cases.
func (h *Handle) Record(op int, latency time.Duration, docs int64, kind string) {
	if op < 0 || op >= len(h.ops) {
		return
	}
	h.mu.Lock()
	o := &h.ops[op]
	o.docs += docs
	if kind != "" {
		if o.errors == nil {
			o.errors = make(map[string]int64)
		}
		o.errors[kind]++
		h.mu.Unlock()
		return
	}
	us, clamped := micros(latency)
	if o.hist == nil {
		o.hist = NewHistogram()
	}
	// micros keeps us inside the histogram's range, so this cannot fail.
	_ = o.hist.RecordValue(us)
	o.count++
	if clamped {
		o.clamped++
	}
	h.mu.Unlock()
}

// micros converts a latency to whole microseconds, rounded to nearest, and
// clamps it into the histogram range, reporting whether it had to.
func micros(d time.Duration) (us int64, clamped bool) {
	const lo, hi = int64(LowestLatency / time.Microsecond), int64(HighestLatency / time.Microsecond)
	if d > HighestLatency {
		// Checked before rounding, which could overflow near MaxInt64.
		return hi, true
	}
	us = int64((d + time.Microsecond/2) / time.Microsecond)
	switch {
	case us < lo:
		return lo, true
	case us > hi:
		return hi, true
	}
	return us, false
}

// Tick closes the current interval at now: it collects every handle's data
// recorded since the previous tick into a new Interval (Start is the previous
// tick's now, End is now), appends it to the registry's intervals, adds it to
// the cumulative totals and returns it, for live progress reporting. The
// returned histograms belong to the caller.
func (r *Registry) Tick(now time.Time) Interval {
	r.mu.Lock()
	defer r.mu.Unlock()

	iv := Interval{Start: r.last, End: now, Ops: r.emptyStats()}
	for _, h := range r.handles {
		for i := range h.ops {
			r.collect(h, i, &iv.Ops[i])
		}
	}

	stored := storedInterval{start: iv.Start, end: iv.End, ops: make([]storedOp, len(iv.Ops))}
	for i, s := range iv.Ops {
		so := storedOp{count: s.Count, docs: s.Docs, clamped: s.Clamped, errors: maps.Clone(s.Errors)}
		if enc, err := EncodeHistogram(s.Hist); err == nil {
			so.hist = enc
		} else {
			// Encoding only fails if the library's in-memory writes do;
			// keeping the full histogram costs memory but loses nothing.
			so.dense = s.Hist.Clone()
		}
		stored.ops[i] = so
	}
	r.intervals = append(r.intervals, stored)
	r.addToTotals(iv)
	r.last = now
	return iv
}

// collect moves what handle h recorded for operation i into dst. The handle
// lock is held only to swap the histogram pointer and copy the counters;
// merging and clearing the taken histogram happen after it is released.
func (r *Registry) collect(h *Handle, i int, dst *OpStats) {
	if r.spare == nil {
		r.spare = NewHistogram()
	}
	var taken *hdrhistogram.Histogram

	h.mu.Lock()
	o := &h.ops[i]
	dst.Count += o.count
	dst.Docs += o.docs
	dst.Clamped += o.clamped
	for k, v := range o.errors {
		dst.Errors[k] += v
	}
	clear(o.errors)
	o.count, o.docs, o.clamped = 0, 0, 0
	if o.hist != nil && o.hist.TotalCount() > 0 {
		taken, o.hist, r.spare = o.hist, r.spare, nil
	}
	h.mu.Unlock()

	if taken != nil {
		// Same geometry on both sides, so nothing can be dropped.
		dst.Hist.Merge(taken)
		taken.Reset()
		r.spare = taken
	}
}

// addToTotals merges an interval into the cumulative totals.
func (r *Registry) addToTotals(iv Interval) {
	for i, s := range iv.Ops {
		t := &r.totals[i]
		t.Count += s.Count
		t.Docs += s.Docs
		t.Clamped += s.Clamped
		for k, v := range s.Errors {
			t.Errors[k] += v
		}
		t.Hist.Merge(s.Hist)
	}
}

// Reset discards everything recorded so far, in the handles, the intervals
// and the totals, and starts the next interval at now. It is how a warmup
// period is thrown away without replacing the workers' handles.
func (r *Registry) Reset(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.handles {
		h.mu.Lock()
		for i := range h.ops {
			o := &h.ops[i]
			o.count, o.docs, o.clamped = 0, 0, 0
			clear(o.errors)
			if o.hist != nil {
				o.hist.Reset()
			}
		}
		h.mu.Unlock()
	}
	r.intervals = nil
	r.totals = r.emptyStats()
	r.last = now
}

// Totals returns the cumulative per-operation stats, the sum of all intervals
// so far, as a deep copy the caller may keep.
func (r *Registry) Totals() []OpStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]OpStats, len(r.totals))
	for i, t := range r.totals {
		out[i] = t.clone()
	}
	return out
}

// NumIntervals returns how many intervals the registry holds.
func (r *Registry) NumIntervals() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.intervals)
}

// Intervals returns the closed intervals in order. Histograms are decoded
// from the registry's compact copy one interval at a time as the caller
// iterates, so only the interval in hand is held as full histograms. The
// sequence is a snapshot: intervals added by later ticks are not included.
// An error (a stored histogram that does not decode) ends the sequence.
func (r *Registry) Intervals() iter.Seq2[Interval, error] {
	r.mu.Lock()
	stored := r.intervals[:len(r.intervals):len(r.intervals)]
	r.mu.Unlock()
	return func(yield func(Interval, error) bool) {
		for n, si := range stored {
			iv := Interval{Start: si.start, End: si.end, Ops: make([]OpStats, len(si.ops))}
			for i, so := range si.ops {
				h, err := so.histogram()
				if err != nil {
					yield(Interval{}, fmt.Errorf("interval %d, operation %q: %w", n, r.ops[i], err))
					return
				}
				iv.Ops[i] = OpStats{
					Name: r.ops[i], Count: so.count, Docs: so.docs, Clamped: so.clamped,
					Errors: maps.Clone(so.errors), Hist: h,
				}
			}
			if !yield(iv, nil) {
				return
			}
		}
	}
}

// histogram returns a fresh copy of the stored histogram.
func (so storedOp) histogram() (*hdrhistogram.Histogram, error) {
	if so.dense != nil {
		return so.dense.Clone(), nil
	}
	return DecodeHistogram(so.hist)
}
