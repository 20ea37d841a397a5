// Package capture turns what a MongoDB server saw into a workload file: it
// reads mongod's JSON log (logv2, MongoDB 4.4 and later), groups the
// operations by query shape (the fields and operators, values removed, as
// MongoDB's query hash does), and writes each shape as an operation of the
// workload language whose values are generators inferred from the values
// observed. By default no value of the source is copied into the workload
// (see Options.KeepValues).
//
// Reading is pure and streaming: a log is read line by line, lines that are
// not slow-query or index-build entries are never parsed, and what is kept
// per shape is bounded (counts, ranges, at most maxDistinct distinct values
// per value position), so memory does not grow with the log's length.
package capture

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/mongobench/mongobench/internal/spec/workload"
)

// Op is the command an operation of the log ran.
type Op string

// The commands capture models.
const (
	OpFind          Op = "find"
	OpAggregate     Op = "aggregate"
	OpCount         Op = "count"
	OpDistinct      Op = "distinct"
	OpFindAndModify Op = "findAndModify"
	OpInsert        Op = "insert"
	OpUpdate        Op = "update"
	OpDelete        Op = "delete"
	OpCommand       Op = "command"
)

// Options are what the user chose.
type Options struct {
	// KeepValues copies the values of the source into the workload
	// (constants and choices of the values seen); without it only field
	// names, shape structure and generators are written.
	KeepValues bool
	// IncludeAdmin keeps administration and monitoring commands (hello,
	// serverStatus, …) as runCommand operations.
	IncludeAdmin bool
	// Timeline keeps each operation's connection, start and shape, for a
	// replay phase (Meta.Replay); without it reading keeps no per-operation
	// state.
	Timeline bool
}

// Record is one operation of the log.
type Record struct {
	Line    int
	Time    int64 // milliseconds since the epoch
	HasTime bool
	Conn    string
	Op      Op
	DB      string
	Coll    string
	// Cmd is the command, or the statement of an update or delete; nil for
	// a write command whose statements the log does not show.
	Cmd    *Value
	Millis int64
	// Micros is the duration in microseconds when the source gives it
	// (a recording's durationMicros), else 0.
	Micros    int64
	NInserted int64
}

// Stats counts what reading saw and left out.
type Stats struct {
	Files, Lines, SlowQueries, Operations int64
	// Profile counts the profiler documents read (ProfileDoc); they are
	// counted in Lines and SlowQueries too.
	Profile int64
	// Bad lines were skipped; BadLines quotes the first few.
	Bad      int64
	BadLines []string
	// Admin counts the administration and monitoring commands left out,
	// by name.
	Admin map[string]int64
	// GetMore counts getMore commands, part of the find or aggregate whose
	// cursor they continue.
	GetMore int64
	// Internal counts operations on admin, config and local.
	Internal int64
	// Covered counts update and delete commands whose statements were
	// counted instead.
	Covered int64
	// OverShapes counts operations of shapes beyond maxShapes.
	OverShapes int64
	// Conns is the number of distinct connections that ran operations.
	Conns int
	// First and Last are the times of the first and last operations, in
	// milliseconds since the epoch; Busy is the sum of their durations.
	First, Last, Busy int64
}

// maxShapes bounds the shapes kept: a log whose every query has fields of
// its own is not a workload, and must not exhaust memory.
const maxShapes = 10000

// Capture accumulates the operations of one or more logs.
type Capture struct {
	opts    Options
	stats   Stats
	pending map[string]pendingStatement
	shapes  map[string]*Shape
	order   []*Shape
	conns   map[string]struct{}
	indexes []Index
	timed   bool
	// connStates are the connections' timings, for the load model.
	connStates map[string]*connState
	// gaps samples the think time between operations of a connection,
	// leadGaps that between the leading inserts (see add).
	gaps, leadGaps gapSample
	// steady is set by the first operation that is not an insert: inserts
	// read before it are the load (see add). steadyFirst is the earliest
	// start of an operation of the steady mix.
	steady      bool
	steadyFirst int64
	steadyTimed bool
	// timeline holds the operations in reading order when Options.Timeline
	// is set, at most workload.MaxReplayOperations; cut counts those left
	// out beyond it, untimed those without a time.
	timeline     []event
	cut, untimed int64
}

// event is one operation of the timeline.
type event struct {
	conn  string
	start int64 // milliseconds since the epoch
	shape *Shape
}

// Index is an index the log shows being created.
type Index struct {
	DB, Coll, Name string
	Keys           *Value
	Unique         bool
}

// New starts a capture.
func New(opts Options) *Capture {
	return &Capture{
		opts:    opts,
		stats:   Stats{Admin: map[string]int64{}},
		pending: map[string]pendingStatement{},
		shapes:  map[string]*Shape{},
		conns:   map[string]struct{}{},

		connStates: map[string]*connState{},
	}
}

// Stats returns the counts so far.
func (c *Capture) Stats() Stats {
	s := c.stats
	s.Conns = len(c.conns)

	return s
}

