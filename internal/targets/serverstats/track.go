package serverstats

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/results/result"
)

// maxNotes bounds Server.Notes, so that a server whose counters keep
// resetting or a source that keeps failing in new ways cannot grow the
// result without limit.
const maxNotes = 50

// maxErrorLen caps an error message quoted in a note.
const maxErrorLen = 200

// Server error codes with a meaning of their own here.
const (
	codeUnauthorized      = 13
	codeNamespaceNotFound = 26
)

// codeNames names the error codes a server may answer an unsupported
// command with, for servers that send no codeName.
var codeNames = map[int32]string{
	codeUnauthorized:      "Unauthorized",
	codeNamespaceNotFound: "NamespaceNotFound",
	59:                    "CommandNotFound",
	115:                   "CommandNotSupported",
	238:                   "NotImplemented",
	8000:                  "AtlasError",
}

// reply is a server's answer to one command: the document, or the error.
type reply struct {
	raw bson.Raw
	err error
}

// collReply is the collStats reply for one collection.
type collReply struct {
	coll string
	reply
}

// fetched is everything one sample asked the server, before interpretation.
// A nil reply means the source was not asked.
type fetched struct {
	// at is when the sample started; phase is the phase running then.
	at    time.Time
	phase string

	// cost is how long all the commands took together.
	cost time.Duration

	status, top, db *reply
	colls           []collReply
}

// tracker turns the raw replies of successive samples into result samples:
// it decides which sources are supported, keeps the previous counters to
// compute deltas, and collects notes. It does no I/O, so that its logic can
// be tested on recorded replies; it is not safe for concurrent use.
type tracker struct {
	db    string
	start time.Time

	supported map[string]bool
	notes     []string
	noted     map[string]bool

	// prevStatus and prevTop are the previous sample's readings, nil when
	// that sample lacked them, so that deltas always span one interval.
	prevStatus *statusReading
	prevTop    map[string]map[string]int64

	samples   []result.ServerSample
	costTotal time.Duration
	costN     int
}

// newTracker returns a tracker for database db whose elapsed times count
// from start.
func newTracker(db string, start time.Time) *tracker {
	return &tracker{
		db:        db,
		start:     start,
		supported: map[string]bool{},
		noted:     map[string]bool{},
		samples:   []result.ServerSample{},
	}
}

// anySupported reports whether at least one source answered at detection.
func (t *tracker) anySupported() bool {
	for _, ok := range t.supported {
		if ok {
			return true
		}
	}

	return false
}

// detect decides, from the first sample's replies, which sources the server
// supports, notes why the others are not, and records the supported ones as
// the baseline sample.
func (t *tracker) detect(f fetched) {
	judge := func(source string, r *reply) bool {
		if r == nil {
			return false
		}

		ok := r.err == nil || isNamespaceNotFound(r.err)
		t.supported[source] = ok

		if !ok {
			t.note(source, unsupportedNote(source, r.err))
		}

		return ok
	}

	if !judge(SourceServerStatus, f.status) {
		f.status = nil
	} else if f.status.err == nil && parseServerStatus(f.status.raw).empty() {
		t.note(SourceServerStatus+":sections", SourceServerStatus+
			": the server answers without opcounters, connections, network or wiredTiger sections, so samples carry none of them")
	}

	if !judge(SourceTop, f.top) {
		f.top = nil
	}

	if !judge(SourceDBStats, f.db) {
		f.db = nil
	}

	if len(f.colls) > 0 {
		// collStats counts as supported if it answered for any collection;
		// collections it failed for are noted when the sample is recorded.
		var first error

		for _, c := range f.colls {
			if c.err == nil || isNamespaceNotFound(c.err) {
				first = nil
				break
			}

			if first == nil {
				first = c.err
			}
		}

		if first != nil {
			judge(SourceCollStats, &reply{err: first})
			f.colls = nil
		} else {
			t.supported[SourceCollStats] = true
		}
	}

	t.record(f)
}

