package cli

import (
	"context"
	"testing"

	"github.com/mongobench/mongobench/internal/spec/workload"
)

// TestErrorTrackerParameters checks that the error-tracker study reaches
// its sizes with --set alone: by default 10,000 notices in blocks of 1,000
// reports at 8 workers; --set notices=100000 (the seed's full size),
// per_block, searches and concurrency change the blocks; an undeclared
// name is refused with the declared ones listed.
func TestErrorTrackerParameters(t *testing.T) {
	const path = "../../workloads/studies/error-tracker.yaml"

	blocks := func(set ...string) (*workload.Blocks, int) {
		t.Helper()

		spec, errs := workload.ReadWith(context.Background(), path, set)
		if len(errs) > 0 {
			t.Fatalf("--set %v: %v", set, errs)
		}

		phases, _ := spec.PhaseList()
		if len(phases) != 1 || phases[0].Blocks == nil {
			t.Fatalf("phases %+v, want one with growth blocks", phases)
		}

		return phases[0].Blocks, phases[0].Concurrency
	}

	b, workers := blocks()
	if b.Until.Documents != 10000 || b.Until.Collection != "notices" || b.Steps[0].Count != 1000 || workers != 8 {
		t.Errorf("default: until %+v, %d reports per block, %d workers; want 10,000 notices, 1,000, 8", b.Until, b.Steps[0].Count, workers)
	}

	b, workers = blocks("notices=100000", "per_block=500", "searches=1000", "concurrency=4")
	if b.Until.Documents != 100000 || b.Steps[0].Count != 500 || b.Steps[1].Count != 1000 || workers != 4 {
		t.Errorf("--set: until %+v, steps %+v, %d workers", b.Until, b.Steps, workers)
	}

	if _, errs := workload.ReadWith(context.Background(), path, []string{"blocks=100"}); len(errs) == 0 {
		t.Error("--set blocks=100 was accepted; the study declares no such parameter")
	}
}
