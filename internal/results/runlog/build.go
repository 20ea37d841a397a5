package runlog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// maxLine bounds one record, so that a file that is not a run log cannot
// make Build read gigabytes into one line. A header holds the workload
// (its source text and parsed form), the largest record by far.
const maxLine = 64 << 20

// Build turns the run log at path into the results it describes. A log
// with its final record gives the run's own status; a log cut short (the
// process was killed, or the machine stopped) gives status incomplete, with
// the reason saying where it ends, and every phase that has intervals:
// summaries, growth blocks and service times are recomputed exactly from
// the interval histograms in both cases, so the results cannot disagree
// with the log. Long phases keep a bounded number of points in the results
// (see Points), adjacent intervals merged exactly.
//
// The log is read once, a record at a time, into a Builder: the same one a
// Writer keeps up to date as the run writes its log, so a run's own results
// and the results finish rebuilds from its log are the same. Memory does not
// grow with the log's length. A last line without its newline is the one
// being written when the process died: it is ignored. Any other unreadable
// line is an error that names the file and the line ("x.runlog.jsonl:57: ...").
//
// A log spliced from several is refused, so that its results cannot
// silently mix runs: every record must carry the header's run id (version
// 2; a version 1 log has none to check), and each interval of a phase must
// follow the previous one, index +1 and start within Continuity of its
// end.
func Build(ctx context.Context, path string) (*result.Result, error) {
	return build(ctx, path, defaultLimits())
}

// build is Build with the bounds lim on the points (see limits).
func build(ctx context.Context, path string, lim limits) (*result.Result, error) {
	b := newBuilder(lim)

	if err := readLines(ctx, path, b.record); err != nil {
		return nil, err
	}

	if b.header == nil {
		return nil, fmt.Errorf("%s: empty file; not a mongobench run log", path)
	}

	res, err := b.Result()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}

	return res, nil
}

// Builder holds the results of a run log as far as it has been read (or
// written): each phase's totals, growth blocks and bounded interval points,
// merged as the records arrive. Result turns it into results at any moment,
// in time that depends on the number of operations and points, not on the
// length of the run, which is what lets a stopped run write its results at
// once however long it ran. A Builder is not safe for concurrent use; a
// Writer feeds its own from one goroutine, off the engine's ticker (merging
// the points of thousands of operations takes seconds).
type Builder struct {
	lim    limits
	header *Header
	phases []*phaseBuilder
	end    *End
	shard  *ShardRecord

	// lastEnd is the end of the last interval in the log, and lastPhase
	// the phase it belongs to, for an incomplete log's reason.
	lastEnd   time.Time
	lastPhase string
	// records counts the intervals logged.
	records int

	// prevEnd is the end of each phase's last interval, for continuity.
	prevEnd map[int]time.Time
}

// newBuilder returns a Builder whose points are bounded by lim.
func newBuilder(lim limits) *Builder { return &Builder{lim: lim} }

// lineFunc handles one record; typ is its "type".
type lineFunc func(n int, typ string, data []byte) error

// readLines calls f for each complete line of the log.
func readLines(ctx context.Context, path string, f lineFunc) error {
	file, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read run log: %w", err)
	}
	defer file.Close()

	r := bufio.NewReaderSize(file, 1<<20)

	var line bytes.Buffer

	for n := 1; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return fmt.Errorf("reading run log %s: %w", path, context.Cause(ctx))
		}

		line.Reset()

		complete, err := readLine(r, &line)
		if err != nil {
			return fmt.Errorf("read run log %s:%d: %w", path, n, err)
		}

		if !complete {
			return nil // end of file, or a last line cut short
		}

		var head struct {
			Type string `json:"type"`
		}

		if err := json.Unmarshal(line.Bytes(), &head); err != nil {
			if n == 1 {
				return fmt.Errorf("%s: line 1 is not JSON; not a mongobench run log", path)
			}

			return fmt.Errorf("%s:%d: %w", path, n, err)
		}

		if err := f(n, head.Type, line.Bytes()); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
}

// readLine reads one line into buf without its newline; complete is false
// at the end of the file and for a last line without a newline.
func readLine(r *bufio.Reader, buf *bytes.Buffer) (complete bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		buf.Write(chunk)

		if buf.Len() > maxLine {
			return false, fmt.Errorf("longer than %d MiB; not a run log record", maxLine>>20)
		}

		switch {
		case err == nil:
			buf.Truncate(buf.Len() - 1)
			return true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return false, nil
		default:
			return false, err
		}
	}
}

