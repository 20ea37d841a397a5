package serverstats

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// t0 is the start of the tracker tests' runs.
var t0 = time.Date(2024, 10, 3, 9, 0, 0, 0, time.UTC)

// statusReply builds a serverStatus reply with the given opcounters.insert,
// opcounters.query and network.bytesIn.
func statusReply(t *testing.T, insert, query, bytesIn int64) *reply {
	t.Helper()

	return &reply{raw: doc(t, bson.D{
		{Key: "connections", Value: bson.D{{Key: "current", Value: int32(5)}}},
		{Key: "network", Value: bson.D{{Key: "bytesIn", Value: bytesIn}}},
		{Key: "opcounters", Value: bson.D{{Key: "insert", Value: insert}, {Key: "query", Value: query}}},
		{Key: "ok", Value: 1.0},
	})}
}

// topReply builds a top reply from namespace → total, read and write times.
func topReply(t *testing.T, entries map[string][3]int64) *reply {
	t.Helper()

	totals := bson.D{{Key: "note", Value: "all times in microseconds"}}
	for ns, v := range entries {
		totals = append(totals, bson.E{Key: ns, Value: bson.D{
			{Key: "total", Value: bson.D{{Key: "time", Value: v[0]}, {Key: "count", Value: int64(1)}}},
			{Key: "readLock", Value: bson.D{{Key: "time", Value: v[1]}, {Key: "count", Value: int64(1)}}},
			{Key: "writeLock", Value: bson.D{{Key: "time", Value: v[2]}, {Key: "count", Value: int64(0)}}},
		}})
	}

	return &reply{raw: doc(t, bson.D{{Key: "totals", Value: totals}, {Key: "ok", Value: 1.0}})}
}

// failure is a reply carrying err.
func failure(err error) *reply {
	return &reply{err: err}
}

// at returns the fetch time of sample k of a 1s-interval run.
func at(k int) time.Time {
	return t0.Add(time.Duration(k) * time.Second)
}

var (
	errNotFound     = mongo.CommandError{Code: 59, Name: "CommandNotFound", Message: "no such command: 'top'"}
	errUnauthorized = mongo.CommandError{Code: 13, Name: "Unauthorized", Message: "not authorized on admin to execute command { top: 1 }"}
	errNoNameCode   = mongo.CommandError{Code: 238, Message: "not implemented"}
	errNSNotFound   = mongo.CommandError{Code: 26, Name: "NamespaceNotFound", Message: "ns not found"}
	errTimeout      = fmt.Errorf("connection(127.0.0.1:27017[-3]) incomplete read of message header: %w", errors.New("context deadline exceeded"))
)

func TestTrackerDetect(t *testing.T) {
	for _, tc := range []struct {
		name          string
		f             fetched
		wantSupported map[string]bool
		wantNotes     []string
	}{
		{
			name: "MongoDB answering everything",
			f: fetched{
				status: &reply{raw: loadReply(t, "serverStatus-mongodb-7.0.json")},
				top:    &reply{raw: loadReply(t, "top-mongodb-7.0.json")},
				db:     &reply{raw: loadReply(t, "dbStats-mongodb-7.0.json")},
				colls:  []collReply{{coll: "items", reply: reply{raw: loadReply(t, "collStats-mongodb-7.0.json")}}},
			},
			wantSupported: map[string]bool{SourceServerStatus: true, SourceTop: true, SourceDBStats: true, SourceCollStats: true},
		},
		{
			name: "FerretDB",
			f: fetched{
				status: &reply{raw: loadReply(t, "serverStatus-ferretdb-1.24.json")},
				top:    failure(errNotFound),
				db:     &reply{raw: loadReply(t, "dbStats-ferretdb-1.24.json")},
				colls:  []collReply{{coll: "items", reply: reply{raw: loadReply(t, "collStats-ferretdb-1.24.json")}}},
			},
			wantSupported: map[string]bool{SourceServerStatus: true, SourceTop: false, SourceDBStats: true, SourceCollStats: true},
			wantNotes: []string{
				"serverStatus: the server answers without opcounters, connections, network or wiredTiger sections, so samples carry none of them",
				"top: not supported by this server (CommandNotFound)",
			},
		},
		{
			name: "restricted user, codes without names, a timeout",
			f: fetched{
				status: failure(errTimeout),
				top:    failure(errUnauthorized),
				db:     failure(errNoNameCode),
				colls: []collReply{
					{coll: "a", reply: reply{err: mongo.CommandError{Code: 4242, Message: "odd"}}},
					{coll: "b", reply: reply{err: errUnauthorized}},
				},
			},
			wantSupported: map[string]bool{SourceServerStatus: false, SourceTop: false, SourceDBStats: false, SourceCollStats: false},
			wantNotes: []string{
				"serverStatus: not sampled, the first attempt failed (connection(127.0.0.1:27017[-3]) incomplete read of message header: context deadline exceeded)",
				"top: not permitted for this user (Unauthorized)",
				"dbStats: not supported by this server (NotImplemented)",
				"collStats: not supported by this server (code 4242)",
			},
		},
		{
			name: "namespaces that do not exist yet, one collection failing",
			f: fetched{
				db: failure(errNSNotFound),
				colls: []collReply{
					{coll: "a", reply: reply{err: errTimeout}},
					{coll: "b", reply: reply{err: errNSNotFound}},
				},
			},
			wantSupported: map[string]bool{SourceDBStats: true, SourceCollStats: true},
			wantNotes: []string{
				"collStats a: failed at 0.0s (connection(127.0.0.1:27017[-3]) incomplete read of message header: context deadline exceeded); left out of that sample, later failures are not noted",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTracker("bench", t0)
			tc.f.at = t0
			tr.detect(tc.f)

			res := tr.result(time.Second)

			if !reflect.DeepEqual(res.Supported, tc.wantSupported) {
				t.Errorf("Supported = %v, want %v", res.Supported, tc.wantSupported)
			}

			if !reflect.DeepEqual(res.Notes, tc.wantNotes) {
				t.Errorf("Notes =\n%q\nwant\n%q", res.Notes, tc.wantNotes)
			}

			if len(res.Samples) != 1 {
				t.Fatalf("%d samples, want the baseline", len(res.Samples))
			}

			base := res.Samples[0]
			if base.Opcounters != nil || base.Top != nil || base.NetworkBytesIn != 0 {
				t.Errorf("baseline has deltas: %+v", base)
			}

			if res.Supported[SourceDBStats] && base.DB == nil {
				t.Error("baseline lacks dbStats")
			}
		})
	}
}

