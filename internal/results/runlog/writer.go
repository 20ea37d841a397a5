package runlog

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// SyncEvery is the longest a record waits in the operating system's cache
// before the log is synced to disk. Every record is written (flushed to the
// operating system) at once, so killing mongobench loses nothing; a sync
// every few seconds bounds what a crash of the machine can lose without
// paying for one per interval.
const SyncEvery = 2 * time.Second

// Writer appends records to a run log. Its methods may be called from
// several goroutines. The first write error is kept (Err) and every later
// write is skipped: a run does not stop because its log cannot be written,
// but it reports it at the end.
type Writer struct {
	// lim bounds the results' points (defaultLimits but in this package's
	// tests): it sizes the spans whose histograms are logged together.
	lim      limits
	mu       sync.Mutex
	f        *os.File
	path     string
	err      error
	lastSync time.Time
	// described marks the phases whose first interval was written (it
	// carries the operations' units and steps).
	described map[int]bool

	// feed keeps the results of what was written up to date record by
	// record, on a goroutine of its own, so that Result costs no reading
	// of the log; lines counts the records written. feed.in is closed
	// with the file.
	feed  *feeder
	lines int

	// run is the run id every record carries (Header.RunID).
	run string
	// pmu orders a phase's interval records with its open span; it is
	// taken before mu. spans are the phases' open spans of deferred
	// intervals (see intervalRecord.Deferred), and blocks the phases of
	// the blocks model, whose growth blocks need every interval's
	// histograms and so are logged one interval per span.
	pmu    sync.Mutex
	spans  map[int]*span
	blocks map[int]bool

	// secrets are the values of the workload's secret parameters, from
	// the header, masked in every record (an error message in an interval
	// or the end record may quote a filter the value was substituted into).
	secrets redact.Known
}

// Create creates (or truncates) the run log at path, creating missing
// directories, and writes its header. h's Type, Format, Version and
// SchemaVersion are filled in, and RunID when it is empty.
func Create(path string, h Header) (*Writer, error) {
	return create(path, h, defaultLimits())
}

// create is Create with the bounds lim on the points (see limits), which
// the writer's spans and its builder both follow.
func create(path string, h Header, lim limits) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating run log %s: %w", path, err)
	}

	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating run log: %w", err)
	}

	w := &Writer{
		f: f, path: path, lastSync: time.Now(), described: map[int]bool{}, lim: lim, feed: newFeeder(path, lim),
		spans: map[int]*span{}, blocks: map[int]bool{},
	}
	h.Type, h.Format, h.Version, h.SchemaVersion = typeHeader, Format, Version, result.SchemaVersion
	h.Target.URI = redact.URI(h.Target.URI)

	if h.RunID == "" {
		h.RunID = NewRunID(h.StartedAt)
	}

	w.run = h.RunID

	if data, err := json.Marshal(h); err == nil {
		w.secrets = result.SecretParams(data)
	}

	if err := w.write(h, typeHeader, true, nil); err != nil {
		_ = w.Close()
		return nil, err
	}

	return w, nil
}

// NewRunID returns a run id: the run's start, to read, and random
// characters, so that two runs started in the same second differ.
func NewRunID(startedAt time.Time) string {
	return startedAt.UTC().Format("20060102T150405Z") + "-" + strings.ToLower(rand.Text()[:10])
}

// Path is the log's file name.
func (w *Writer) Path() string { return w.path }

// Err returns the first write error, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()

	return w.err
}

// StartPhase writes a phase's opening record.
func (w *Writer) StartPhase(p PhaseStart) {
	p.Type, p.Run = typePhase, w.run

	w.pmu.Lock()
	w.blocks[p.Phase] = p.Model == workload.ModelBlocks
	w.pmu.Unlock()

	_ = w.write(p, typePhase, true, nil)
}

