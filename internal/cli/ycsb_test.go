package cli

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/datagen/ycsbref"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// The bundled YCSB workloads are run against the null server, which
// records every command it receives; the test then checks what was sent,
// not what the engine says it did: the mix of operations against the
// workload's proportions, and the keys the reads, updates and scans named
// against the exact probabilities of the workload's request distribution,
// taking into account that inserts grow the key space during the run.

const (
	ycsbRecords = 1000
	ycsbOps     = 10000
)

// ycsbEvent is one operation of the run phase as the server saw it.
type ycsbEvent struct {
	kind  string // read, update, scan or insert
	key   string // the _id its filter names (the start key of a scan)
	limit int64  // a scan's limit
	n     int64  // records inserted before it: its key space is [0, n)
}

// ycsbRecorder turns received commands into events. The workloads run one
// worker, so commands arrive in the order they were generated.
type ycsbRecorder struct {
	mu       sync.Mutex
	inserted int64
	events   []ycsbEvent
	bad      []string
}

func (r *ycsbRecorder) record(c *wiretest.Command) {
	r.mu.Lock()
	defer r.mu.Unlock()

	switch c.Name {
	case "insert":
		if coll, _ := c.Body.Lookup("insert").StringValueOK(); coll != "usertable" {
			return // mongobench's mark on the database it owns
		}

		docs := int64(len(c.Sequences["documents"]))
		if r.inserted >= ycsbRecords { // the load is done: a run insert
			r.events = append(r.events, ycsbEvent{kind: "insert", n: r.inserted})
		}

		r.inserted += docs
	case "find":
		id := c.Body.Lookup("filter", "_id")
		if s, ok := id.StringValueOK(); ok {
			r.events = append(r.events, ycsbEvent{kind: "read", key: s, n: r.inserted})
			return
		}

		start, _ := id.Document().Lookup("$gte").StringValueOK()
		r.events = append(r.events, ycsbEvent{kind: "scan", key: start, limit: c.Body.Lookup("limit").AsInt64(), n: r.inserted})
	case "delete":
		if coll, _ := c.Body.Lookup("delete").StringValueOK(); coll != "usertable" {
			return // mongobench rewriting its owner record
		}

		r.bad = append(r.bad, c.Name)
	case "update":
		for _, u := range c.Sequences["updates"] {
			key, _ := u.Lookup("q", "_id").StringValueOK()
			r.events = append(r.events, ycsbEvent{kind: "update", key: key, n: r.inserted})
		}
	case "hello", "isMaster", "ismaster", "ping", "buildInfo", "buildinfo", "listDatabases", "dropDatabase",
		"create", "drop", "listCollections", "createIndexes", "endSessions", "serverStatus", "getParameter":
	default:
		r.bad = append(r.bad, c.Name)
	}
}

// ycsbExpected returns the expected number of draws of each key over the
// events that draw one, for request distribution dist (YCSB's scrambled
// zipfian folded onto keys keys, or YCSB's latest, theta 0.99), each event
// over its own key space [0, n).
func ycsbExpected(events []ycsbEvent, dist string, size, keys int) []float64 {
	var scrambled []float64
	if dist != "latest" {
		scrambled = ycsbref.ScrambledPMF(keys, 1<<20)
	}

	exp := make([]float64, size)
	byN := map[int64]float64{}

	for _, e := range events {
		if e.kind != "insert" {
			byN[e.n]++
		}
	}

	for n, times := range byN {
		if dist == "latest" {
			// YCSB's SkewedLatestGenerator, built when the newest key
			// was recordcount-1.
			for k, v := range ycsbref.SkewedLatestPMF(int(n)-1, ycsbRecords-1) {
				exp[k] += times * v
			}

			continue
		}

		// YCSB draws again while the key is not inserted yet.
		for k, v := range ycsbref.Within(scrambled, int(n)) {
			exp[k] += times * v
		}
	}

	return exp
}

