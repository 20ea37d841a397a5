// Package result defines the results file, the JSON document a benchmark run
// leaves behind. It is the contract between commands: report and compare read
// nothing but these files, so every number in them is derived from the
// recorded histograms and counters (see the New* builders) and can be
// re-verified from them (see Result.Check).
package result

import (
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// SchemaVersion is the version of the results file format this package
// writes and the only one it reads. It changes only when a change would make
// older readers misread a file.
const SchemaVersion = 1

// Status values say how a run ended.
const (
	// StatusCompleted means the run did everything the workload asked for.
	StatusCompleted = "completed"
	// StatusInterrupted means the user stopped the run (for example with
	// Ctrl-C); the measurements up to that point are valid.
	StatusInterrupted = "interrupted"
	// StatusAborted means mongobench stopped the run because of an error;
	// StatusReason says which.
	StatusAborted = "aborted"
	// StatusIncomplete means the results were rebuilt from a run log that
	// ends before the run did (the process was killed, the machine went
	// down): the figures are exact for the intervals the log holds, and
	// StatusReason says where it ends.
	StatusIncomplete = "incomplete"
)

// Result kinds say what a results file holds (Result.ResultKind, written
// as the top-level "kind"). They are the contract's own names, independent
// of the target kinds of the launcher; files written before the field
// existed said "matrix" as their target kind instead, and still read as
// matrix results.
const (
	// KindRun is a single run on one target: Phases hold the measurements
	// and Target.Kind names the target's kind.
	KindRun = "run"
	// KindMatrix is a comparison run, variants × targets in rounds: the
	// Matrix's trials, each a KindRun result, hold the measurements; the
	// targets and their kinds are listed in the Matrix.
	KindMatrix = "matrix"
)

// Phase names used by the run engine. Other names are allowed.
const (
	// PhaseLoad is the phase that inserts the initial data set.
	PhaseLoad = "load"
	// PhaseRun is the main measured phase; its operations are copied to
	// Result.Operations.
	PhaseRun = "run"
)

// Result is the whole results file.
type Result struct {
	// SchemaVersion is SchemaVersion for files this package writes.
	SchemaVersion int `json:"schema_version"`
	// MongobenchVersion is the version of the binary that ran the benchmark.
	MongobenchVersion string `json:"mongobench_version"`
	// ResultKind is what the file holds, KindRun or KindMatrix (see
	// Kind, which also answers for results without it). Marshal always
	// writes it; Read sets it on older files.
	ResultKind string `json:"kind,omitempty"`
	// Workload describes what was run.
	Workload Workload `json:"workload"`
	// Target describes the server that was measured.
	Target Target `json:"target"`
	// StartedAt is when the run started (before connecting or loading).
	StartedAt time.Time `json:"started_at"`
	// DurationS is the wall-clock length of the whole run in seconds.
	DurationS float64 `json:"duration_s"`
	// Seed is the random seed, so the same data and operation sequence can
	// be generated again.
	Seed int64 `json:"seed"`
	// Concurrency is the number of workers issuing operations.
	Concurrency int `json:"concurrency"`
	// Status is one of the Status constants.
	Status string `json:"status"`
	// StatusReason explains a status other than completed.
	StatusReason string `json:"status_reason"`
	// Phases are the measured phases in the order they ran.
	Phases []Phase `json:"phases"`
	// Explain holds each query operation's normalized plan.
	Explain []Explain `json:"explain,omitempty"`
	// Server holds what was sampled from the server during the run.
	Server *Server `json:"server,omitempty"`
	// Findings are the top observations (collection scans, saturated
	// schedules, errors), most important first.
	Findings []Finding `json:"findings,omitempty"`
	// Matrix holds a comparison run (variants × targets in trials); its
	// trials carry the phases, so Phases is empty then.
	Matrix *Matrix `json:"matrix,omitempty"`
	// Durability holds the durability phase's counts, one per target (and
	// variant) crashed; empty when the workload has no durability phase.
	Durability []Durability `json:"durability,omitempty"`
	// Thresholds are the outcomes of the workload's thresholds, checked on
	// the run's phases; empty when the workload has none.
	Thresholds []ThresholdOutcome `json:"thresholds,omitempty"`
	// Shard is set when the run was one shard of a distributed run.
	Shard *Shard `json:"shard,omitempty"`
	// Merged is set on a result merged from shards (mongobench merge).
	Merged *Merged `json:"merged,omitempty"`
	// Operations is a copy of the main phase's operations (see MainPhase),
	// so that simple readers need not know about phases.
	Operations []Operation `json:"operations"`
	// Client is the external client stack that ran the measured phases;
	// nil for mongobench's Go engine (client.go).
	Client *Client `json:"client,omitempty"`
	// Label names the code or setup the run measured (run --label, e.g.
	// "v0.5.0"), and Commit the commit id CI gave the run in its
	// environment, so that a point of a history names what it measured.
	Label  string `json:"label,omitempty"`
	Commit string `json:"commit,omitempty"`
	// Capacity is set on the results of `mongobench capacity`: its
	// search, sweep and verdict (capacity.go).
	Capacity *Capacity `json:"capacity,omitempty"`
	// CapacityFollower is set instead of Capacity on the results of a
	// shard other than 0 of a sharded capacity search (capacity.go).
	CapacityFollower *CapacityFollower `json:"capacity_follower,omitempty"`
}

// Workload identifies the workload that was run.
type Workload struct {
	// Name is the workload's name.
	Name string `json:"name"`
	// File is the path of the workload file, if it came from one.
	File string `json:"file"`
	// CompareOn names the figure the workload's question is about
	// (run.compare_on): "iteration" or an operation's name, which analysis
	// and printing put first. Empty when the workload names none.
	CompareOn string `json:"compare_on,omitempty"`
	// Spec is the fully parsed workload, defaults included, so a reader can
	// see exactly what ran without the original file. Any JSON-encodable
	// value is accepted; Read returns it as generic JSON values
	// (map[string]any, []any, float64, ...).
	Spec any `json:"spec"`
	// Source is the workload file's text as it was when the run started, so
	// that a run can be traced to, and repeated from, exactly what produced
	// it, comments included.
	Source string `json:"source,omitempty"`
}

// Target describes the measured server.
type Target struct {
	// Kind is the kind of the measured target as the launcher's registry
	// named it (embedded, uri, ...). The contract records it and checks
	// only its shape, so that it need not know the launcher. Empty for a
	// matrix result, whose targets the Matrix lists.
	Kind string `json:"kind"`
	// URI is the connection string with the password removed. WriteFile
	// redacts it again in case a caller forgot.
	URI string `json:"uri"`
	// ServerVersion is the version the server reported.
	ServerVersion string `json:"server_version"`
	// Backend names the storage behind a MongoDB-compatible server (for
	// example FerretDB's PostgreSQL or SQLite backend), if known.
	Backend string `json:"backend"`
	// Notes are free-form remarks that matter when comparing results, such
	// as "server runs in the same process as the client".
	Notes []string `json:"notes"`
}

// Phase is one measured part of a run, such as loading or running.
type Phase struct {
	// Name is the phase name, e.g. PhaseLoad or PhaseRun.
	Name string `json:"name"`
	// StartedAt is when measurement started, after any warmup.
	StartedAt time.Time `json:"started_at"`
	// DurationS is the measured length of the phase in seconds, warmup
	// excluded; it spans the phase's intervals.
	DurationS float64 `json:"duration_s"`
	// WarmupS is how long the phase ran before StartedAt with its
	// measurements discarded.
	WarmupS float64 `json:"warmup_s"`
	// Operations are the per-operation totals over the whole phase.
	Operations []Operation `json:"operations"`
	// Intervals are the per-tick measurements, contiguous and in order.
	Intervals []Interval `json:"intervals"`

	// Model is the load model: closed, rate, ramping-rate,
	// ramping-concurrency, blocks, or load for loading phases.
	Model string `json:"model,omitempty"`
	// Excluded marks a phase run with measure: false (a warm-up phase):
	// kept for the record, left out of summaries and comparisons.
	Excluded bool `json:"excluded,omitempty"`
	// Schedule says how well an open-loop schedule was kept.
	Schedule *Schedule `json:"schedule,omitempty"`
	// Targets are the planned rate or concurrency at each interval's end.
	Targets []PlanPoint `json:"targets,omitempty"`
	// Blocks are the growth blocks of a blocks phase.
	Blocks []Block `json:"blocks,omitempty"`
	// Background are the jobs run beside the phase's operations.
	Background []Background `json:"background,omitempty"`
}

// Interval is the measurements between two ticks.
type Interval struct {
	// Start is when the interval began.
	Start time.Time `json:"start"`
	// End is when the interval ended.
	End time.Time `json:"end"`
	// ElapsedS is the time from the phase's StartedAt to End in seconds,
	// the x coordinate for time-series plots.
	ElapsedS float64 `json:"elapsed_s"`
	// Operations are the per-operation measurements of the interval, in the
	// same order as the phase's operations.
	Operations []Operation `json:"operations"`
}

// Operation is the measurements of one named operation over a phase or an
// interval.
type Operation struct {
	// Name is the operation name from the workload.
	Name string `json:"name"`
	// Count is the number of successful operations.
	Count int64 `json:"count"`
	// Errors counts failed operations by error kind (see package errkind).
	// Failed operations are not in Count, OpsPerSec or the latencies.
	Errors map[string]int64 `json:"errors"`
	// Docs is the number of documents returned or written.
	Docs int64 `json:"docs"`
	// Clamped is how many latencies fell outside the histogram range and
	// were recorded at its bound; it is omitted when zero.
	Clamped int64 `json:"clamped,omitempty"`
	// OpsPerSec is Count divided by the length of the phase or interval.
	OpsPerSec float64 `json:"ops_per_sec"`
	// LatencyUS summarises Histogram, in microseconds.
	LatencyUS Latency `json:"latency_us"`
	// Histogram is the latency histogram of successful operations in
	// microseconds, HdrHistogram V2 compressed and base64 encoded.
	Histogram string `json:"histogram"`
	// ServiceLatencyUS and ServiceHistogram are the service time (from
	// the actual send, queueing excluded) of operations in open-loop
	// phases, where LatencyUS is the response time from the scheduled
	// start. They are absent for closed-loop phases, where both are equal.
	ServiceLatencyUS *Latency `json:"service_latency_us,omitempty"`
	ServiceHistogram string   `json:"service_histogram,omitempty"`
	// Decode is the read operation's decode mode (raw, map, struct) when
	// it maps documents, and USPerDoc the mean latency per returned
	// document: mean × count / docs.
	Decode   string  `json:"decode,omitempty"`
	USPerDoc float64 `json:"us_per_doc,omitempty"`
	// Unit is empty for an operation the workload names, or says that the
	// entry measures a group of operations as one unit: UnitIteration (a
	// sequence's whole iteration, from its intended start to the end of its
	// last operation), UnitComposite (a composite operation) or
	// UnitDecode (the client's decode time of one read operation). Steps
	// names the phase's entries the unit is made of, in order; it is given
	// on the phase's operations, not repeated in intervals. A unit whose
	// step failed counts as one error of the first failure's kind; its
	// Docs are its steps' documents.
	Unit  string   `json:"unit,omitempty"`
	Steps []string `json:"steps,omitempty"`
}

// Compared reports whether the entry is a contender of a comparison of
// operations: an operation the workload names (units are sums of them),
// or, when decode is set, an operation's decode-time entry (UnitDecode
// with its one step).
func (o *Operation) Compared(decode bool) bool {
	if decode {
		return o.Unit == UnitDecode && len(o.Steps) == 1
	}

	return o.Unit == ""
}

// Kinds of measured units (Operation.Unit).
const (
	UnitIteration = "iteration"
	UnitComposite = "composite"
	// UnitDecode is the decode time of its one step, a read operation
	// that maps the documents it returns: the client's own time on
	// them (the Go engine: timed around each decode alone; an external
	// client: as its adapter reports it, docs/clients.md), recorded
	// once per successful execution with the step's documents, beside
	// the step's end-to-end latency so that the client's share shows.
	UnitDecode = "decode"
)

// Latency is the file form of metrics.Latency: a summary of an operation's
// histogram in microseconds, stored so that readers need not decode the
// histogram for the usual numbers. Check verifies it against the histogram.
type Latency struct {
	// Mean is the average latency.
	Mean float64 `json:"mean"`
	// P50 is the median latency.
	P50 float64 `json:"p50"`
	// P90 is the 90th percentile latency.
	P90 float64 `json:"p90"`
	// P95 is the 95th percentile latency.
	P95 float64 `json:"p95"`
	// P99 is the 99th percentile latency.
	P99 float64 `json:"p99"`
	// P999 is the 99.9th percentile latency.
	P999 float64 `json:"p999"`
	// Max is the highest latency.
	Max float64 `json:"max"`
}

// latencyOf converts a metrics summary to its file form.
func latencyOf(l metrics.Latency) Latency {
	return Latency{Mean: l.Mean, P50: l.P50, P90: l.P90, P95: l.P95, P99: l.P99, P999: l.P999, Max: l.Max}
}

// SetDecode records the decode mode of an operation that maps the documents
// it reads and, when it read some, the figure that goes with it: mean
// latency per document (all of an operation's time spread over its
// documents).
func (o *Operation) SetDecode(mode string) {
	o.Decode = mode
	if mode != "" && o.Docs > 0 {
		o.USPerDoc = o.LatencyUS.Mean * float64(o.Count) / float64(o.Docs)
	}
}

// NewOperation converts one operation's measurements over a period of
// seconds into its file form. The latency summary and histogram string are
// computed from s.Hist, and OpsPerSec is 0 for an empty period.
func NewOperation(s metrics.OpStats, seconds float64) (Operation, error) {
	if s.Hist == nil {
		return Operation{}, fmt.Errorf("operation %q: no histogram", s.Name)
	}
	if got := s.Hist.TotalCount(); got != s.Count {
		return Operation{}, fmt.Errorf("operation %q: histogram holds %d values but count is %d", s.Name, got, s.Count)
	}
	enc, err := metrics.EncodeHistogram(s.Hist)
	if err != nil {
		return Operation{}, fmt.Errorf("operation %q: %w", s.Name, err)
	}
	errs := make(map[string]int64, len(s.Errors))
	for k, v := range s.Errors {
		errs[k] = v
	}
	return Operation{
		Name:      s.Name,
		Count:     s.Count,
		Errors:    errs,
		Docs:      s.Docs,
		Clamped:   s.Clamped,
		OpsPerSec: rate(s.Count, seconds),
		LatencyUS: latencyOf(metrics.Summarize(s.Hist)),
		Histogram: enc,
		Unit:      s.Unit,
		Steps:     slices.Clone(s.Steps),
	}, nil
}

// rate returns count per second, or 0 for a non-positive period (JSON cannot
// hold the infinities a division would give).
func rate(count int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(count) / seconds
}

// NewInterval converts a metrics interval into its file form; phaseStart is
// the phase's StartedAt, from which ElapsedS is measured.
func NewInterval(iv metrics.Interval, phaseStart time.Time) (Interval, error) {
	// Wall-clock times only (Round(0) drops the monotonic reading): the
	// file keeps only those, so every figure derived from times must be
	// computed from them for Check to find the file consistent.
	iv.Start, iv.End, phaseStart = iv.Start.Round(0), iv.End.Round(0), phaseStart.Round(0)
	secs := iv.End.Sub(iv.Start).Seconds()
	out := Interval{
		Start:      iv.Start,
		End:        iv.End,
		ElapsedS:   iv.End.Sub(phaseStart).Seconds(),
		Operations: make([]Operation, 0, len(iv.Ops)),
	}
	for _, s := range iv.Ops {
		op, err := NewOperation(s, secs)
		if err != nil {
			return Interval{}, fmt.Errorf("interval ending %s: %w", iv.End.Format(time.RFC3339Nano), err)
		}
		op.Steps = nil // the phase's operations carry them
		out.Operations = append(out.Operations, op)
	}
	return out, nil
}

// NewPhase builds a phase from a sequence of contiguous intervals, such as
// (*metrics.Registry).Intervals. The phase starts at the first interval's
// start and lasts until the last one's end; its operation totals are the sum
// of the intervals, histograms merged, so the phase is consistent with its
// intervals by construction. warmup is recorded as WarmupS only.
//
// With no intervals the phase has zero duration and no operations.
func NewPhase(name string, warmup time.Duration, intervals iter.Seq2[metrics.Interval, error]) (Phase, error) {
	p := Phase{Name: name, WarmupS: warmup.Seconds(), Operations: []Operation{}, Intervals: []Interval{}}
	var totals []metrics.OpStats
	first := true
	var end time.Time
	for iv, err := range intervals {
		if err != nil {
			return Phase{}, fmt.Errorf("phase %q: %w", name, err)
		}
		iv.Start, iv.End = iv.Start.Round(0), iv.End.Round(0)
		if first {
			p.StartedAt = iv.Start
			totals = make([]metrics.OpStats, len(iv.Ops))
			for i, s := range iv.Ops {
				totals[i] = metrics.OpStats{Name: s.Name, Errors: map[string]int64{}, Hist: metrics.NewHistogram(), Unit: s.Unit, Steps: s.Steps}
			}
			first = false
		}
		if len(iv.Ops) != len(totals) {
			return Phase{}, fmt.Errorf("phase %q: interval ending %s has %d operations, the first had %d",
				name, iv.End.Format(time.RFC3339Nano), len(iv.Ops), len(totals))
		}
		for i, s := range iv.Ops {
			t := &totals[i]
			if s.Name != t.Name {
				return Phase{}, fmt.Errorf("phase %q: interval ending %s has operation %q where the first had %q",
					name, iv.End.Format(time.RFC3339Nano), s.Name, t.Name)
			}
			t.Count += s.Count
			t.Docs += s.Docs
			t.Clamped += s.Clamped
			for k, v := range s.Errors {
				t.Errors[k] += v
			}
			if s.Hist != nil {
				if dropped := t.Hist.Merge(s.Hist); dropped != 0 {
					return Phase{}, fmt.Errorf("phase %q: operation %q: %d latencies outside the histogram range", name, s.Name, dropped)
				}
			}
		}
		fi, err := NewInterval(iv, p.StartedAt)
		if err != nil {
			return Phase{}, fmt.Errorf("phase %q: %w", name, err)
		}
		p.Intervals = append(p.Intervals, fi)
		end = iv.End
	}
	if first {
		return p, nil
	}
	p.DurationS = end.Sub(p.StartedAt).Seconds()
	for _, t := range totals {
		op, err := NewOperation(t, p.DurationS)
		if err != nil {
			return Phase{}, fmt.Errorf("phase %q: %w", name, err)
		}
		p.Operations = append(p.Operations, op)
	}
	return p, nil
}

// AddPhase appends p to the result and refreshes Operations from the main
// phase.
func (r *Result) AddPhase(p Phase) {
	r.Phases = append(r.Phases, p)
	if m := r.MainPhase(); m != nil {
		r.Operations = append([]Operation(nil), m.Operations...)
	}
}

// MainPhase returns the phase whose operations are the headline numbers: the
// last phase named PhaseRun, else the last measured phase that is not a
// load, or else the last phase. It returns nil when there are no phases.
func (r *Result) MainPhase() *Phase {
	for i := len(r.Phases) - 1; i >= 0; i-- {
		if r.Phases[i].Name == PhaseRun {
			return &r.Phases[i]
		}
	}
	for i := len(r.Phases) - 1; i >= 0; i-- {
		if p := &r.Phases[i]; !p.Excluded && !p.IsLoad() {
			return p
		}
	}
	if len(r.Phases) == 0 {
		return nil
	}
	return &r.Phases[len(r.Phases)-1]
}
