// Package runlog writes and reads run logs: the JSON Lines file a run
// appends to as it measures (results/foo.runlog.jsonl beside
// results/foo.json), one record per interval, so that nothing measured is
// held in memory to the end of the run and a run killed midway leaves its
// measurements on disk.
//
// A run log is the single source of a run's results file: Build turns it
// into a result.Result, whether the run completed or the log was cut short
// (status incomplete), with every summary recomputed exactly from the
// interval histograms. The format is documented in docs/results.md, "The run
// log".
package runlog

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
)

// Format names the file format in the header record, and Version is the
// version of it this package writes; it changes only when a change would
// make older readers misread a log. Version 2 added the run id that ties
// every record to its header; version 3 lets one record's histograms cover
// several intervals (see intervalRecord.Group). Build still reads version 1
// and 2 logs; a version 1 log's records it can check for continuity but
// not for identity.
const (
	Format  = "mongobench-runlog"
	Version = 3

	// oldestVersion is the oldest version Build reads.
	oldestVersion = 1
)

// Continuity is how far an interval's start may be from the previous
// interval's end in the same phase. The engine starts each interval at
// the instant the previous one ended, so they are equal in any log it
// wrote; more than this apart, the log was spliced.
const Continuity = time.Millisecond

// Suffix ends a run log's file name.
const Suffix = ".runlog.jsonl"

// PathFor returns the run log that goes with a results file:
// results/foo.json → results/foo.runlog.jsonl.
func PathFor(resultsPath string) string {
	return strings.TrimSuffix(resultsPath, filepath.Ext(resultsPath)) + Suffix
}

// MaxIntervals is the most interval points the results file keeps per
// phase: a longer phase has adjacent intervals merged (histograms added,
// counts summed) into fewer, longer points (see Points). The run log keeps
// them all.
const MaxIntervals = 600

// PointCells bounds the operation entries of a phase's interval points
// (points × operations), so that the results of a phase with many
// operations do not grow to hundreds of megabytes: a phase of 1,000
// operations keeps 12 points, one of 20 operations the full MaxIntervals.
const PointCells = 12_000

// Record types, the "type" field of every line.
const (
	typeHeader   = "header"
	typePhase    = "phase"
	typeInterval = "interval"
	typeBlock    = "block"
	typePhaseEnd = "phase_end"
	typeEnd      = "end"
	typeShard    = "shard"
	typeHists    = "histograms"
)

// groupedVersion is the first version whose interval records may defer
// their histograms to a later record (Deferred, Group, typeHists).
const groupedVersion = 3

// Header is the first line of a run log: what ran, where and when.
type Header struct {
	Type              string          `json:"type"`
	Format            string          `json:"format"`
	Version           int             `json:"version"`
	SchemaVersion     int             `json:"schema_version"`
	MongobenchVersion string          `json:"mongobench_version"`
	Workload          result.Workload `json:"workload"`
	Target            result.Target   `json:"target"`
	Seed              int64           `json:"seed"`
	Concurrency       int             `json:"concurrency"`
	StartedAt         time.Time       `json:"started_at"`
	// RunID names this run's log: every later record carries it as
	// "run", so that a record spliced in from another run's log, or a
	// header swapped for another run's, is refused. Create makes one when
	// it is empty.
	RunID string `json:"run_id,omitempty"`
}

// PhaseStart opens a phase; the phase's later records refer to it by
// Phase, its position in the run from 0.
type PhaseStart struct {
	Type     string  `json:"type"`
	Run      string  `json:"run,omitempty"`
	Phase    int     `json:"phase"`
	Name     string  `json:"name"`
	Model    string  `json:"model,omitempty"`
	WarmupS  float64 `json:"warmup_s"`
	Excluded bool    `json:"excluded,omitempty"`
	// Decode maps operations that decode documents to their mode, for
	// the per-document figures.
	Decode map[string]string `json:"decode,omitempty"`
	// Background names the operations of the phase's background jobs, in
	// job order.
	Background []string `json:"background,omitempty"`
}