// chiSquareFit returns Pearson's statistic of observed against expected
// counts, pooling cells expected below 5, and its 99.9% bound
// (Wilson-Hilferty).
func chiSquareFit(obs, exp []float64) (stat, bound float64, df int) {
	var poolObs, poolExp float64

	cells := 0

	for i := range obs {
		if exp[i] < 5 {
			poolObs += obs[i]
			poolExp += exp[i]

			continue
		}

		stat += (obs[i] - exp[i]) * (obs[i] - exp[i]) / exp[i]
		cells++
	}

	if poolExp > 0 {
		stat += (poolObs - poolExp) * (poolObs - poolExp) / poolExp
		cells++
	}

	df = cells - 1
	k := float64(df)
	a := 2 / (9 * k)

	return stat, k * math.Pow(1-a+3.090232*math.Sqrt(a), 3), df
}

// topShare is the share of the total held by the 10 largest entries of v.
func topShare(v []float64) float64 {
	s := slices.Clone(v)
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))

	top, total := 0.0, 0.0
	for i, x := range s {
		if i < 10 {
			top += x
		}

		total += x
	}

	return top / total
}

// checkYCSBMix compares the operations the server received with the
// workload's proportions (chi-square, 99.9%) and with the counts of the
// results file.
func checkYCSBMix(t *testing.T, mix map[string]float64, events []ycsbEvent, phases []result.Phase) {
	t.Helper()

	got := map[string]float64{}
	for _, e := range events {
		got[e.kind]++
	}

	// run.max_operations counts a composite (a read-modify-write) once,
	// as YCSB's operationcount does.
	if len(events) != ycsbOps {
		t.Errorf("the server received %d run operations, want operationcount %d", len(events), ycsbOps)
	}

	names := make([]string, 0, len(mix))
	for name := range mix {
		names = append(names, name)
	}

	sort.Strings(names)

	obs := make([]float64, len(names))
	exp := make([]float64, len(names))
	line := ""

	for i, name := range names {
		obs[i], exp[i] = got[name], mix[name]*float64(len(events))
		line += fmt.Sprintf(" %s %.4f (want %.2f)", name, got[name]/float64(len(events)), mix[name])
	}

	t.Logf("mix:%s", line)

	for name := range got {
		if mix[name] == 0 {
			t.Errorf("the server received %v %s operations; the workload has none", got[name], name)
		}
	}

	if len(names) > 1 {
		// One degree of freedom: the 99.9% quantile is 10.83.
		if stat, _, _ := chiSquareFit(obs, exp); stat > 10.83 {
			t.Errorf("mix %v does not fit the proportions %v: chi-square %.1f > 10.83", got, mix, stat)
		}
	}

	for _, p := range phases {
		if p.Name != "run" {
			continue
		}

		counts := map[string]int64{}
		for _, o := range p.Operations {
			counts[o.Name] = o.Count
		}

		// A read-modify-write that max_operations stopped after its read is
		// a read to the server (and is not counted as a composite).
		counts["read"] += counts["read_modify_write/read"] - counts["read_modify_write"]

		for _, o := range p.Operations {
			if strings.Contains(o.Name, "/") {
				continue // a composite's step
			}

			if float64(counts[o.Name]) != got[o.Name] {
				t.Errorf("results file: %s count %d, the server received %v", o.Name, counts[o.Name], got[o.Name])
			}
		}
	}
}