// record turns one sample's replies into a result sample: gauges as read,
// counters as deltas since the previous sample. A failed source is noted
// (once per source) and left out of this sample.
func (t *tracker) record(f fetched) {
	elapsed := f.at.Sub(t.start).Seconds()

	s := result.ServerSample{Time: f.at.Round(0), ElapsedS: elapsed, Phase: f.phase}

	if r := f.status; r != nil {
		if r.err != nil {
			t.failed(SourceServerStatus, SourceServerStatus, elapsed, r.err)
			t.prevStatus = nil
		} else {
			cur := parseServerStatus(r.raw)
			t.applyStatus(&s, cur, elapsed)
			t.prevStatus = &cur
		}
	}

	if r := f.top; r != nil {
		if r.err != nil {
			t.failed(SourceTop, SourceTop, elapsed, r.err)
			t.prevTop = nil
		} else {
			cur := parseTop(r.raw, t.db)
			t.applyTop(&s, cur, elapsed)
			t.prevTop = cur
		}
	}

	if r := f.db; r != nil {
		switch {
		case r.err == nil:
			s.DB = parseDBStats(r.raw)
		case isNamespaceNotFound(r.err):
			s.DB = zeroStats("objects")
		default:
			t.failed(SourceDBStats, SourceDBStats, elapsed, r.err)
		}
	}

	for _, c := range f.colls {
		var m map[string]int64

		switch {
		case c.err == nil:
			m = parseCollStats(c.raw)
		case isNamespaceNotFound(c.err):
			m = zeroStats("count")
		default:
			t.failed(SourceCollStats+":"+c.coll, SourceCollStats+" "+c.coll, elapsed, c.err)
			continue
		}

		if s.Collections == nil {
			s.Collections = map[string]map[string]int64{}
		}

		s.Collections[c.coll] = m
	}

	t.samples = append(t.samples, s)
	t.costTotal += f.cost
	t.costN++
}

// applyStatus fills s from a serverStatus reading, with counter deltas
// against the previous reading when there is one.
func (t *tracker) applyStatus(s *result.ServerSample, cur statusReading, elapsed float64) {
	if cur.hasConnections {
		s.Connections = cur.connections
	}

	if len(cur.wiredTiger) > 0 {
		s.WiredTiger = cur.wiredTiger
	}

	if t.prevStatus == nil {
		return
	}

	d, reset := deltas(t.prevStatus.counters, cur.counters, false)
	if len(reset) > 0 {
		t.note("", fmt.Sprintf("%s: counters went backwards at %.1fs (%s), as after a server restart; their new values are the new baseline",
			SourceServerStatus, elapsed, strings.Join(reset, ", ")))
	}

	for k, v := range d {
		switch k {
		case keyBytesIn:
			s.NetworkBytesIn = v
		case keyBytesOut:
			s.NetworkBytesOut = v
		default:
			name, ok := strings.CutPrefix(k, "opcounters.")
			if !ok {
				continue
			}

			if s.Opcounters == nil {
				s.Opcounters = map[string]int64{}
			}

			s.Opcounters[name] = v
		}
	}
}

// applyTop fills s.Top with per-namespace time deltas against the previous
// top reading, if there is one. A namespace new since then started from
// zero (top adds namespaces on first use and removes them on drop), so its
// whole value is its delta. Namespaces without activity are left out.
func (t *tracker) applyTop(s *result.ServerSample, cur map[string]map[string]int64, elapsed float64) {
	if t.prevTop == nil {
		return
	}

	var resets []string

	for _, ns := range slices.Sorted(maps.Keys(cur)) {
		d, reset := deltas(t.prevTop[ns], cur[ns], true)
		if len(reset) > 0 {
			resets = append(resets, ns)
			continue
		}

		active := false

		for _, v := range d {
			if v != 0 {
				active = true
				break
			}
		}

		if !active {
			continue
		}

		if s.Top == nil {
			s.Top = map[string]map[string]int64{}
		}

		s.Top[ns] = d
	}

	if len(resets) > 0 {
		t.note("", fmt.Sprintf("%s: times of %s went backwards at %.1fs (collection dropped and recreated, or server restarted); their new values are the new baseline",
			SourceTop, strings.Join(resets, ", "), elapsed))
	}
}