// add counts one operation into its shape.
func (c *Capture) add(r *Record) {
	in := describe(r)

	s, ok := c.shapes[in.text]
	if !ok {
		if len(c.shapes) >= maxShapes {
			c.stats.OverShapes++

			return
		}

		s = newShape(r, in)
		c.shapes[in.text] = s
		c.order = append(c.order, s)
	}

	// Inserts read before any other operation (in the log's order, the
	// order operations ended) are the application's load: they fill the
	// collection before the steady mix starts (see Capture.leadApplies).
	if r.Op != OpInsert {
		c.steady = true
	}

	lead := !c.steady
	s.add(r, in, lead)
	c.track(r, !lead)

	if !lead && r.HasTime {
		if start := r.Time - r.Millis; !c.steadyTimed || start < c.steadyFirst {
			c.steadyFirst, c.steadyTimed = start, true
		}
	}

	c.stats.Operations++
	c.stats.Busy += r.Millis

	if r.Conn != "" {
		c.conns[r.Conn] = struct{}{}
	}

	if c.opts.Timeline {
		switch {
		case !r.HasTime:
			c.untimed++
		case len(c.timeline) >= workload.MaxReplayOperations:
			c.cut++
		default:
			c.timeline = append(c.timeline, event{conn: r.Conn, start: r.Time - r.Millis, shape: s})
		}
	}

	if r.HasTime {
		end := r.Time
		start := end - r.Millis

		if !c.timed || start < c.stats.First {
			c.stats.First = start
		}

		if !c.timed || end > c.stats.Last {
			c.stats.Last = end
		}

		c.timed = true
	}
}

// addIndex records an index specification ({key, name, unique}).
func (c *Capture) addIndex(db, coll string, spec *Value) {
	keys, ok := spec.Get("key")
	if !ok || keys.Kind != KindDoc || internalDB(db) {
		return
	}

	ix := Index{DB: db, Coll: coll, Name: spec.getString("name"), Keys: keys}
	if u, ok := spec.Get("unique"); ok && u.Kind == KindBool && u.Int == 1 {
		ix.Unique = true
	}

	if ix.Name == "_id_" {
		return
	}

	for _, have := range c.indexes {
		if have.DB == db && have.Coll == coll && have.Name == ix.Name {
			return
		}
	}

	c.indexes = append(c.indexes, ix)
}

// Shapes returns the shapes, most frequent first (ties by shape text, so
// the order does not depend on the log's order).
func (c *Capture) Shapes() []*Shape {
	out := append([]*Shape(nil), c.order...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}

		return out[i].Text < out[j].Text
	})

	return out
}

// WriteTable writes the shape table: each shape with its count, its share
// of all operations and the median and 99th percentile of the server's
// time (durationMillis) from the source.
func (c *Capture) WriteTable(w io.Writer) error {
	shapes := c.Shapes()

	var total int64
	for _, s := range shapes {
		total += s.Count
	}

	var b strings.Builder

	fmt.Fprintf(&b, "%-8s  %8s  %6s  %8s  %8s  %s\n", "shape", "count", "share", "p50 ms", "p99 ms", "operation")

	for _, s := range shapes {
		fmt.Fprintf(&b, "%-8s  %8d  %5.1f%%  %8d  %8d  %s\n", s.ID, s.Count, 100*float64(s.Count)/float64(max(total, 1)),
			s.Percentile(50), s.Percentile(99), s.Text)
	}

	fmt.Fprintf(&b, "%d operations in %d shapes\n", total, len(shapes))

	_, err := io.WriteString(w, b.String())

	return err
}

// WriteSummary writes what was read and what was left out, and why.
func (c *Capture) WriteSummary(w io.Writer) error {
	s := c.Stats()

	var b strings.Builder

	if s.Profile > 0 {
		fmt.Fprintf(&b, "Read %d profiler documents: %d operations from %d clients.\n", s.Profile, s.Operations, s.Conns)
	} else {
		fmt.Fprintf(&b, "Read %d lines of %d files: %d slow-query entries, %d operations on %d connections.\n",
			s.Lines, s.Files, s.SlowQueries, s.Operations, s.Conns)
	}

	if len(s.Admin) > 0 {
		names := make([]string, 0, len(s.Admin))
		for n := range s.Admin {
			names = append(names, n)
		}

		sort.Strings(names)

		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%s %d", n, s.Admin[n])
		}

		fmt.Fprintf(&b, "Left out: administration and monitoring commands (%s); --include-admin keeps them.\n", strings.Join(parts, ", "))
	}

	if s.GetMore > 0 {
		fmt.Fprintf(&b, "Left out: %d getMore commands, part of the find or aggregate whose cursor they continue.\n", s.GetMore)
	}

	if s.Internal > 0 {
		fmt.Fprintf(&b, "Left out: %d operations on the server's own databases (admin, config, local).\n", s.Internal)
	}

	if s.Covered > 0 {
		fmt.Fprintf(&b, "Counted once: %d update and delete commands, as their statements.\n", s.Covered)
	}

	if s.OverShapes > 0 {
		fmt.Fprintf(&b, "Left out: %d operations beyond %d shapes.\n", s.OverShapes, maxShapes)
	}

	if s.Bad > 0 {
		fmt.Fprintf(&b, "Skipped %d bad lines, the first: %s\n", s.Bad, strings.Join(s.BadLines, "; "))
	}

	_, err := io.WriteString(w, b.String())

	return err
}