// checkYCSBKeys compares the keys the reads, updates and scans named with
// the request distribution's exact expectation.
func checkYCSBKeys(t *testing.T, dist string, events []ycsbEvent, keys int) {
	t.Helper()

	size := ycsbRecords + ycsbOps
	index := make(map[string]int, size)

	for k := range size {
		index[ycsbref.KeyName(int64(k), 1, false)] = k
	}

	obs := make([]float64, size)

	for _, e := range events {
		if e.kind == "insert" {
			continue
		}

		k, ok := index[e.key]
		if !ok || int64(k) >= e.n {
			t.Fatalf("%s named key %q, which is not one of the %d records inserted before it", e.kind, e.key, e.n)
		}

		obs[k]++
	}

	exp := ycsbExpected(events, dist, size, keys)
	stat, bound, df := chiSquareFit(obs, exp)
	zipf := 0.0

	for i := 1; i <= 10; i++ {
		zipf += math.Pow(float64(i), -0.99)
	}

	zetaN := 0.0
	for i := 1; i <= ycsbRecords; i++ {
		zetaN += math.Pow(float64(i), -0.99)
	}

	t.Logf("keys (%s): top-10 share %.4f observed, %.4f expected from the generator's exact distribution, "+
		"%.4f by the Zipfian law over %d keys; chi-square %.1f, %d degrees of freedom, bound %.1f",
		dist, topShare(obs), topShare(exp), zipf/zetaN, ycsbRecords, stat, df, bound)

	if dist == "latest" {
		logRecency(t, events, index)
	}

	if stat > bound {
		t.Errorf("keys do not fit the %s distribution: chi-square %.1f > %.1f (%d degrees of freedom)", dist, stat, bound, df)
	}
}

// checkScanLengths checks that scan lengths are uniform in [1, 100].
func checkScanLengths(t *testing.T, events []ycsbEvent) {
	t.Helper()

	obs := make([]float64, 100)
	exp := make([]float64, 100)
	scans := 0.0

	for _, e := range events {
		if e.kind != "scan" {
			continue
		}

		if e.limit < 1 || e.limit > 100 {
			t.Fatalf("scan with limit %d, want 1 to maxscanlength 100", e.limit)
		}

		obs[e.limit-1]++
		scans++
	}

	for i := range exp {
		exp[i] = scans / 100
	}

	stat, bound, df := chiSquareFit(obs, exp)
	t.Logf("scan lengths: chi-square %.1f, %d degrees of freedom, bound %.1f", stat, df, bound)

	if stat > bound {
		t.Errorf("scan lengths are not uniform in [1, 100]: chi-square %.1f > %.1f", stat, bound)
	}
}

// logRecency reports, for the latest distribution, the share of reads of
// the 10 newest records at the time of each read, observed and expected:
// the key space moves with every insert, so this is the figure of its
// skew.
func logRecency(t *testing.T, events []ycsbEvent, index map[string]int) {
	t.Helper()

	cache := map[int64]float64{}
	obs, exp, reads := 0.0, 0.0, 0.0

	for _, e := range events {
		if e.kind == "insert" {
			continue
		}

		reads++

		if e.n-1-int64(index[e.key]) < 10 {
			obs++
		}

		top, ok := cache[e.n]
		if !ok {
			p := ycsbref.SkewedLatestPMF(int(e.n)-1, ycsbRecords-1)
			for _, v := range p[len(p)-10:] {
				top += v
			}

			cache[e.n] = top
		}

		exp += top
	}

	t.Logf("latest: share of reads of the 10 newest records %.4f observed, %.4f expected", obs/reads, exp/reads)
}

// pairReadModifyWrites turns each update and the read just before it into
// one read_modify_write event, checking that both name the same record (the
// composite's steps share the iteration's key). A read-modify-write cut
// short by max_operations after its read is dropped.
func pairReadModifyWrites(t *testing.T, events []ycsbEvent) []ycsbEvent {
	t.Helper()

	out := make([]ycsbEvent, 0, len(events))

	for _, e := range events {
		if e.kind != "update" {
			out = append(out, e)
			continue
		}

		prev := len(out) - 1
		if prev < 0 || out[prev].kind != "read" || out[prev].key != e.key {
			t.Fatalf("update of %q not preceded by a read of the same record", e.key)
		}

		out[prev].kind = "read_modify_write"
	}

	return out
}
