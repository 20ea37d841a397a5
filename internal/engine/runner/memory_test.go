package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/stats/metrics"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestRecordersFollowWhatRuns runs a growth phase against the null server in
// which 8 workers share a 200-operation mix and one worker runs a last
// operation, and checks the engine's recorders with the registry's own
// accounting: far below what per-worker dense histograms would cost, and
// within the estimate the workload validation budgets with. (That a worker
// allocates no histogram for an operation it never runs is checked on the
// handles themselves, in internal/stats/metrics.)
func TestRecordersFollowWhatRuns(t *testing.T) {
	t.Parallel()

	const ops, workers = 200, 8

	var b strings.Builder

	fmt.Fprintf(&b, `name: wide
database: mongobench_wide
collections:
  - name: items
run:
  interval: 1s
  timeout: 5s
phases:
  - name: grow
    concurrency: %d
    blocks:
      until: {collection: items, blocks: 2}
      steps:
        - {operations: [%s], count: 4000, concurrency: %d}
        - {operations: [solo], count: 50, concurrency: 1}
operations:
  - name: solo
    op: findOne
    collection: items
`, workers, mixNames(ops), workers)

	for i := range ops {
		fmt.Fprintf(&b, "  - name: op%d\n    op: findOne\n    collection: items\n    filter: {_id: %d}\n", i, i)
	}

	r := newRig(t, b.String(), wiretest.Config{}, nil)
	res := r.run(r.phases()[0])

	got := res.Registry.Bytes()

	// Every handle's counters, at least: 40 bytes per worker and
	// operation (the recorder's fixed part).
	if floor := int64(workers * (ops + 1) * 40); got < floor {
		t.Errorf("registry accounts for %d bytes, less than the %d of its handles' counters", got, floor)
	}

	// Dense histograms: one per worker and operation run, plus totals.
	const denseBytes = 23552 * 8
	dense := int64(workers*(ops+1)+ops+1) * denseBytes

	// The validation estimate covers handles and totals; the closed
	// intervals (one per block) add at most a record and a histogram payload
	// per operation.
	est := metrics.RecorderBytes(ops+1, workers, 1) + int64(res.Registry.NumIntervals()*(ops+1)*(64+1024))

	t.Logf("%d operations × %d workers, %d intervals: %d KiB accounted, estimate %d KiB, dense %d MiB",
		ops+1, workers, res.Registry.NumIntervals(), got>>10, est>>10, dense>>20)

	if got > est {
		t.Errorf("registry accounts for %d bytes, above the estimate %d", got, est)
	}

	if got > dense/50 {
		t.Errorf("registry accounts for %d bytes, not far below the %d of dense histograms", got, dense)
	}

	tot := res.Registry.Totals()
	if tot[0].Name != "solo" || tot[0].Count != 100 {
		t.Errorf("solo ran %d times (%s), want 100", tot[0].Count, tot[0].Name)
	}
}

// mixNames lists op0 … op(n-1) for a YAML flow sequence.
func mixNames(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("op%d", i)
	}

	return strings.Join(names, ", ")
}