// intervalRecord is one closed interval of a phase.
type intervalRecord struct {
	Type       string     `json:"type"`
	Run        string     `json:"run,omitempty"`
	Phase      int        `json:"phase"`
	Index      int        `json:"index"`
	Start      time.Time  `json:"start"`
	End        time.Time  `json:"end"`
	Operations []opRecord `json:"operations"`
	// Target is the planned rate or concurrency at the interval's end.
	Target *result.PlanPoint `json:"target,omitempty"`
	// Pacing are the background jobs' pacing decisions made since the
	// previous interval.
	Pacing []PacingRecord `json:"pacing,omitempty"`

	// Deferred marks an interval logged without histograms: they are
	// merged into those of a later record of the phase, the next one
	// with Group set or a histograms record. Group is how many intervals,
	// this one the last, the record's histograms cover (absent: 1).
	//
	// Why: the results keep a phase's intervals in points of a power of
	// two of them (see Points), so a histogram per interval is detail no
	// results file ever holds once the points are wider than one interval.
	// The writer logs one histogram per span of the width the points have
	// reached, which cuts the log of a long run several times while
	// finish still rebuilds exactly the results the run wrote. The counts,
	// errors and bounds of every interval are still logged as it closes.
	Deferred bool `json:"deferred,omitempty"`
	Group    int  `json:"group,omitempty"`
}

// histogramsRecord closes a span of deferred intervals [First, Last] that
// no interval record closed, because the phase ended or the log was closed
// first: the histograms of the span's measurements.
type histogramsRecord struct {
	Type       string       `json:"type"`
	Run        string       `json:"run,omitempty"`
	Phase      int          `json:"phase"`
	First      int          `json:"first"`
	Last       int          `json:"last"`
	Operations []histRecord `json:"operations"`
}

// histRecord is one operation's histograms in a histograms record.
type histRecord struct {
	Name             string `json:"name"`
	Histogram        string `json:"histogram,omitempty"`
	ServiceHistogram string `json:"service_histogram,omitempty"`
}

// opRecord is one operation's measurements over an interval. Unit and
// Steps are given in the phase's first interval only.
type opRecord struct {
	Name             string           `json:"name"`
	Count            int64            `json:"count"`
	Errors           map[string]int64 `json:"errors,omitempty"`
	Docs             int64            `json:"docs"`
	Clamped          int64            `json:"clamped,omitempty"`
	Histogram        string           `json:"histogram,omitempty"`
	ServiceHistogram string           `json:"service_histogram,omitempty"`
	Unit             string           `json:"unit,omitempty"`
	Steps            []string         `json:"steps,omitempty"`
}

// PacingRecord is one pacing decision of background job Job (its index
// in the phase's background jobs).
type PacingRecord struct {
	Job       int                `json:"job"`
	Operation string             `json:"operation"`
	Point     result.PacingPoint `json:"point"`
}

// BlockRecord is one growth block: its bounds, the watched collection's
// size at its end, and the phase intervals [FirstInterval, EndInterval)
// it spans, from which its statistics are merged.
type BlockRecord struct {
	Type          string                `json:"type"`
	Run           string                `json:"run,omitempty"`
	Phase         int                   `json:"phase"`
	Index         int                   `json:"index"`
	Start         time.Time             `json:"start"`
	End           time.Time             `json:"end"`
	Complete      bool                  `json:"complete"`
	Collection    result.CollectionSize `json:"collection"`
	FirstInterval int                   `json:"first_interval"`
	EndInterval   int                   `json:"end_interval"`
}

// PhaseEnd closes a phase with what is known only at its end.
type PhaseEnd struct {
	Type     string           `json:"type"`
	Run      string           `json:"run,omitempty"`
	Phase    int              `json:"phase"`
	Status   string           `json:"status"`
	Reason   string           `json:"reason,omitempty"`
	Schedule *result.Schedule `json:"schedule,omitempty"`
	// Background are the phase's jobs without their trajectories, which
	// the interval records carry.
	Background []result.Background `json:"background,omitempty"`
}

// End is the last line of a completed log: how the run ended and what was
// gathered after its phases.
type End struct {
	Type         string                    `json:"type"`
	Run          string                    `json:"run,omitempty"`
	Status       string                    `json:"status"`
	StatusReason string                    `json:"status_reason,omitempty"`
	DurationS    float64                   `json:"duration_s"`
	Server       *result.Server            `json:"server,omitempty"`
	Explain      []result.Explain          `json:"explain,omitempty"`
	Thresholds   []result.ThresholdOutcome `json:"thresholds,omitempty"`
	// Client is the external client stack that ran the measured phases
	// (nil for mongobench's own engine), known once its adapter stopped.
	Client *result.Client `json:"client,omitempty"`
}

// ShardRecord says, once a shard of a distributed run has its share and its
// start instant (after the load, before the first measured phase), which
// shard the log is of, so that even a log cut short is merged as that
// shard's; Concurrency is the shard's own worker count.
type ShardRecord struct {
	Type        string        `json:"type"`
	Run         string        `json:"run,omitempty"`
	Shard       *result.Shard `json:"shard"`
	Concurrency int           `json:"concurrency"`
}