// Interval writes one closed interval of phase: the response-time
// interval iv and, for open-loop phases, the service-time interval svc
// (nil otherwise), with the plan point and pacing decisions made at its end.
func (w *Writer) Interval(phase, index int, iv metrics.Interval, svc *metrics.Interval, target *result.PlanPoint, pacing []PacingRecord) {
	rec := intervalRecord{
		Type: typeInterval, Run: w.run, Phase: phase, Index: index,
		Start: iv.Start.Round(0), End: iv.End.Round(0),
		Operations: make([]opRecord, len(iv.Ops)), Target: target, Pacing: pacing,
	}

	w.pmu.Lock()
	defer w.pmu.Unlock()

	w.mu.Lock()
	first := !w.described[phase]
	w.described[phase] = true
	w.mu.Unlock()

	sp := w.spans[phase]
	if sp == nil {
		width := 1
		if !w.blocks[phase] {
			width = spanWidth(index, max(w.feed.group(phase), countGroup(index, w.lim.points(len(iv.Ops)))))
		}

		sp = &span{first: index, width: width}
		w.spans[phase] = sp
	}

	sp.add(iv, svc)

	closes := sp.n == sp.width
	if closes {
		delete(w.spans, phase)

		if sp.width > 1 {
			rec.Group = sp.width
		}
	} else {
		rec.Deferred = true
	}

	for i, s := range iv.Ops {
		o := opRecord{Name: s.Name, Count: s.Count, Docs: s.Docs, Clamped: s.Clamped}
		if len(s.Errors) > 0 {
			o.Errors = s.Errors
		}

		if first {
			o.Unit, o.Steps = s.Unit, s.Steps
		}

		var err error
		if closes {
			o.Histogram, o.ServiceHistogram, err = sp.encode(i)
		}

		if err != nil {
			w.fail(fmt.Errorf("interval %d of phase %d, operation %q: %w", index, phase, s.Name, err))
			return
		}

		rec.Operations[i] = o
	}

	// The builder merges the histograms as they are, which is what it
	// would decode from the line (the encoding is lossless).
	live := &liveInterval{
		phase: phase, index: index, iv: cloneInterval(iv), svc: make([]*metrics.Histogram, len(iv.Ops)),
		target: target, pacing: pacing,
	}

	if svc != nil {
		for i := range min(len(svc.Ops), len(iv.Ops)) {
			if h := svc.Ops[i].Hist; h != nil {
				live.svc[i] = h.Clone()
			}
		}
	}

	_ = w.write(rec, typeInterval, false, live)
}

// Result returns the results of everything written so far (see
// Builder.Result): those Build would read from the log, without reading it
// (Build leaves out a span whose histograms are not written yet; EndPhase,
// Finish and Close write them).
// A run's results are made here, so that a run stopped after hours writes
// them in the time it takes to encode its phases' totals.
//
// It waits for the builder to catch up with the log: a few records at most.
func (w *Writer) Result() (*result.Result, error) {
	w.mu.Lock()

	if w.f == nil {
		// Closed: the builder has applied everything and stopped.
		w.mu.Unlock()
		<-w.feed.done

		r := w.feed.result()

		return r.res, r.err
	}

	reply := make(chan builtResult, 1)
	w.feed.in <- feedItem{reply: reply}
	w.mu.Unlock()

	r := <-reply

	return r.res, r.err
}

// encode is the histogram's file form, empty for an empty histogram.
func encode(h *metrics.Histogram) (string, error) {
	if h == nil || h.TotalCount() == 0 {
		return "", nil
	}

	return metrics.EncodeHistogram(h)
}

// span is a phase's intervals whose histograms are logged together: width
// of them from first, n so far, with the merge of their histograms.
type span struct {
	first, width, n int
	names           []string
	hist, svc       []*metrics.Histogram
}

// spanWidth is the width of a span starting at interval index of a phase
// whose results points hold group intervals (a power of two): the largest
// power of two that is at most group and divides index. A span so chosen
// lies within one point of the results, now and after any later merge of
// points (which only doubles group), so the histograms of the points are
// exactly those of their spans.
func spanWidth(index, group int) int {
	g := max(1, group)
	for g > 1 && index%g != 0 {
		g /= 2
	}

	return g
}

// countGroup is the width of a phase's points once index intervals were
// merged, as the rule on their number alone makes it (see Points): the
// least power of two g with index/g < points. The rule on their size only
// widens them sooner, so this is a width the points have at least, known
// without waiting for the builder (which may lag a few records behind).
func countGroup(index, points int) int {
	g := 1
	for index/g >= points {
		g *= 2
	}

	return g
}

// add merges an interval's histograms into the span.
func (sp *span) add(iv metrics.Interval, svc *metrics.Interval) {
	sp.n++

	if sp.hist == nil {
		sp.hist = make([]*metrics.Histogram, len(iv.Ops))
		sp.names = make([]string, len(iv.Ops))

		for i, o := range iv.Ops {
			sp.names[i] = o.Name
		}
	}

	for i, o := range iv.Ops {
		sp.hist[i] = mergeInto(sp.hist[i], o.Hist, sp.width)
	}

	if svc == nil {
		return
	}

	if sp.svc == nil {
		sp.svc = make([]*metrics.Histogram, len(iv.Ops))
	}

	for i := range min(len(svc.Ops), len(iv.Ops)) {
		sp.svc[i] = mergeInto(sp.svc[i], svc.Ops[i].Hist, sp.width)
	}
}

// mergeInto adds h to acc (nil: none yet) and returns it. A span of one
// interval keeps the caller's histogram itself, as before spans, which is
// encoded before Interval returns.
func mergeInto(acc, h *metrics.Histogram, width int) *metrics.Histogram {
	switch {
	case h == nil:
		return acc
	case acc == nil && width == 1:
		return h
	case acc == nil:
		return h.Clone()
	}

	// A histogram of the engine's own geometry merges without loss.
	acc.Merge(h)

	return acc
}

