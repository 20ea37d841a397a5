package serverstats

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// loadReply reads a server reply recorded as extended JSON in testdata.
func loadReply(t *testing.T, name string) bson.Raw {
	t.Helper()

	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}

	var raw bson.Raw
	if err := bson.UnmarshalExtJSON(data, false, &raw); err != nil {
		t.Fatalf("%s: %v", name, err)
	}

	return raw
}

// doc marshals d into a reply for tests that build their own.
func doc(t *testing.T, d bson.D) bson.Raw {
	t.Helper()

	raw, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}

	return raw
}

func TestParseServerStatus(t *testing.T) {
	for _, tc := range []struct {
		name            string
		file            string
		raw             bson.D // used when file is empty
		wantCounters    map[string]int64
		wantConnections int64
		wantHasConns    bool
		wantWiredTiger  map[string]int64
		wantEmpty       bool
	}{
		{
			name: "MongoDB 7.0 with queues.execution tickets",
			file: "serverStatus-mongodb-7.0.json",
			wantCounters: map[string]int64{
				"opcounters.insert":  18004412,
				"opcounters.query":   10988120,
				"opcounters.update":  201337,
				"opcounters.delete":  5128,
				"opcounters.getmore": 132214,
				"opcounters.command": 801144,
				"network.bytesIn":    9812337401,
				"network.bytesOut":   41200981234,
			},
			wantConnections: 23,
			wantHasConns:    true,
			wantWiredTiger: map[string]int64{
				"cache_bytes":             3521338112,
				"cache_dirty_bytes":       48120344,
				"cache_max_bytes":         8053063680,
				"read_tickets_available":  127,
				"write_tickets_available": 125,
				"read_tickets_out":        1,
				"write_tickets_out":       3,
			},
		},
		{
			name: "MongoDB 6.0 with wiredTiger.concurrentTransactions tickets",
			file: "serverStatus-mongodb-6.0.json",
			wantCounters: map[string]int64{
				"opcounters.insert":  400,
				"opcounters.query":   311,
				"opcounters.update":  12,
				"opcounters.delete":  0,
				"opcounters.getmore": 3,
				"opcounters.command": 880,
				"network.bytesIn":    120033,
				"network.bytesOut":   5512201,
			},
			wantConnections: 12,
			wantHasConns:    true,
			wantWiredTiger: map[string]int64{
				"cache_bytes":             22110344,
				"cache_dirty_bytes":       1204,
				"cache_max_bytes":         3758096384,
				"read_tickets_available":  127,
				"write_tickets_available": 128,
				"read_tickets_out":        1,
				"write_tickets_out":       0,
			},
		},
		{
			name:           "FerretDB 1.24 has none of the sections",
			file:           "serverStatus-ferretdb-1.24.json",
			wantCounters:   map[string]int64{},
			wantWiredTiger: map[string]int64{},
			wantEmpty:      true,
		},
		{
			name: "partial sections, numbers of every type",
			raw: bson.D{
				{Key: "opcounters", Value: bson.D{
					{Key: "insert", Value: int32(5)},
					{Key: "query", Value: 6.0},
					{Key: "update", Value: "seven"}, // not a number: left out
				}},
				{Key: "network", Value: bson.D{{Key: "bytesOut", Value: int64(99)}}},
				{Key: "wiredTiger", Value: bson.D{{Key: "cache", Value: bson.D{
					{Key: "maximum bytes configured", Value: 1.073741824e9},
				}}}},
				{Key: "ok", Value: 1.0},
			},
			wantCounters: map[string]int64{
				"opcounters.insert": 5,
				"opcounters.query":  6,
				"network.bytesOut":  99,
			},
			wantWiredTiger: map[string]int64{"cache_max_bytes": 1073741824},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var raw bson.Raw
			if tc.file != "" {
				raw = loadReply(t, tc.file)
			} else {
				raw = doc(t, tc.raw)
			}

			got := parseServerStatus(raw)

			if !reflect.DeepEqual(got.counters, tc.wantCounters) {
				t.Errorf("counters = %v, want %v", got.counters, tc.wantCounters)
			}

			if got.connections != tc.wantConnections || got.hasConnections != tc.wantHasConns {
				t.Errorf("connections = %d (present %v), want %d (present %v)",
					got.connections, got.hasConnections, tc.wantConnections, tc.wantHasConns)
			}

			if !reflect.DeepEqual(got.wiredTiger, tc.wantWiredTiger) {
				t.Errorf("wiredTiger = %v, want %v", got.wiredTiger, tc.wantWiredTiger)
			}

			if got.empty() != tc.wantEmpty {
				t.Errorf("empty() = %v, want %v", got.empty(), tc.wantEmpty)
			}
		})
	}
}