// deltas returns cur minus prev for every key of cur, and the sorted keys
// whose value decreased (a counter reset), which get no delta. A key missing
// from prev gets no delta either, unless fromZero says that such counters
// started at zero since the previous sample.
func deltas(prev, cur map[string]int64, fromZero bool) (map[string]int64, []string) {
	d := make(map[string]int64, len(cur))

	var reset []string

	for k, v := range cur {
		p, ok := prev[k]

		switch {
		case !ok && !fromZero:
			continue
		case v < p:
			reset = append(reset, k)
		default:
			d[k] = v - p
		}
	}

	slices.Sort(reset)

	return d, reset
}

// zeroStats is what dbStats and collStats stand for when the namespace does
// not exist yet: nothing.
func zeroStats(countKey string) map[string]int64 {
	return map[string]int64{countKey: 0, "data_bytes": 0, "storage_bytes": 0, "index_bytes": 0}
}

// failed notes, once per key, that a supported source failed during the run.
func (t *tracker) failed(key, what string, elapsed float64, err error) {
	t.note("failed:"+key, fmt.Sprintf("%s: failed at %.1fs (%s); left out of that sample, later failures are not noted",
		what, elapsed, errorText(err)))
}

// note adds text to the notes unless key is non-empty and was noted before.
// Past maxNotes, one last note says that more were dropped.
func (t *tracker) note(key, text string) {
	if key != "" {
		if t.noted[key] {
			return
		}

		t.noted[key] = true
	}

	switch {
	case len(t.notes) < maxNotes:
		t.notes = append(t.notes, text)
	case len(t.notes) == maxNotes:
		t.notes = append(t.notes, "further notes were dropped")
	}
}

// result returns everything recorded, for a sampling period of interval.
func (t *tracker) result(interval time.Duration) *result.Server {
	res := &result.Server{
		Supported: maps.Clone(t.supported),
		Notes:     t.notes,
		IntervalS: interval.Seconds(),
		Samples:   t.samples,
	}

	if t.costN > 0 {
		res.SampleCostUS = float64(t.costTotal.Microseconds()) / float64(t.costN)
	}

	return res
}

// unsupportedNote explains why source is not sampled, given the error of its
// first attempt.
func unsupportedNote(source string, err error) string {
	name, ok := commandErrorName(err)

	switch {
	case ok && name == "Unauthorized":
		return source + ": not permitted for this user (Unauthorized)"
	case ok:
		return source + ": not supported by this server (" + name + ")"
	default:
		return source + ": not sampled, the first attempt failed (" + errorText(err) + ")"
	}
}

// commandErrorName returns the server's name for the error of a command the
// server answered with ok: 0, and false for any other error (network,
// timeout).
func commandErrorName(err error) (string, bool) {
	var ce mongo.CommandError
	if !errors.As(err, &ce) {
		return "", false
	}

	if ce.Name != "" {
		return ce.Name, true
	}

	if name, ok := codeNames[ce.Code]; ok {
		return name, true
	}

	return fmt.Sprintf("code %d", ce.Code), true
}

// isNamespaceNotFound reports whether err says that the database or
// collection does not exist (yet), which dbStats and collStats answer on
// some server versions instead of zeros.
func isNamespaceNotFound(err error) bool {
	var ce mongo.CommandError

	return errors.As(err, &ce) && (ce.Code == codeNamespaceNotFound || ce.Name == "NamespaceNotFound")
}

// errorText returns err's message on one line, capped to maxErrorLen.
func errorText(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")

	if r := []rune(s); len(r) > maxErrorLen {
		s = string(r[:maxErrorLen-1]) + "…"
	}

	return s
}