func TestTrackerServerStatusDeltas(t *testing.T) {
	type want struct {
		opcounters map[string]int64
		bytesIn    int64
		hasStatus  bool
	}

	for _, tc := range []struct {
		name      string
		replies   []*reply // sample 0 is the baseline
		want      []want
		wantNotes []string
	}{
		{
			name: "steady",
			replies: []*reply{
				statusReply(t, 100, 50, 1000),
				statusReply(t, 160, 50, 1500),
				statusReply(t, 260, 55, 1500),
			},
			want: []want{
				{hasStatus: true},
				{opcounters: map[string]int64{"insert": 60, "query": 0}, bytesIn: 500, hasStatus: true},
				{opcounters: map[string]int64{"insert": 100, "query": 5}, bytesIn: 0, hasStatus: true},
			},
		},
		{
			name: "server restart resets the counters",
			replies: []*reply{
				statusReply(t, 100, 50, 1000),
				statusReply(t, 3, 60, 40),
				statusReply(t, 13, 61, 90),
			},
			want: []want{
				{hasStatus: true},
				{opcounters: map[string]int64{"query": 10}, hasStatus: true},
				{opcounters: map[string]int64{"insert": 10, "query": 1}, bytesIn: 50, hasStatus: true},
			},
			wantNotes: []string{
				"serverStatus: counters went backwards at 1.0s (network.bytesIn, opcounters.insert), as after a server restart; their new values are the new baseline",
			},
		},
		{
			name: "a failed sample makes the next one a new baseline",
			replies: []*reply{
				statusReply(t, 100, 50, 1000),
				failure(errTimeout),
				statusReply(t, 300, 70, 2000),
				failure(errors.New("other failure")),
				statusReply(t, 400, 80, 2100),
				statusReply(t, 401, 80, 2200),
			},
			want: []want{
				{hasStatus: true},
				{},
				{hasStatus: true},
				{},
				{hasStatus: true},
				{opcounters: map[string]int64{"insert": 1, "query": 0}, bytesIn: 100, hasStatus: true},
			},
			wantNotes: []string{
				"serverStatus: failed at 1.0s (connection(127.0.0.1:27017[-3]) incomplete read of message header: context deadline exceeded); left out of that sample, later failures are not noted",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTracker("bench", t0)
			tr.detect(fetched{at: at(0), status: tc.replies[0]})

			for k, r := range tc.replies[1:] {
				tr.record(fetched{at: at(k + 1), status: r})
			}

			res := tr.result(time.Second)

			if len(res.Samples) != len(tc.want) {
				t.Fatalf("%d samples, want %d", len(res.Samples), len(tc.want))
			}

			for k, w := range tc.want {
				s := res.Samples[k]

				if !reflect.DeepEqual(s.Opcounters, w.opcounters) || s.NetworkBytesIn != w.bytesIn {
					t.Errorf("sample %d: opcounters %v, bytesIn %d; want %v, %d", k, s.Opcounters, s.NetworkBytesIn, w.opcounters, w.bytesIn)
				}

				if got := s.Connections == 5; got != w.hasStatus {
					t.Errorf("sample %d: connections %d, want the gauge: %v", k, s.Connections, w.hasStatus)
				}

				if s.ElapsedS != float64(k) {
					t.Errorf("sample %d: ElapsedS = %v", k, s.ElapsedS)
				}
			}

			if !reflect.DeepEqual(res.Notes, tc.wantNotes) {
				t.Errorf("Notes =\n%q\nwant\n%q", res.Notes, tc.wantNotes)
			}
		})
	}
}

