// Package metrics records what a benchmark run measures: per-operation
// counts, error counts by kind, document counts and latency histograms.
//
// Latency is kept only in HdrHistograms, never as raw samples, so memory does
// not grow with the number of operations. Each worker records into its own
// Handle; a periodic Tick merges all handles into an Interval and into
// cumulative totals, the way cockroachdb's pkg/workload does it. Workers
// therefore never contend with each other, only (briefly) with the tick.
//
// Every histogram is sparse (see Histogram): it holds only the latency
// buckets that received values, so memory is paid for what is recorded, not
// for the 1 µs – 1 h range. A worker holds a histogram for an operation only
// while it runs that operation (see Handle), so a phase with many operations
// and many workers costs what RecorderBytes says, not operations × workers ×
// the 184 KiB of a dense histogram of this range.
package metrics

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"
	"time"
	"unsafe"

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

// Histogram is a latency histogram with mongobench's geometry, stored
// sparsely: only the buckets that hold values take memory (4 bytes of index
// and 1 to 8 bytes of count each, plus about 200 bytes per histogram),
// whereas a dense histogram of this range is a fixed 184 KiB array. Its
// counts, percentiles, mean, maximum and V2 encoding are those of the dense
// hdrhistogram.Histogram holding the same values, bucket for bucket and byte
// for byte (see TestHistogramMatchesDense), so results files do not change.
//
// Like the library type it embeds, a Histogram has no locking of its own.
type Histogram struct {
	*hdrhistogram.PackedHistogram

	// native is true for histograms made by NewHistogram (and their
	// clones), whose geometry the fast encoder knows.
	native bool
}

// NewHistogram returns an empty histogram with mongobench's latency geometry
// (microseconds from LowestLatency to HighestLatency, SignificantDigits
// digits). Every histogram this package produces has this geometry, which is
// what makes merging them lossless.
func NewHistogram() *Histogram {
	return &Histogram{
		PackedHistogram: hdrhistogram.NewPacked(int64(LowestLatency/time.Microsecond), int64(HighestLatency/time.Microsecond), SignificantDigits),
		native:          true,
	}
}

// Merge adds every value of from to h and returns how many fell outside h's
// range (none between histograms of this package).
func (h *Histogram) Merge(from *Histogram) (dropped int64) {
	return h.PackedHistogram.Merge(from.PackedHistogram)
}

// Clone returns an independent copy of h.
func (h *Histogram) Clone() *Histogram {
	return &Histogram{PackedHistogram: h.PackedHistogram.Clone(), native: h.native}
}

// ValueAtQuantile returns the value below which q percent (0 to 100) of the
// values fall, as the dense histogram's method of the same name does.
func (h *Histogram) ValueAtQuantile(q float64) int64 {
	return h.ValueAtPercentile(q)
}

// Equals reports whether h and other hold the same counts in the same
// buckets and have the same geometry.
func (h *Histogram) Equals(other *Histogram) bool {
	if h.TotalCount() != other.TotalCount() || h.Populated() != other.Populated() ||
		h.LowestTrackableValue() != other.LowestTrackableValue() ||
		h.HighestTrackableValue() != other.HighestTrackableValue() ||
		h.SignificantFigures() != other.SignificantFigures() {
		return false
	}

	type bucket struct{ value, count int64 }

	mine := make([]bucket, 0, h.Populated())
	for v, c := range h.ForEachBucket {
		mine = append(mine, bucket{v, c})
	}

	i, same := 0, true
	for v, c := range other.ForEachBucket {
		if mine[i] != (bucket{v, c}) {
			same = false
			break
		}
		i++
	}

	return same
}

