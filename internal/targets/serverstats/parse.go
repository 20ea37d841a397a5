package serverstats

import (
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// opcounterNames are the serverStatus.opcounters fields mongobench keeps, in
// the order MongoDB documents them.
var opcounterNames = []string{"insert", "query", "update", "delete", "getmore", "command"}

// Counter keys of a statusReading. Opcounters are keyed "opcounters.<name>".
const (
	keyBytesIn  = "network.bytesIn"
	keyBytesOut = "network.bytesOut"
)

// wiredTigerGauges maps the snake_case keys of ServerSample.WiredTiger to the
// serverStatus paths they are read from, most preferred first: tickets moved
// from wiredTiger.concurrentTransactions to queues.execution in MongoDB 7.0.
var wiredTigerGauges = []struct {
	key   string
	paths [][]string
}{
	{"cache_bytes", [][]string{{"wiredTiger", "cache", "bytes currently in the cache"}}},
	{"cache_dirty_bytes", [][]string{{"wiredTiger", "cache", "tracked dirty bytes in the cache"}}},
	{"cache_max_bytes", [][]string{{"wiredTiger", "cache", "maximum bytes configured"}}},
	{"read_tickets_available", [][]string{
		{"queues", "execution", "read", "available"},
		{"wiredTiger", "concurrentTransactions", "read", "available"},
	}},
	{"write_tickets_available", [][]string{
		{"queues", "execution", "write", "available"},
		{"wiredTiger", "concurrentTransactions", "write", "available"},
	}},
	{"read_tickets_out", [][]string{
		{"queues", "execution", "read", "out"},
		{"wiredTiger", "concurrentTransactions", "read", "out"},
	}},
	{"write_tickets_out", [][]string{
		{"queues", "execution", "write", "out"},
		{"wiredTiger", "concurrentTransactions", "write", "out"},
	}},
}

// statusReading is what mongobench keeps of one serverStatus reply: the
// cumulative counters (to be turned into deltas) and the gauges.
type statusReading struct {
	// counters holds cumulative values keyed "opcounters.<name>",
	// keyBytesIn and keyBytesOut; absent fields are absent keys.
	counters map[string]int64

	// connections is connections.current, valid when hasConnections.
	connections    int64
	hasConnections bool

	// wiredTiger holds the gauges of wiredTigerGauges that the reply had.
	wiredTiger map[string]int64
}

// empty reports whether the reply had none of the sections mongobench reads,
// as with FerretDB, whose serverStatus has no opcounters, connections,
// network or wiredTiger.
func (r statusReading) empty() bool {
	return len(r.counters) == 0 && !r.hasConnections && len(r.wiredTiger) == 0
}

// parseServerStatus extracts opcounters, connections.current, network bytes
// and the WiredTiger cache and ticket gauges from a serverStatus reply.
// Missing sections or fields are simply left out.
func parseServerStatus(raw bson.Raw) statusReading {
	r := statusReading{counters: map[string]int64{}, wiredTiger: map[string]int64{}}

	for _, name := range opcounterNames {
		if v, ok := lookupInt(raw, "opcounters", name); ok {
			r.counters["opcounters."+name] = v
		}
	}

	if v, ok := lookupInt(raw, "network", "bytesIn"); ok {
		r.counters[keyBytesIn] = v
	}

	if v, ok := lookupInt(raw, "network", "bytesOut"); ok {
		r.counters[keyBytesOut] = v
	}

	r.connections, r.hasConnections = lookupInt(raw, "connections", "current")

	for _, g := range wiredTigerGauges {
		for _, path := range g.paths {
			if v, ok := lookupInt(raw, path...); ok {
				r.wiredTiger[g.key] = v
				break
			}
		}
	}

	return r
}

// topFields maps the keys of ServerSample.Top entries to the fields of a
// top namespace entry they are read from (microseconds).
var topFields = []struct {
	key  string
	path []string
}{
	{"read_us", []string{"readLock", "time"}},
	{"write_us", []string{"writeLock", "time"}},
	{"total_us", []string{"total", "time"}},
}

// parseTop extracts the cumulative read, write and total times of every
// namespace of database db from a top reply ("" keeps all namespaces). The
// "note" entry of totals and any other non-document entry are skipped.
func parseTop(raw bson.Raw, db string) map[string]map[string]int64 {
	out := map[string]map[string]int64{}

	totals, ok := raw.Lookup("totals").DocumentOK()
	if !ok {
		return out
	}

	elems, err := totals.Elements()
	if err != nil {
		return out
	}

	prefix := db + "."

	for _, e := range elems {
		ns := e.Key()
		if db != "" && !strings.HasPrefix(ns, prefix) {
			continue
		}

		entry, ok := e.Value().DocumentOK()
		if !ok {
			continue
		}

		m := map[string]int64{}

		for _, f := range topFields {
			if v, ok := lookupInt(entry, f.path...); ok {
				m[f.key] = v
			}
		}

		if len(m) > 0 {
			out[ns] = m
		}
	}

	return out
}

// parseDBStats extracts objects, data_bytes, storage_bytes and index_bytes
// from a dbStats reply; fields the reply lacks are left out.
func parseDBStats(raw bson.Raw) map[string]int64 {
	return pick(raw, [][2]string{
		{"objects", "objects"},
		{"data_bytes", "dataSize"},
		{"storage_bytes", "storageSize"},
		{"index_bytes", "indexSize"},
	})
}

// parseCollStats extracts count, data_bytes, storage_bytes and index_bytes
// from a collStats reply; fields the reply lacks are left out.
func parseCollStats(raw bson.Raw) map[string]int64 {
	return pick(raw, [][2]string{
		{"count", "count"},
		{"data_bytes", "size"},
		{"storage_bytes", "storageSize"},
		{"index_bytes", "totalIndexSize"},
	})
}

// pick reads the top-level numeric fields named by the second element of
// each pair into a map keyed by the first.
func pick(raw bson.Raw, fields [][2]string) map[string]int64 {
	out := make(map[string]int64, len(fields))

	for _, f := range fields {
		if v, ok := lookupInt(raw, f[1]); ok {
			out[f[0]] = v
		}
	}

	return out
}

// lookupInt finds the value at path in doc and converts it to an integer.
func lookupInt(doc bson.Raw, path ...string) (int64, bool) {
	v, err := doc.LookupErr(path...)
	if err != nil {
		return 0, false
	}

	return toInt64(v)
}

// toInt64 converts a BSON number to int64. Servers report counters and sizes
// as int32, int64 or double depending on version, product and magnitude
// (MongoDB appends small values as int32, dbStats sizes are doubles, FerretDB
// uses int64), so every numeric type is accepted; doubles are rounded to the
// nearest integer. Non-numbers, NaN and values out of int64's range are
// rejected.
func toInt64(v bson.RawValue) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true
	case bson.TypeInt64:
		return v.Int64(), true
	case bson.TypeDouble:
		return floatToInt64(v.Double())
	case bson.TypeDecimal128:
		f, err := strconv.ParseFloat(v.Decimal128().String(), 64)
		if err != nil {
			return 0, false
		}

		return floatToInt64(f)
	default:
		return 0, false
	}
}

// floatToInt64 rounds f to the nearest int64, rejecting NaN and values out
// of range.
func floatToInt64(f float64) (int64, bool) {
	f = math.Round(f)
	if math.IsNaN(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}

	return int64(f), true
}