func TestTrackerTopDeltas(t *testing.T) {
	for _, tc := range []struct {
		name      string
		replies   []*reply
		want      []map[string]map[string]int64
		wantNotes []string
	}{
		{
			name: "deltas, idle namespaces left out, other databases ignored",
			replies: []*reply{
				topReply(t, map[string][3]int64{"bench.items": {100, 60, 40}, "bench.idle": {5, 5, 0}, "other.x": {1, 1, 0}}),
				topReply(t, map[string][3]int64{"bench.items": {150, 70, 80}, "bench.idle": {5, 5, 0}, "other.x": {9, 9, 0}}),
			},
			want: []map[string]map[string]int64{
				nil,
				{"bench.items": {"total_us": 50, "read_us": 10, "write_us": 40}},
			},
		},
		{
			name: "a namespace created during the run starts from zero",
			replies: []*reply{
				topReply(t, map[string][3]int64{"bench.items": {100, 60, 40}}),
				topReply(t, map[string][3]int64{"bench.items": {100, 60, 40}, "bench.new": {30, 0, 30}}),
			},
			want: []map[string]map[string]int64{
				nil,
				{"bench.new": {"total_us": 30, "read_us": 0, "write_us": 30}},
			},
		},
		{
			name: "a dropped and recreated namespace is a new baseline",
			replies: []*reply{
				topReply(t, map[string][3]int64{"bench.items": {100, 60, 40}, "bench.orders": {10, 10, 0}}),
				topReply(t, map[string][3]int64{"bench.items": {20, 20, 0}, "bench.orders": {12, 12, 0}}),
				topReply(t, map[string][3]int64{"bench.items": {25, 20, 5}, "bench.orders": {12, 12, 0}}),
			},
			want: []map[string]map[string]int64{
				nil,
				{"bench.orders": {"total_us": 2, "read_us": 2, "write_us": 0}},
				{"bench.items": {"total_us": 5, "read_us": 0, "write_us": 5}},
			},
			wantNotes: []string{
				"top: times of bench.items went backwards at 1.0s (collection dropped and recreated, or server restarted); their new values are the new baseline",
			},
		},
		{
			name: "a failed sample makes the next one a new baseline",
			replies: []*reply{
				topReply(t, map[string][3]int64{"bench.items": {100, 60, 40}}),
				failure(errTimeout),
				topReply(t, map[string][3]int64{"bench.items": {200, 60, 140}, "bench.new": {7, 7, 0}}),
				topReply(t, map[string][3]int64{"bench.items": {201, 61, 140}, "bench.new": {7, 7, 0}}),
			},
			want: []map[string]map[string]int64{
				nil,
				nil,
				nil,
				{"bench.items": {"total_us": 1, "read_us": 1, "write_us": 0}},
			},
			wantNotes: []string{
				"top: failed at 1.0s (connection(127.0.0.1:27017[-3]) incomplete read of message header: context deadline exceeded); left out of that sample, later failures are not noted",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTracker("bench", t0)
			tr.detect(fetched{at: at(0), top: tc.replies[0]})

			for k, r := range tc.replies[1:] {
				tr.record(fetched{at: at(k + 1), top: r})
			}

			res := tr.result(time.Second)

			for k, w := range tc.want {
				if got := res.Samples[k].Top; !reflect.DeepEqual(got, w) {
					t.Errorf("sample %d: Top = %v, want %v", k, got, w)
				}
			}

			if !reflect.DeepEqual(res.Notes, tc.wantNotes) {
				t.Errorf("Notes =\n%q\nwant\n%q", res.Notes, tc.wantNotes)
			}
		})
	}
}

