package cli

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/mongobench/mongobench/internal/spec/datagen/ycsbref"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// The skew of the bundled YCSB workloads as the server sees it: the keys
// are read off the wire (the null server records every command) and their
// head shares compared with the reference computation of YCSB's own
// distribution (ycsbref, derived from YCSB's published algorithm apart
// from the generators).

// skewRecorder collects the keys that reads and scans name, with the
// number of run inserts before each.
type skewRecorder struct {
	mu       sync.Mutex
	inserted int64
	keys     []string
	n        []int64 // records inserted before each key's operation
}

func (r *skewRecorder) record(c *wiretest.Command) {
	r.mu.Lock()
	defer r.mu.Unlock()

	switch c.Name {
	case "insert":
		if coll, _ := c.Body.Lookup("insert").StringValueOK(); coll == "usertable" {
			r.inserted += int64(len(c.Sequences["documents"]))
		}
	case "find":
		id := c.Body.Lookup("filter", "_id")

		key, ok := id.StringValueOK()
		if !ok {
			key, _ = id.Document().Lookup("$gte").StringValueOK()
		}

		r.keys = append(r.keys, key)
		r.n = append(r.n, r.inserted)
	}
}

// runYCSBSkew runs workload file against the recording null server with
// the given params and returns what was recorded.
func runYCSBSkew(t *testing.T, file string, records, ops int, extra ...string) *skewRecorder {
	t.Helper()

	rec := &skewRecorder{}

	srv, err := wiretest.Start(wiretest.Config{Record: rec.record})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	args := append([]string{
		"run", "../../workloads/ycsb/" + file + ".yaml", "--uri", srv.URI(), "--out", outPath(t),
		"--no-explain", "--server-stats-interval", "0", "--quiet",
		"--set", "recordcount=" + strconv.Itoa(records), "--set", "operationcount=" + strconv.Itoa(ops),
	}, extra...)

	if code, stdout, stderr := runMain(t, args...); code != 0 {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()

	return rec
}

// keyIndex maps YCSB's names of keys 0 .. n-1 to the keys.
func keyIndex(n int) map[string]int {
	index := make(map[string]int, n)
	for k := range n {
		index[ycsbref.KeyName(int64(k), 1, false)] = k
	}

	return index
}

// countKeys counts the recorded keys by key number, failing on a name
// that is not one of the records inserted before its operation.
func countKeys(t *testing.T, rec *skewRecorder, index map[string]int, size int) []float64 {
	t.Helper()

	c := make([]float64, size)

	for i, name := range rec.keys {
		k, ok := index[name]
		if !ok || int64(k) >= rec.n[i] {
			t.Fatalf("operation %d named %q, not one of the %d records inserted before it", i, name, rec.n[i])
		}

		c[k]++
	}

	return c
}

// setShare is the share of counts c falling on the keys in set.
func setShare(c []float64, set []int) float64 {
	in, total := 0.0, 0.0
	for _, v := range c {
		total += v
	}

	for _, k := range set {
		in += c[k]
	}

	return in / total
}

// hottest returns the n keys of largest p.
func hottest(p []float64, n int) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}

	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(p[b], p[a]) })

	return idx[:n]
}

// TestYCSBSkewC1000 runs workload C's reads over 1,000 records: the 10
// hottest keys must get 9-14% of the reads (YCSB's scrambled zipfian;
// the reference computation gives 12.6%, at least the 11.8% of ranks 0-9),
// and within 1.5 points of the reference.
func TestYCSBSkewC1000(t *testing.T) {
	t.Parallel()

	const records, ops = 1000, 10_000

	rec := runYCSBSkew(t, "c", records, ops)
	if len(rec.keys) != ops {
		t.Fatalf("the server received %d reads, want operationcount %d", len(rec.keys), ops)
	}

	c := countKeys(t, rec, keyIndex(records), records)
	ref := ycsbref.Within(ycsbref.ScrambledPMF(ycsbref.Keys(records, ops, 0), 1<<20), records)

	got, want := ycsbref.HeadShare(c, 10), ycsbref.HeadShare(ref, 10)
	t.Logf("workload C, %d records, %d reads: top-10 keys %.4f of reads on the wire, %.4f by the reference", records, ops, got, want)

	if got < 0.09 || got > 0.14 {
		t.Errorf("top-10 share %.4f, outside [0.09, 0.14]", got)
	}

	if math.Abs(got-want) > 0.015 {
		t.Errorf("top-10 share %.4f, reference %.4f", got, want)
	}
}

// TestYCSBSkewE runs workload E over 1,000 records and 12,000 operations,
// whose inserts grow the key space to about 1,600 keys, and checks that
// the scan start keys keep YCSB's skew: their top-10 share over the run is
// the reference's (YCSB folds ranks onto recordcount + 2 x the expected
// inserts + 1 = 2,201 keys and draws again beyond the inserted ones), and
// the keys hottest in the first half of the run are still hottest in the
// second.
func TestYCSBSkewE(t *testing.T) {
	t.Parallel()

	const records, ops = 1000, 12_000

	rec := runYCSBSkew(t, "e", records, ops)
	size := records + ops
	index := keyIndex(size)
	c := countKeys(t, rec, index, size)

	keys := ycsbref.Keys(records, ops, 0.05)
	pmf := ycsbref.ScrambledPMF(keys, 1<<20)
	exp := make([]float64, size)
	byN := map[int64]float64{}

	for _, n := range rec.n {
		byN[n]++
	}

	for n, times := range byN {
		for k, v := range ycsbref.Within(pmf, int(n)) {
			exp[k] += times * v
		}
	}

	got, want := ycsbref.HeadShare(c, 10), ycsbref.HeadShare(exp, 10)
	t.Logf("workload E, %d records, %d operations (%d scans; key space %d to %d): top-10 scan start keys %.4f on the wire, %.4f by the reference",
		records, ops, len(rec.keys), rec.n[0], rec.n[len(rec.n)-1], got, want)

	if math.Abs(got-want) > 0.015 {
		t.Errorf("scan starts: top-10 share %.4f, reference %.4f", got, want)
	}

	// The hot set stays: the 3 hottest start keys of the first half (those
	// of ranks 0-2, 3.8%, 1.9% and 1.3% of the draws) are among the 10
	// hottest of the second.
	half := len(rec.keys) / 2
	first, second := make([]float64, size), make([]float64, size)

	for i, name := range rec.keys {
		if i < half {
			first[index[name]]++
		} else {
			second[index[name]]++
		}
	}

	late := hottest(second, 10)
	for _, k := range hottest(first, 3) {
		if !slices.Contains(late, k) {
			t.Errorf("key %d, among the 3 hottest scan starts of the first half, is not among the 10 hottest of the second (%v)", k, late)
		}
	}
}
