//go:build e2e

// Every bundled YCSB workload run end to end (minutes under -race): the
// end-to-end CI step runs it; the README's test command keeps the skew
// checks of 1,000 records.

package cli

import (
	"math"
	"strconv"
	"testing"

	"github.com/mongobench/mongobench/internal/spec/datagen/ycsbref"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

func TestYCSBWorkloads(t *testing.T) {
	t.Parallel()

	cases := []struct {
		file string
		mix  map[string]float64
		dist string
	}{
		{"a", map[string]float64{"read": 0.5, "update": 0.5}, "zipfian"},
		{"b", map[string]float64{"read": 0.95, "update": 0.05}, "zipfian"},
		{"c", map[string]float64{"read": 1}, "zipfian"},
		{"d", map[string]float64{"read": 0.95, "insert": 0.05}, "latest"},
		{"e", map[string]float64{"scan": 0.95, "insert": 0.05}, "zipfian"},
		{"f", map[string]float64{"read": 0.5, "read_modify_write": 0.5}, "zipfian"},
	}

	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			rec := &ycsbRecorder{}

			srv, err := wiretest.Start(wiretest.Config{Record: rec.record})
			if err != nil {
				t.Fatal(err)
			}

			t.Cleanup(func() { _ = srv.Close() })

			out := outPath(t)

			code, stdout, stderr := runMain(t, "run", "../../workloads/ycsb/"+tc.file+".yaml", "--uri", srv.URI(), "--out", out,
				"--no-explain", "--server-stats-interval", "0", "--quiet",
				"--set", "recordcount="+strconv.Itoa(ycsbRecords), "--set", "operationcount="+strconv.Itoa(ycsbOps))
			if code != 0 {
				t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}

			rec.mu.Lock()
			defer rec.mu.Unlock()

			if len(rec.bad) > 0 {
				t.Errorf("unexpected commands: %v", rec.bad)
			}

			if tc.file == "f" {
				rec.events = pairReadModifyWrites(t, rec.events)
			}

			checkYCSBMix(t, tc.mix, rec.events, readResults(t, out).Phases)
			checkYCSBKeys(t, tc.dist, rec.events, ycsbref.Keys(ycsbRecords, ycsbOps, tc.mix["insert"]))

			if tc.file == "e" {
				checkScanLengths(t, rec.events)
			}
		})
	}
}

// TestYCSBSkewC100000 runs workload C's reads over 100,000 records (one
// one-byte field each, to keep the load small) and compares the head
// shares with the reference: the share of the reads that fell on the
// reference's hottest 1% and 10% of the keys, within 2 points (the
// sampling error is 0.25). The share of the sample's own hottest 1% is
// logged, not checked: over 40,000 reads of 100,000 keys it sits above
// the distribution's, as the sample's top is picked by its own noise.
func TestYCSBSkewC100000(t *testing.T) {
	t.Parallel()

	const records, ops = 100_000, 40_000

	rec := runYCSBSkew(t, "c", records, ops, "--set", "fieldcount=1", "--set", "fieldlength=1")
	if len(rec.keys) != ops {
		t.Fatalf("the server received %d reads, want operationcount %d", len(rec.keys), ops)
	}

	c := countKeys(t, rec, keyIndex(records), records)
	ref := ycsbref.Within(ycsbref.ScrambledPMF(ycsbref.Keys(records, ops, 0), 1<<20), records)

	for _, tc := range []struct {
		name string
		keys int
	}{{"top 1%", records / 100}, {"top 10%", records / 10}} {
		set := hottest(ref, tc.keys)
		got, want := setShare(c, set), setShare(ref, set)
		t.Logf("workload C, %d records, %d reads: the reference's %s of keys got %.4f of reads on the wire, %.4f by the reference",
			records, ops, tc.name, got, want)

		if math.Abs(got-want) > 0.02 {
			t.Errorf("%s: %.4f of reads, reference %.4f", tc.name, got, want)
		}
	}

	t.Logf("the sample's hottest 1%% of keys: %.4f of reads, reference %.4f",
		ycsbref.HeadShare(c, records/100), ycsbref.HeadShare(ref, records/100))
}