// TestTrackerMidRunFailures checks that failures of supported sources are
// noted once per source (per collection for collStats), leave only that
// source out, and do not stop later samples.
func TestTrackerMidRunFailures(t *testing.T) {
	ok := func(n int64) collReply {
		return collReply{coll: "items", reply: reply{raw: doc(t, bson.D{{Key: "count", Value: n}, {Key: "ok", Value: 1.0}})}}
	}
	bad := func(coll string) collReply {
		return collReply{coll: coll, reply: reply{err: errTimeout}}
	}
	dbOK := &reply{raw: doc(t, bson.D{{Key: "objects", Value: int64(1)}, {Key: "ok", Value: 1.0}})}

	tr := newTracker("bench", t0)
	tr.detect(fetched{at: at(0), db: dbOK, colls: []collReply{ok(1), {coll: "other", reply: reply{raw: dbOK.raw}}}})

	for k, f := range []fetched{
		{db: failure(errTimeout), colls: []collReply{ok(2), bad("other")}},
		{db: failure(errTimeout), colls: []collReply{bad("items"), bad("other")}},
		{db: dbOK, colls: []collReply{ok(4), bad("other")}},
	} {
		f.at = at(k + 1)
		tr.record(f)
	}

	res := tr.result(time.Second)

	wantNotes := []string{
		"dbStats: failed at 1.0s (connection(127.0.0.1:27017[-3]) incomplete read of message header: context deadline exceeded); left out of that sample, later failures are not noted",
		"collStats other: failed at 1.0s (connection(127.0.0.1:27017[-3]) incomplete read of message header: context deadline exceeded); left out of that sample, later failures are not noted",
		"collStats items: failed at 2.0s (connection(127.0.0.1:27017[-3]) incomplete read of message header: context deadline exceeded); left out of that sample, later failures are not noted",
	}
	if !reflect.DeepEqual(res.Notes, wantNotes) {
		t.Errorf("Notes =\n%q\nwant\n%q", res.Notes, wantNotes)
	}

	var counts []any

	for _, s := range res.Samples {
		if c, ok := s.Collections["items"]; ok {
			counts = append(counts, c["count"])
		} else {
			counts = append(counts, "-")
		}

		if s.Collections != nil {
			if _, ok := s.Collections["other"]; ok && s.ElapsedS > 0 {
				t.Errorf("sample at %vs has the failed collection", s.ElapsedS)
			}
		}
	}

	if want := []any{int64(1), int64(2), "-", int64(4)}; !reflect.DeepEqual(counts, want) {
		t.Errorf("items counts = %v, want %v", counts, want)
	}

	if res.Samples[1].DB != nil || res.Samples[3].DB == nil {
		t.Errorf("DB per sample = %v, %v; want absent after a failure, present after recovery", res.Samples[1].DB, res.Samples[3].DB)
	}
}

func TestTrackerNotesBounded(t *testing.T) {
	tr := newTracker("bench", t0)
	tr.detect(fetched{at: at(0), status: statusReply(t, 1000, 0, 0)})

	// Every second sample resets the counters, each time with a note.
	for k := 1; k <= 3*maxNotes; k++ {
		v := int64(1000)
		if k%2 == 1 {
			v = 1
		}

		tr.record(fetched{at: at(k), status: statusReply(t, v, 0, 0)})
	}

	notes := tr.result(time.Second).Notes
	if len(notes) != maxNotes+1 || notes[maxNotes] != "further notes were dropped" {
		t.Errorf("%d notes ending %q, want %d ending with the drop note", len(notes), notes[len(notes)-1], maxNotes+1)
	}
}

func TestTrackerResult(t *testing.T) {
	tr := newTracker("bench", t0)
	tr.detect(fetched{at: at(0), cost: 3 * time.Millisecond, db: &reply{raw: loadReply(t, "dbStats-ferretdb-1.24.json")}})
	tr.record(fetched{at: at(1), phase: "load", cost: 5 * time.Millisecond, db: &reply{raw: loadReply(t, "dbStats-ferretdb-1.24.json")}})

	res := tr.result(250 * time.Millisecond)

	if res.SampleCostUS != 4000 {
		t.Errorf("SampleCostUS = %v, want the mean 4000", res.SampleCostUS)
	}

	if res.IntervalS != 0.25 {
		t.Errorf("IntervalS = %v, want 0.25", res.IntervalS)
	}

	if s := res.Samples[1]; s.Phase != "load" || !s.Time.Equal(at(1)) || s.ElapsedS != 1 {
		t.Errorf("sample 1 = %+v, want phase load at 1s", s)
	}

	if got := res.Samples[1].DB["objects"]; got != 1000 {
		t.Errorf("objects = %d, want 1000", got)
	}

	if strings.Join(res.Notes, "") != "" {
		t.Errorf("Notes = %q, want none", res.Notes)
	}
}
