package cli

import (
	"context"
	"encoding/json"
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

// TestErrorTrackerWritesMatchesStudy checks that the companion file
// error-tracker-writes.yaml, which docs/studies/error-tracker.md uses to
// show why create is not flat on FerretDB/SQLite, measures the study's own
// writes (the same operations, variables and collections) with each write
// alone in its step, so its verdict speaks for the study; an edit of the
// study's documents that the companion does not follow fails here.
func TestErrorTrackerWritesMatchesStudy(t *testing.T) {
	read := func(path string, set ...string) *workload.Spec {
		t.Helper()

		spec, errs := workload.ReadWith(context.Background(), path, set)
		if len(errs) > 0 {
			t.Fatalf("%s --set %v: %v", path, set, errs)
		}

		return spec
	}

	asJSON := func(v any) string {
		t.Helper()

		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}

		return string(b)
	}

	study := read("../../workloads/studies/error-tracker.yaml")
	writes := read("../../workloads/studies/error-tracker-writes.yaml")

	if got, want := asJSON(writes.Vars), asJSON(study.Vars); got != want {
		t.Errorf("vars differ from the study's:\n%s\nwant\n%s", got, want)
	}

	if got, want := asJSON(writes.Collections), asJSON(study.Collections); got != want {
		t.Errorf("collections differ from the study's:\n%s\nwant\n%s", got, want)
	}

	ops := func(s *workload.Spec) map[string]string {
		m := map[string]string{}
		for _, op := range s.Operations {
			m[op.Name] = asJSON(op)
		}

		return m
	}

	studyOps, writesOps := ops(study), ops(writes)
	for _, name := range []string{"create", "group"} {
		if writesOps[name] == "" || writesOps[name] != studyOps[name] {
			t.Errorf("operation %s is not the study's:\n%s\nwant\n%s", name, writesOps[name], studyOps[name])
		}
	}

	phases, _ := read("../../workloads/studies/error-tracker-writes.yaml", "notices=100000").PhaseList()
	if len(phases) != 1 || phases[0].Blocks == nil {
		t.Fatalf("phases %+v, want one with growth blocks", phases)
	}

	b := phases[0].Blocks
	if len(b.Steps) != 2 || asJSON(b.Steps[0].Operations) != `["create"]` || asJSON(b.Steps[1].Operations) != `["group"]` ||
		len(b.Steps[0].Sequence)+len(b.Steps[1].Sequence) != 0 {
		t.Errorf("steps %+v, want the inserts alone, then the upserts alone", b.Steps)
	}

	if b.Until.Collection != "notices" || b.Until.Documents != 100000 || b.Steps[0].Count != 1000 || b.Steps[1].Count != 1000 || phases[0].Concurrency != 8 {
		t.Errorf("--set notices=100000: until %+v, steps %+v, %d workers; want 100,000 notices, 1,000 of each write per block, 8 workers",
			b.Until, b.Steps, phases[0].Concurrency)
	}
}