// record reads one record of the log (its line n), of type typ.
func (s *Builder) record(n int, typ string, data []byte) error {
	if n == 1 {
		return s.readHeader(data)
	}

	switch typ {
	case typePhase:
		var p PhaseStart
		if err := strictUnmarshal(data, &p); err != nil {
			return err
		}

		if err := s.sameRun(p.Run, fmt.Sprintf("phase %d", p.Phase)); err != nil {
			return err
		}

		if p.Phase != len(s.phases) {
			return fmt.Errorf("phase %d opened where phase %d was expected", p.Phase, len(s.phases))
		}

		s.phases = append(s.phases, newPhaseBuilder(p, s.lim))
	case typeInterval:
		var rec intervalRecord
		if err := strictUnmarshal(data, &rec); err != nil {
			return err
		}

		if err := s.sameRun(rec.Run, fmt.Sprintf("interval %d", rec.Index)); err != nil {
			return err
		}

		p, err := s.phase(rec.Phase)
		if err != nil {
			return err
		}

		return s.logged(p, &rec)
	case typeHists:
		return s.loggedHistograms(data)
	case typeBlock:
		var b BlockRecord
		if err := strictUnmarshal(data, &b); err != nil {
			return err
		}

		if err := s.sameRun(b.Run, fmt.Sprintf("block %d", b.Index)); err != nil {
			return err
		}

		return s.block(b)
	case typePhaseEnd:
		var e PhaseEnd
		if err := strictUnmarshal(data, &e); err != nil {
			return err
		}

		if err := s.sameRun(e.Run, fmt.Sprintf("the end of phase %d", e.Phase)); err != nil {
			return err
		}

		p, err := s.phase(e.Phase)
		if err != nil {
			return err
		}

		p.end = &e
	case typeEnd:
		var e End
		if err := strictUnmarshal(data, &e); err != nil {
			return err
		}

		if err := s.sameRun(e.Run, "the end record"); err != nil {
			return err
		}

		s.end = &e
	case typeShard:
		var r ShardRecord
		if err := strictUnmarshal(data, &r); err != nil {
			return err
		}

		if err := s.sameRun(r.Run, "the shard record"); err != nil {
			return err
		}

		s.shard = &r
	case typeHeader:
		return errors.New("a second header: two run logs written into one file?")
	default:
		return fmt.Errorf("unknown record type %q (this mongobench reads run log version %d)", typ, Version)
	}

	return nil
}

// readHeader checks and keeps the first line.
func (s *Builder) readHeader(data []byte) error {
	var h Header
	if err := json.Unmarshal(data, &h); err != nil {
		return err
	}

	var spec struct {
		Workload struct {
			Spec json.RawMessage `json:"spec"`
		} `json:"workload"`
	}

	// The parsed workload stays the JSON it was written as, key order
	// kept, as result.Sanitize leaves it.
	if err := json.Unmarshal(data, &spec); err == nil && len(spec.Workload.Spec) > 0 && string(spec.Workload.Spec) != "null" {
		h.Workload.Spec = spec.Workload.Spec
	}

	switch {
	case h.Type != typeHeader || h.Format != Format:
		return errors.New("no run log header; not a mongobench run log")
	case h.Version < oldestVersion || h.Version > Version:
		return fmt.Errorf("run log version %d, but this mongobench reads versions %d to %d; use the mongobench release that wrote it", h.Version, oldestVersion, Version)
	case h.Version >= 2 && h.RunID == "":
		return fmt.Errorf("run log version %d without a run_id in its header", h.Version)
	case h.Version < 2 && h.RunID != "":
		return fmt.Errorf("run log version %d with a run_id, which version %d added: a header edited or from another log?", h.Version, 2)
	case h.SchemaVersion != result.SchemaVersion:
		return fmt.Errorf("results schema_version %d, but this mongobench builds only version %d", h.SchemaVersion, result.SchemaVersion)
	}

	s.header = &h

	return nil
}

// interval merges interval index of phase p: iv its response times, svc
// its service times (nil entries where there are none). Both the intervals
// read from a log and those a Writer has just logged come through here, so
// a run's own results are checked as finish checks its log.
func (s *Builder) interval(p *phaseBuilder, index int, iv metrics.Interval, svc []*metrics.Histogram,
	target *result.PlanPoint, pacing []PacingRecord,
) error {
	if want := p.seen + len(p.deferred); index != want {
		return fmt.Errorf("phase %q: interval %d where %d was expected", p.start.Name, index, want)
	}

	if err := s.continues(p.start.Phase, index, iv.Start, iv.End); err != nil {
		return fmt.Errorf("phase %q: %w", p.start.Name, err)
	}

	if err := p.add(index, iv, svc, target, pacing); err != nil {
		return err
	}

	s.records++
	s.lastEnd, s.lastPhase = iv.End, p.start.Name

	return nil
}

// sameRun checks that a record (what, for the message) belongs to the
// header's run: a record with another run id, or with none in a log that
// has one, was spliced in from another log, or the header was. A version 1
// log has no run ids, and its records must have none either.
func (s *Builder) sameRun(run, what string) error {
	want := s.header.RunID

	switch {
	case run == want:
		return nil
	case want == "":
		return fmt.Errorf("%s belongs to run %s, but the header (line 1) is of a run log without run ids: a header from another log?", what, run)
	case run == "":
		return fmt.Errorf("%s has no run id, but the header (line 1) is of run %s: a line from an older run log?", what, want)
	}

	return fmt.Errorf("%s belongs to run %s, not %s (the header's, line 1)", what, run, want)
}