func TestParseTop(t *testing.T) {
	items := map[string]int64{"read_us": 6120044, "write_us": 12722273, "total_us": 18842317}
	orders := map[string]int64{"read_us": 220144, "write_us": 0, "total_us": 220144}

	for _, tc := range []struct {
		name string
		raw  bson.Raw
		db   string
		want map[string]map[string]int64
	}{
		{
			name: "workload database only, note skipped",
			raw:  loadReply(t, "top-mongodb-7.0.json"),
			db:   "bench",
			want: map[string]map[string]int64{"bench.items": items, "bench.orders": orders},
		},
		{
			name: "all databases",
			raw:  loadReply(t, "top-mongodb-7.0.json"),
			db:   "",
			want: map[string]map[string]int64{
				"admin.system.roles": {"read_us": 41, "write_us": 0, "total_us": 41},
				"bench.items":        items,
				"bench.orders":       orders,
				"bench2.items":       {"read_us": 5000, "write_us": 0, "total_us": 5000},
				"local.startup_log":  {"read_us": 0, "write_us": 102, "total_us": 102},
			},
		},
		{
			name: "database without activity",
			raw:  loadReply(t, "top-mongodb-7.0.json"),
			db:   "other",
			want: map[string]map[string]int64{},
		},
		{
			name: "no totals",
			raw:  doc(t, bson.D{{Key: "ok", Value: 1.0}}),
			db:   "bench",
			want: map[string]map[string]int64{},
		},
		{
			name: "entry without lock sections",
			raw: doc(t, bson.D{{Key: "totals", Value: bson.D{
				{Key: "note", Value: "all times in microseconds"},
				{Key: "bench.items", Value: bson.D{{Key: "total", Value: bson.D{{Key: "time", Value: int32(7)}}}}},
				{Key: "bench.empty", Value: bson.D{}},
			}}}),
			db:   "bench",
			want: map[string]map[string]int64{"bench.items": {"total_us": 7}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseTop(tc.raw, tc.db); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parseTop = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseDBAndCollStats(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse func(bson.Raw) map[string]int64
		raw   bson.Raw
		want  map[string]int64
	}{
		{
			name:  "dbStats MongoDB 7.0 (sizes as doubles)",
			parse: parseDBStats,
			raw:   loadReply(t, "dbStats-mongodb-7.0.json"),
			want:  map[string]int64{"objects": 41020, "data_bytes": 12816630, "storage_bytes": 5156864, "index_bytes": 1523712},
		},
		{
			name:  "dbStats FerretDB 1.24",
			parse: parseDBStats,
			raw:   loadReply(t, "dbStats-ferretdb-1.24.json"),
			want:  map[string]int64{"objects": 1000, "data_bytes": 208896, "storage_bytes": 208896, "index_bytes": 40960},
		},
		{
			name:  "dbStats without sizes",
			parse: parseDBStats,
			raw:   doc(t, bson.D{{Key: "db", Value: "bench"}, {Key: "objects", Value: int32(3)}, {Key: "ok", Value: 1.0}}),
			want:  map[string]int64{"objects": 3},
		},
		{
			name:  "collStats MongoDB 7.0",
			parse: parseCollStats,
			raw:   loadReply(t, "collStats-mongodb-7.0.json"),
			want:  map[string]int64{"count": 40000, "data_bytes": 12498012, "storage_bytes": 5025792, "index_bytes": 1486848},
		},
		{
			name:  "collStats FerretDB 1.24",
			parse: parseCollStats,
			raw:   loadReply(t, "collStats-ferretdb-1.24.json"),
			want:  map[string]int64{"count": 1000, "data_bytes": 208896, "storage_bytes": 208896, "index_bytes": 40960},
		},
		{
			name:  "collStats empty reply",
			parse: parseCollStats,
			raw:   doc(t, bson.D{{Key: "ok", Value: 1.0}}),
			want:  map[string]int64{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.parse(tc.raw); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestToInt64(t *testing.T) {
	dec, err := bson.ParseDecimal128("12345")
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		value  any
		want   int64
		wantOK bool
	}{
		{"int32", int32(-7), -7, true},
		{"int64", int64(1) << 40, 1 << 40, true},
		{"double", 8053063680.0, 8053063680, true},
		{"double rounded", 2.6, 3, true},
		{"decimal128", dec, 12345, true},
		{"NaN", math.NaN(), 0, false},
		{"infinity", math.Inf(1), 0, false},
		{"too large", 1e19, 0, false},
		{"string", "12", 0, false},
		{"bool", true, 0, false},
		{"null", nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := doc(t, bson.D{{Key: "v", Value: tc.value}})

			got, ok := toInt64(raw.Lookup("v"))
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("toInt64(%v) = %d, %v; want %d, %v", tc.value, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
