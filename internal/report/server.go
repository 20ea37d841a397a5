package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mongobench/mongobench/internal/base/units"

	"github.com/mongobench/mongobench/internal/results/result"
)

// serverSources are the sampled sources in the order the page lists them.
var serverSources = []string{"serverStatus", "top", "dbStats", "collStats"}

// opcounterOrder is the order MongoDB documents serverStatus.opcounters in.
var opcounterOrder = []string{"insert", "query", "update", "delete", "getmore", "command"}

// maxTopRows bounds the busiest-namespaces table.
const maxTopRows = 10

func newServerView(id string, s *result.Server) *serverView {
	v := &serverView{Notes: s.Notes}

	for _, name := range serverSources {
		if ok, known := s.Supported[name]; known {
			v.Sources = append(v.Sources, sourceBadge{Name: name, OK: ok})
		}
	}

	for _, name := range sortedKeys(s.Supported) {
		if !slices.Contains(serverSources, name) {
			v.Sources = append(v.Sources, sourceBadge{Name: name, OK: s.Supported[name]})
		}
	}

	v.Meta = []field{{Label: "Samples", Value: groupDigits(int64(len(s.Samples)))}}
	if s.IntervalS > 0 {
		v.Meta = append(v.Meta, field{Label: "Sampling interval", Value: formatSeconds(s.IntervalS)})
	}

	if s.SampleCostUS > 0 {
		v.Meta = append(v.Meta, field{Label: "Mean cost of a sample", Value: units.Micros(s.SampleCostUS)})
	}

	v.PhaseSpans = phaseSpans(s.Samples)

	if len(s.Samples) > 0 {
		v.Charts = serverCharts(id+"-server", s)
	}

	v.Top = topRows(s.Samples)

	return v
}

// phaseSpans says when each phase ran, as seen by the samples.
func phaseSpans(samples []result.ServerSample) []string {
	var spans []string

	for i := 0; i < len(samples); {
		j := i
		for j+1 < len(samples) && samples[j+1].Phase == samples[i].Phase {
			j++
		}

		if samples[i].Phase != "" {
			spans = append(spans, fmt.Sprintf("%s: %.1f–%.1f s", samples[i].Phase, samples[i].ElapsedS, samples[j].ElapsedS))
		}

		i = j + 1
	}

	return spans
}

// serverCharts draws what was sampled: counters as rates (delta divided by
// the time since the previous sample), gauges as they are.
func serverCharts(id string, s *result.Server) []*chart {
	n := len(s.Samples)
	x := make([]float64, n)
	dt := make([]float64, n)

	for i, smp := range s.Samples {
		x[i] = smp.ElapsedS

		switch {
		case i > 0:
			dt[i] = smp.ElapsedS - s.Samples[i-1].ElapsedS
		default:
			dt[i] = s.IntervalS
		}
	}

	perSec := func(delta int64, i int) *float64 {
		if dt[i] <= 0 {
			return nil
		}

		return num(float64(delta) / dt[i])
	}

	base := func(suffix, title, note, ylabel, yunit string) *chart {
		return &chart{
			ID: id + "-" + suffix, Title: title, Note: note, Sync: id,
			XLabel: "seconds since the run started", XName: "time", XUnit: "s",
			YLabel: ylabel, YUnit: yunit, X: x,
		}
	}

	var charts []*chart

	// Operation counters.
	ops := base("opcounters", "Server operations per second (opcounters)",
		"serverStatus.opcounters: the change between samples divided by the time between them.", "operations/s", "rate")

	for i, name := range mapKeys(s.Samples, func(smp *result.ServerSample) map[string]int64 { return smp.Opcounters }, opcounterOrder) {
		sr := series{Label: name, Color: palette[i%len(palette)], Values: make([]*float64, n)}

		for k := range s.Samples {
			if d, ok := s.Samples[k].Opcounters[name]; ok {
				sr.Values[k] = perSec(d, k)
			}
		}

		ops.Series = append(ops.Series, sr)
	}

	charts = appendChart(charts, ops)

	// Connections and network.
	conns := base("connections", "Connections", "serverStatus.connections.current: open connections, mongobench's own included.", "connections", "count")
	cs := series{Label: "current connections", Color: palette[0], Values: make([]*float64, n)}
	net := base("network", "Network traffic", "serverStatus.network: bytes per second received and sent by the server.", "bytes/s", "bytes_rate")
	in := series{Label: "bytes in", Color: palette[0], Values: make([]*float64, n)}
	out := series{Label: "bytes out", Color: palette[1], Values: make([]*float64, n)}
	anyConn, anyNet := false, false

	for k, smp := range s.Samples {
		if smp.Connections > 0 {
			cs.Values[k] = num(float64(smp.Connections))
			anyConn = true
		}

		if smp.NetworkBytesIn > 0 || smp.NetworkBytesOut > 0 {
			anyNet = true
		}

		in.Values[k] = perSec(smp.NetworkBytesIn, k)
		out.Values[k] = perSec(smp.NetworkBytesOut, k)
	}

	if anyConn {
		conns.Series = append(conns.Series, cs)
		charts = append(charts, conns)
	}

	if anyNet {
		net.Series = append(net.Series, in, out)
		charts = append(charts, net)
	}

	// WiredTiger: cache sizes in bytes, tickets and other gauges as counts.
	wt := func(smp *result.ServerSample) map[string]int64 { return smp.WiredTiger }
	cache := base("cache", "WiredTiger cache", "serverStatus.wiredTiger.cache: bytes in the cache, dirty bytes and the configured maximum.", "bytes", "bytes")
	gauges := base("tickets", "WiredTiger tickets", "Read and write tickets available and in use (serverStatus queues.execution or wiredTiger.concurrentTransactions).", "tickets", "count")

	for _, name := range mapKeys(s.Samples, wt, []string{"cache_bytes", "cache_dirty_bytes", "cache_max_bytes"}) {
		target := gauges
		if strings.HasPrefix(name, "cache_") || strings.HasSuffix(name, "_bytes") {
			target = cache
		}

		sr := gaugeSeries(s.Samples, name, palette[len(target.Series)%len(palette)], wt)
		if name == "cache_max_bytes" {
			sr.Dash = "dash"
		}

		target.Series = append(target.Series, sr)
	}

	charts = appendChart(charts, cache)
	charts = appendChart(charts, gauges)

	// Database and collection sizes.
	db := func(smp *result.ServerSample) map[string]int64 { return smp.DB }
	dbBytes := base("db", "Database size (dbStats)", "dbStats: data, storage and index bytes of the workload's database; objects on the right axis.", "bytes", "bytes")

	for _, name := range mapKeys(s.Samples, db, []string{"data_bytes", "storage_bytes", "index_bytes"}) {
		sr := gaugeSeries(s.Samples, name, palette[len(dbBytes.Series)%len(palette)], db)
		if !strings.HasSuffix(name, "_bytes") {
			sr.Axis = 2
			sr.Dash = "dash"
			dbBytes.Y2Label, dbBytes.Y2Unit = "objects", "count"
		}

		dbBytes.Series = append(dbBytes.Series, sr)
	}

	charts = appendChart(charts, dbBytes)

	colls := base("collections", "Documents per collection (collStats)", "collStats count of each collection.", "documents", "count")

	var names []string

	for _, smp := range s.Samples {
		for c := range smp.Collections {
			if !slices.Contains(names, c) {
				names = append(names, c)
			}
		}
	}

	sort.Strings(names)

	for i, c := range names {
		sr := series{Label: c, Color: palette[i%len(palette)], Values: make([]*float64, n)}

		for k, smp := range s.Samples {
			if v, ok := smp.Collections[c]["count"]; ok {
				sr.Values[k] = num(float64(v))
			}
		}

		colls.Series = append(colls.Series, sr)
	}

	charts = appendChart(charts, colls)

	return charts
}