// encode is the file form of operation i's histograms in the span.
func (sp *span) encode(i int) (hist, svc string, err error) {
	if i < len(sp.hist) {
		if hist, err = encode(sp.hist[i]); err != nil {
			return "", "", err
		}
	}

	if i < len(sp.svc) {
		svc, err = encode(sp.svc[i])
	}

	return hist, svc, err
}

// flush writes the histograms of phase's open span, if it has one, so
// that the intervals it deferred are complete in the log. The caller holds
// pmu.
func (w *Writer) flush(phase int) {
	sp := w.spans[phase]
	if sp == nil {
		return
	}

	delete(w.spans, phase)

	rec := histogramsRecord{
		Type: typeHists, Run: w.run, Phase: phase, First: sp.first, Last: sp.first + sp.n - 1,
		Operations: make([]histRecord, len(sp.hist)),
	}

	for i := range sp.hist {
		h, s, err := sp.encode(i)
		if err != nil {
			w.fail(fmt.Errorf("histograms of intervals %d to %d of phase %d: %w", rec.First, rec.Last, phase, err))
			return
		}

		rec.Operations[i] = histRecord{Name: sp.names[i], Histogram: h, ServiceHistogram: s}
	}

	_ = w.write(rec, typeHists, true, nil)
}

// flushAll flushes the open spans of every phase, in phase order.
func (w *Writer) flushAll() {
	w.pmu.Lock()
	defer w.pmu.Unlock()

	phases := make([]int, 0, len(w.spans))
	for p := range w.spans {
		phases = append(phases, p)
	}

	slices.Sort(phases)

	for _, p := range phases {
		w.flush(p)
	}
}

// Block writes one growth block of a phase.
func (w *Writer) Block(b BlockRecord) {
	b.Type, b.Run = typeBlock, w.run
	_ = w.write(b, typeBlock, false, nil)
}

// EndPhase writes a phase's closing record and syncs the log.
func (w *Writer) EndPhase(e PhaseEnd) {
	e.Type, e.Run = typePhaseEnd, w.run

	w.pmu.Lock()
	w.flush(e.Phase)
	w.pmu.Unlock()

	_ = w.write(e, typePhaseEnd, true, nil)
}

// Shard records which shard of a distributed run the log is of.
func (w *Writer) Shard(r ShardRecord) {
	r.Type, r.Run = typeShard, w.run
	_ = w.write(r, typeShard, false, nil)
}

// Finish writes the final record, syncs and closes the log, and returns
// the first error the writer met.
func (w *Writer) Finish(e End) error {
	e.Type, e.Run = typeEnd, w.run
	w.flushAll()
	_ = w.write(e, typeEnd, true, nil)

	return w.Close()
}

// Close syncs and closes the log without a final record (a log that Build
// then reads as cut short) and returns the first error the writer met.
func (w *Writer) Close() error {
	w.flushAll()

	w.mu.Lock()
	defer w.mu.Unlock()

	if w.f == nil {
		return w.err
	}

	close(w.feed.in)

	if err := w.f.Sync(); err != nil && w.err == nil {
		w.err = fmt.Errorf("run log %s: %w", w.path, err)
	}

	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("run log %s: %w", w.path, err)
	}

	w.f = nil

	return w.err
}

// fail keeps the first error.
func (w *Writer) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()

	if w.err == nil {
		w.err = fmt.Errorf("run log %s: %w", w.path, err)
	}
}

// errClosed is the error of a write after Close.
var errClosed = errors.New("written after it was closed")

// write appends one record of type typ, masked as the results file is (see
// result.SanitizeJSON), in a single write so that a killed process leaves
// whole lines, and syncs when sync is set or the last sync is SyncEvery
// old. Each record written goes to the builder, in the order of the file:
// an interval as live, the measurements it encodes, any other as the line.
func (w *Writer) write(rec any, typ string, sync bool, live *liveInterval) error {
	data, err := json.Marshal(rec)
	if err == nil {
		data, err = result.SanitizeJSON(data, w.secrets)
	}

	w.mu.Lock()
	defer w.mu.Unlock()

	switch {
	case w.err != nil:
		return w.err
	case w.f == nil:
		w.err = fmt.Errorf("run log %s: %w", w.path, errClosed)
		return w.err
	case err != nil:
		w.err = fmt.Errorf("run log %s: %w", w.path, err)
		return w.err
	}

	if _, err := w.f.Write(append(data, '\n')); err != nil {
		w.err = fmt.Errorf("run log: %w", err)
		return w.err
	}

	w.lines++
	w.feed.in <- feedItem{n: w.lines, typ: typ, data: data, live: live}

	if now := time.Now(); sync || now.Sub(w.lastSync) >= SyncEvery {
		if err := w.f.Sync(); err != nil {
			w.err = fmt.Errorf("run log: %w", err)
			return w.err
		}

		w.lastSync = now
	}

	return nil
}