// Bytes returns the memory h holds, as the library accounts it: the fixed
// part plus the capacity of its bucket arrays. A nil histogram holds none.
func (h *Histogram) Bytes() int64 {
	if h == nil || h.PackedHistogram == nil {
		return 0
	}
	return int64(h.GetMemorySize())
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
	Hist *Histogram
	// Unit is empty for an operation, or says that the entry measures a
	// group of operations as one: "iteration" (a sequence's whole
	// iteration) or "composite" (a composite operation). Steps then names
	// the entries it is made of, in order. Both are set by SetUnit and
	// shared, not copied: callers must not modify Steps.
	Unit  string
	Steps []string
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
func Summarize(h *Histogram) Latency {
	if h == nil || h.PackedHistogram == nil || h.TotalCount() == 0 {
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
func EncodeHistogram(h *Histogram) (string, error) {
	if s, ok := encode(h); ok {
		return s, nil
	}

	b, err := h.Encode()
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram parses a histogram written by EncodeHistogram (or any
// V2 compressed base64 HdrHistogram), keeping its geometry.
func DecodeHistogram(s string) (*Histogram, error) {
	if h, ok := decode(s); ok {
		return h, nil
	}

	h, err := hdrhistogram.DecodePacked([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return &Histogram{PackedHistogram: h}, nil
}

// Registry collects the measurements of one phase of a run for a fixed list
// of operation names.
//
// What it holds, and so what a phase costs in memory (RecorderBytes gives
// the estimate the workload validation budgets with):
//   - per worker handle, 40 bytes of counters per operation, and a sparse
//     histogram only for the operations the worker ran in the current or the
//     previous interval (handles give back the histogram of an operation
//     they did not run for a whole interval);
//   - per operation, the cumulative totals (one sparse histogram each);
//   - per closed interval (all of them, or the last few with Retain), the
//     counters of every operation and a compact copy of the histogram of
//     those that completed something in it (a varint per bucket).
type Registry struct {
	ops []string

	// units holds, per operation index, the unit kind and steps SetUnit
	// gave it (zero for plain operations). Written before recording only.
	units []unitInfo

	// mu serialises NewHandle, Tick, Reset and the readers, and guards every
	// field below. It is never held by Record.
	mu        sync.Mutex
	handles   []*Handle
	last      time.Time
	totals    []OpStats
	intervals []storedInterval
	// retain bounds intervals (see Retain; 0 keeps every one), and
	// forgotten counts the closed intervals dropped to honour it, so that
	// interval indexes stay those of the whole phase.
	retain    int
	forgotten int
	// spare is an emptied histogram swapped into a handle in place of the one
	// the tick takes out, so a tick recycles histograms instead of
	// allocating one per handle and operation.
	spare *Histogram
}

// storedInterval is a closed interval.
type storedInterval struct {
	start, end time.Time
	ops        []storedOp
}

// storedOp is OpStats without the name, and with the histogram in the
// compact form of the V2 payload (a varint per bucket, 1 to 3 bytes for most)
// rather than as a live histogram, since a long run keeps one per operation
// and interval. An operation that completed nothing in the interval, the
// common case for most operations of a large mix, stores no histogram.
type storedOp struct {
	count, docs, clamped int64
	errors               map[string]int64 // nil when there were none
	payload              []byte           // appendPayload output; nil when count is 0
	hist                 *Histogram       // used instead of payload if it could not be written
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

// unitInfo is what SetUnit records for one operation index.
type unitInfo struct {
	kind  string
	steps []string
}

// SetUnit marks operation op as a measured unit of the given kind made of
// steps (see OpStats.Unit). Call it before the first Tick; the mark is
// carried by every OpStats the registry returns for op.
func (r *Registry) SetUnit(op int, kind string, steps []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.units == nil {
		r.units = make([]unitInfo, len(r.ops))
	}
	r.units[op] = unitInfo{kind: kind, steps: append([]string(nil), steps...)}
	r.totals[op].Unit, r.totals[op].Steps = kind, r.units[op].steps
}

// unit returns the unit mark of operation i.
func (r *Registry) unit(i int) (string, []string) {
	if r.units == nil {
		return "", nil
	}
	return r.units[i].kind, r.units[i].steps
}

// emptyStats returns zeroed stats for every operation.
func (r *Registry) emptyStats() []OpStats {
	out := make([]OpStats, len(r.ops))
	for i, name := range r.ops {
		out[i] = OpStats{Name: name, Errors: map[string]int64{}, Hist: NewHistogram()}
		out[i].Unit, out[i].Steps = r.unit(i)
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
//
// A handle allocates nothing for an operation it never records but its
// 40-byte counters (handleOpBytes): the histogram is created at the
// operation's first success, the error map at its first failure.
type Handle struct {
	mu  sync.Mutex
	ops []handleOp
}

// handleOp is what a handle has recorded for one operation since the last
// tick.
type handleOp struct {
	count, docs, clamped int64
	errors               map[string]int64 // nil until the first failure
	hist                 *Histogram       // nil until the first success
}

// handleOpBytes is the fixed per-operation cost of a handle.
const handleOpBytes = int64(unsafe.Sizeof(handleOp{}))

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
// returned histograms and maps belong to the caller.
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
		so := storedOp{count: s.Count, docs: s.Docs, clamped: s.Clamped}
		if len(s.Errors) > 0 {
			so.errors = maps.Clone(s.Errors)
		}
		if s.Hist.TotalCount() > 0 {
			if p, ok := appendPayload(nil, s.Hist); ok {
				so.payload = p
			} else {
				so.hist = s.Hist.Clone()
			}
		}
		stored.ops[i] = so
	}
	r.intervals = append(r.intervals, stored)
	if r.retain > 0 && len(r.intervals) > r.retain {
		n := len(r.intervals) - r.retain
		// A new array, so that the dropped intervals' payloads become
		// garbage, and so that a sequence from Intervals still iterating
		// over the old one is not overwritten.
		r.intervals = slices.Clone(r.intervals[n:])
		r.forgotten += n
	}
	r.addToTotals(iv)
	r.last = now
	return iv
}

// collect moves what handle h recorded for operation i into dst. The handle
// lock is held only to swap the histogram pointer and copy the counters;
// merging and clearing the taken histogram happen after it is released. A
// handle's histogram that recorded nothing for a whole interval is given
// back, so a worker holds histograms only for the operations it is running.
func (r *Registry) collect(h *Handle, i int, dst *OpStats) {
	var taken *Histogram

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
	switch {
	case o.hist == nil:
	case o.hist.TotalCount() > 0:
		// The spare may be nil; Record then allocates on the next success.
		taken, o.hist, r.spare = o.hist, r.spare, nil
	default:
		if r.spare == nil {
			r.spare = o.hist
		}
		o.hist = nil
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
	r.forgotten = 0
	r.totals = r.emptyStats()
	r.last = now
}

// Retain bounds the closed intervals the registry keeps to the last n (0,
// the default, keeps them all). A run that streams every interval elsewhere
// as it closes (see Tick's return value) needs only the cumulative totals
// and a few recent intervals, so its memory stops growing with its length.
// NumIntervals still counts every interval since the last Reset, and
// Intervals yields only those kept.
func (r *Registry) Retain(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retain = max(n, 0)
}

// RetainedIntervals returns how many closed intervals the registry holds in
// memory, which Retain bounds.
func (r *Registry) RetainedIntervals() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.intervals)
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

// NumIntervals returns how many intervals were closed since the last Reset,
// including those Retain let the registry forget: the index the next
// interval will have.
func (r *Registry) NumIntervals() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.forgotten + len(r.intervals)
}

// Intervals returns the closed intervals it keeps (see Retain) in order, each as fresh copies the
// caller may keep or modify. Histograms are rebuilt from the registry's
// compact copy one interval at a time as the caller iterates, so only the
// interval in hand is held as live histograms. The sequence is a snapshot:
// intervals added by later ticks are not included. An error (a stored
// histogram that does not decode) ends the sequence.
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
				errs := maps.Clone(so.errors)
				if errs == nil {
					errs = map[string]int64{}
				}
				iv.Ops[i] = OpStats{
					Name: r.ops[i], Count: so.count, Docs: so.docs, Clamped: so.clamped,
					Errors: errs, Hist: h,
				}
				iv.Ops[i].Unit, iv.Ops[i].Steps = r.unit(i)
			}
			if !yield(iv, nil) {
				return
			}
		}
	}
}

// histogram returns a fresh histogram with the stored values.
func (so storedOp) histogram() (*Histogram, error) {
	switch {
	case so.hist != nil:
		return so.hist.Clone(), nil
	case so.payload != nil:
		return histogramFromPayload(so.payload)
	}
	return NewHistogram(), nil
}

// Bytes returns the memory the registry holds in its handles, totals and
// intervals: the histograms as Histogram.Bytes counts them, the fixed
// per-operation records, and 16 bytes per error-map entry (the keys are
// shared constants). Go's own bookkeeping (map buckets, slice headers,
// allocator rounding) comes on top, so the figure is a floor, close enough to
// see which part of a phase grows.
func (r *Registry) Bytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	const errEntryBytes = 16
	n := r.spare.Bytes()
	for _, h := range r.handles {
		h.mu.Lock()
		n += int64(cap(h.ops)) * handleOpBytes
		for _, o := range h.ops {
			n += o.hist.Bytes() + errEntryBytes*int64(len(o.errors))
		}
		h.mu.Unlock()
	}
	for _, t := range r.totals {
		n += int64(unsafe.Sizeof(t)) + t.Hist.Bytes() + errEntryBytes*int64(len(t.Errors))
	}
	for _, si := range r.intervals {
		n += int64(cap(si.ops)) * int64(unsafe.Sizeof(storedOp{}))
		for _, so := range si.ops {
			n += int64(cap(so.payload)) + so.hist.Bytes() + errEntryBytes*int64(len(so.errors))
		}
	}
	return n
}

// typicalBuckets is how many distinct latency buckets RecorderBytes assumes
// one worker's histogram of one operation fills in one interval. With 3
// significant digits a bucket is 0.1% wide, so 64 buckets is a latency
// spread of a few percent around each of several modes; a histogram that
// fills more pays about 12 bytes (index, count, slack) per extra bucket.
const typicalBuckets = 64

// bucketBytes is what RecorderBytes counts per bucket: a 4-byte index, a
// count of up to 4 bytes, and the spare capacity of a growing array.
const bucketBytes = 12

// RecorderBytes estimates the memory held by the recorders of a phase whose
// workers each run every one of ops operations in every interval, the worst
// case of a mix: per worker and operation, a handle's counters and a
// histogram of typicalBuckets buckets; per operation, the totals and the
// recycled histogram. registries is 1, or 2 when the phase also records
// service times (open-loop phases and phases with background jobs). Closed
// intervals come on top and grow with the phase's length (see Bytes).
func RecorderBytes(ops, workers, registries int) int64 {
	hist := NewHistogram().Bytes() + typicalBuckets*bucketBytes
	perPair := handleOpBytes + hist
	perOp := int64(unsafe.Sizeof(OpStats{})) + 2*hist
	return int64(registries) * (int64(ops)*int64(workers)*perPair + int64(ops)*perOp)
}
