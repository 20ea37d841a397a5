package runlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mongobench/mongobench/internal/metrics"
	"github.com/mongobench/mongobench/internal/redact"
	"github.com/mongobench/mongobench/internal/result"
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

	// build holds the results of what was written, kept up to date record
	// by record, so that Result costs no reading of the log; lines counts
	// the records written, and buildErr is the first record build refused.
	build    *Builder
	lines    int
	buildErr error
}

// Create creates (or truncates) the run log at path, creating missing
// directories, and writes its header. h's Type, Format, Version and
// SchemaVersion are filled in.
func Create(path string, h Header) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating run log %s: %w", path, err)
	}

	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating run log: %w", err)
	}

	w := &Writer{f: f, path: path, lastSync: time.Now(), described: map[int]bool{}, build: NewBuilder()}
	h.Type, h.Format, h.Version, h.SchemaVersion = typeHeader, Format, Version, result.SchemaVersion
	h.Target.URI = redact.URI(h.Target.URI)

	if err := w.write(h, typeHeader, true); err != nil {
		_ = f.Close()
		return nil, err
	}

	return w, nil
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
	p.Type = typePhase
	_ = w.write(p, typePhase, true)
}

// Interval writes one closed interval of phase: the response-time
// interval iv and, for open-loop phases, the service-time interval svc
// (nil otherwise), with the plan point and pacing decisions made at its end.
func (w *Writer) Interval(phase, index int, iv metrics.Interval, svc *metrics.Interval, target *result.PlanPoint, pacing []PacingRecord) {
	rec := intervalRecord{
		Type: typeInterval, Phase: phase, Index: index,
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

	if w.write(rec, typeInterval, false) != nil {
		return
	}

	// The builder merges the histograms as they are, which is what it
	// would decode from the line just written (the encoding is lossless).
	svcHists := make([]*metrics.Histogram, len(iv.Ops))
	if svc != nil {
		for i := range min(len(svc.Ops), len(iv.Ops)) {
			svcHists[i] = svc.Ops[i].Hist
		}
	}

	w.mu.Lock()
	defer w.mu.Unlock()

	if w.buildErr == nil {
		if err := w.build.live(phase, index, iv, svcHists, target, pacing); err != nil {
			w.buildErr = fmt.Errorf("run log %s: line %d: %w", w.path, w.lines, err)
		}
	}
}

// Result returns the results of everything written so far (see
// Builder.Result): those Build would read from the log, without reading it.
// A run's results are made here, so that a run stopped after hours writes
// them in the time it takes to encode its phases' totals.
func (w *Writer) Result() (*result.Result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()

	if w.buildErr != nil {
		return nil, w.buildErr
	}

	return w.build.Result()
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
	b.Type = typeBlock
	_ = w.write(b, typeBlock, false)
}

// EndPhase writes a phase's closing record and syncs the log.
func (w *Writer) EndPhase(e PhaseEnd) {
	e.Type = typePhaseEnd
	_ = w.write(e, typePhaseEnd, true)
}

// Shard records which shard of a distributed run the log is of.
func (w *Writer) Shard(r ShardRecord) {
	r.Type = typeShard
	_ = w.write(r, typeShard, false)
}

// Finish writes the final record, syncs and closes the log, and returns
// the first error the writer met.
func (w *Writer) Finish(e End) error {
	e.Type = typeEnd
	_ = w.write(e, typeEnd, true)

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
// old. Every record but an interval (which Interval gives the builder
// itself) goes to the builder as the line written.
func (w *Writer) write(rec any, typ string, sync bool) error {
	data, err := json.Marshal(rec)
	if err == nil {
		data, err = result.SanitizeJSON(data)
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

	if typ != typeInterval && w.buildErr == nil {
		if err := w.build.record(w.lines, typ, data); err != nil {
			w.buildErr = fmt.Errorf("run log %s: line %d: %w", w.path, w.lines, err)
		}
	}

	if now := time.Now(); sync || now.Sub(w.lastSync) >= SyncEvery {
		if err := w.f.Sync(); err != nil {
			w.err = fmt.Errorf("run log: %w", err)
			return w.err
		}

		w.lastSync = now
	}

	return nil
}