// continues checks that interval index of phase starts where the phase's
// previous interval ended (within Continuity) and does not end before it
// starts: a gap or an overlap means intervals from elsewhere were put in.
func (s *Builder) continues(phase, index int, start, end time.Time) error {
	if end.Before(start) {
		return fmt.Errorf("interval %d ends %s before it starts", index, seconds(start.Sub(end)))
	}

	if s.prevEnd == nil {
		s.prevEnd = map[int]time.Time{}
	}

	prev, ok := s.prevEnd[phase]
	s.prevEnd[phase] = end

	if !ok {
		return nil
	}

	switch gap := start.Sub(prev); {
	case gap > Continuity:
		return fmt.Errorf("interval %d starts %s after interval %d ended", index, seconds(gap), index-1)
	case gap < -Continuity:
		return fmt.Errorf("interval %d starts %s before interval %d ended", index, seconds(-gap), index-1)
	}

	return nil
}

// seconds formats d for a message: "7.0s", "0.250s".
func seconds(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.3fs", d.Seconds())
	}

	return fmt.Sprintf("%.1fs", d.Seconds())
}

// live merges an interval a Writer has just logged, given as the
// measurements it encoded rather than as the line.
func (s *Builder) live(phase, index int, iv metrics.Interval, svc []*metrics.Histogram,
	target *result.PlanPoint, pacing []PacingRecord,
) error {
	p, err := s.phase(phase)
	if err != nil {
		return err
	}

	if err := p.describe(iv.Ops, index); err != nil {
		return err
	}

	iv.Start, iv.End = iv.Start.Round(0), iv.End.Round(0)
	ops := make([]metrics.OpStats, len(iv.Ops))

	for i, o := range iv.Ops {
		if o.Hist == nil {
			o.Hist = metrics.NewHistogram()
		}

		if o.Errors == nil {
			o.Errors = map[string]int64{}
		}

		o.Unit, o.Steps = p.ops[i].Unit, p.ops[i].Steps
		ops[i] = o
	}

	iv.Ops = ops

	return s.interval(p, index, iv, svc, target, pacing)
}

// block adds a growth block, whose intervals have all been logged before it.
func (s *Builder) block(b BlockRecord) error {
	p, err := s.phase(b.Phase)
	if err != nil {
		return err
	}

	if b.FirstInterval < 0 || b.EndInterval < b.FirstInterval || b.EndInterval > p.seen {
		return fmt.Errorf("phase %q: block %d spans intervals [%d, %d), but %d were logged before it",
			p.start.Name, b.Index, b.FirstInterval, b.EndInterval, p.seen)
	}

	return p.addBlock(b)
}

// phase returns phase i, which must have been opened.
func (s *Builder) phase(i int) (*phaseBuilder, error) {
	if i < 0 || i >= len(s.phases) {
		return nil, fmt.Errorf("record of phase %d, which was not opened", i)
	}

	return s.phases[i], nil
}

// strictUnmarshal decodes a record, refusing fields this version does not
// know: a later format must not be misread as this one.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()

	return dec.Decode(v)
}

// Result returns the results of what the builder has read so far: the
// run's own status when the log's final record was read, status incomplete
// otherwise. They are the measured results, as the log records them (with
// the threshold outcomes its end record holds): findings, thresholds and
// verdicts are the finisher's (package finish), which run, finish and
// merge all call on them. It may be called any number of times, the builder going on
// afterwards.
func (s *Builder) Result() (*result.Result, error) {
	h := s.header
	if h == nil {
		return nil, errors.New("no run log header read")
	}

	res := &result.Result{
		SchemaVersion:     result.SchemaVersion,
		MongobenchVersion: h.MongobenchVersion,
		Workload:          h.Workload,
		Target:            h.Target,
		StartedAt:         h.StartedAt,
		Seed:              h.Seed,
		Concurrency:       h.Concurrency,
	}

	for _, p := range s.phases {
		ph, err := p.finish()
		if err != nil {
			return nil, err
		}

		res.AddPhase(ph)
	}

	if sh := s.shard; sh != nil {
		res.Shard, res.Concurrency = sh.Shard, sh.Concurrency
	}

	if e := s.end; e != nil {
		res.Status, res.StatusReason, res.DurationS = e.Status, e.StatusReason, e.DurationS
		res.Server, res.Explain, res.Thresholds = e.Server, e.Explain, e.Thresholds
		res.Client = e.Client
	} else {
		res.Status = result.StatusIncomplete
		res.StatusReason = s.cutShort()

		if s.lastEnd.After(h.StartedAt) {
			res.DurationS = s.lastEnd.Sub(h.StartedAt).Seconds()
		}
	}

	if res.Phases == nil {
		res.Phases = []result.Phase{}
	}

	if res.Operations == nil {
		res.Operations = []result.Operation{}
	}

	return res, nil
}

// cutShort says where a log without its final record ends.
func (s *Builder) cutShort() string {
	const why = "the run log ends before the run did (the process was killed or the machine stopped)"
	if s.records == 0 {
		return why + ", before any interval was logged"
	}

	return fmt.Sprintf("%s; the figures cover the %d intervals logged, the last one of phase %q ending at %s",
		why, s.records, s.lastPhase, s.lastEnd.UTC().Format(time.RFC3339))
}
