package runlog

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/results/result"
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
	// secrets are the values of the workload's secret parameters, from
	// the header, masked in every record (an error message in an interval
	// or the end record may quote a filter the value was substituted into).
	secrets redact.Known
}

// Create creates (or truncates) the run log at path, creating missing
// directories, and writes its header. h's Type, Format, Version and
// SchemaVersion are filled in, and RunID when it is empty.
func Create(path string, h Header) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating run log %s: %w", path, err)
	}

	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating run log: %w", err)
	}

	w := &Writer{f: f, path: path, lastSync: time.Now(), described: map[int]bool{}, feed: newFeeder(path)}
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

	w.mu.Lock()
	first := !w.described[phase]
	w.described[phase] = true
	w.mu.Unlock()

	for i, s := range iv.Ops {
		o := opRecord{Name: s.Name, Count: s.Count, Docs: s.Docs, Clamped: s.Clamped}
		if len(s.Errors) > 0 {
			o.Errors = s.Errors
		}

		if first {
			o.Unit, o.Steps = s.Unit, s.Steps
		}

		var err error
		if o.Histogram, err = encode(s.Hist); err == nil && svc != nil && i < len(svc.Ops) {
			o.ServiceHistogram, err = encode(svc.Ops[i].Hist)
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
// Builder.Result): those Build would read from the log, without reading it.
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

// Block writes one growth block of a phase.
func (w *Writer) Block(b BlockRecord) {
	b.Type, b.Run = typeBlock, w.run
	_ = w.write(b, typeBlock, false, nil)
}

// EndPhase writes a phase's closing record and syncs the log.
func (w *Writer) EndPhase(e PhaseEnd) {
	e.Type, e.Run = typePhaseEnd, w.run
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
	_ = w.write(e, typeEnd, true, nil)

	return w.Close()
}

// Close syncs and closes the log without a final record (a log that Build
// then reads as cut short) and returns the first error the writer met.
func (w *Writer) Close() error {
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