// appendChart adds c if it has a series with a value.
func appendChart(charts []*chart, c *chart) []*chart {
	for i := range c.Series {
		if c.Series[i].hasValue() {
			return append(charts, c)
		}
	}

	return charts
}

func gaugeSeries(samples []result.ServerSample, name, color string, get func(*result.ServerSample) map[string]int64) series {
	sr := series{Label: name, Color: color, Values: make([]*float64, len(samples))}

	for k := range samples {
		if v, ok := get(&samples[k])[name]; ok {
			sr.Values[k] = num(float64(v))
		}
	}

	return sr
}

// mapKeys returns the keys found in any sample's map: those of first in
// its order, then the others sorted.
func mapKeys(samples []result.ServerSample, get func(*result.ServerSample) map[string]int64, first []string) []string {
	seen := map[string]bool{}

	for k := range samples {
		for name := range get(&samples[k]) {
			seen[name] = true
		}
	}

	var out []string

	for _, name := range first {
		if seen[name] {
			out = append(out, name)
			delete(seen, name)
		}
	}

	return append(out, sortedKeys(seen)...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}

	sort.Strings(keys)

	return keys
}

// topRows sums the top command's per-namespace times over the run, busiest
// first.
func topRows(samples []result.ServerSample) []topRow {
	type sums struct{ read, write, total int64 }

	byNS := map[string]*sums{}

	var all int64

	for _, smp := range samples {
		for ns, m := range smp.Top {
			s := byNS[ns]
			if s == nil {
				s = &sums{}
				byNS[ns] = s
			}

			s.read += m["read_us"]
			s.write += m["write_us"]
			s.total += m["total_us"]
			all += m["total_us"]
		}
	}

	names := sortedKeys(byNS)
	sort.SliceStable(names, func(i, j int) bool { return byNS[names[i]].total > byNS[names[j]].total })

	if len(names) > maxTopRows {
		names = names[:maxTopRows]
	}

	rows := make([]topRow, 0, len(names))

	for _, ns := range names {
		s := byNS[ns]

		share := "–"
		if all > 0 {
			share = fmt.Sprintf("%.1f%%", 100*float64(s.total)/float64(all))
		}

		rows = append(rows, topRow{
			Namespace: ns,
			Read:      units.Micros(float64(s.read)),
			Write:     units.Micros(float64(s.write)),
			Total:     units.Micros(float64(s.total)),
			Share:     share,
		})
	}

	return rows
}
