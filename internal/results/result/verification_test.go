package result

import "testing"

// TestVerifications checks what counts as acknowledged: inserts into the
// verified collection before the verify phase, not those of another
// collection, an excluded phase or after it; and that a matrix sums its
// trials per target, variant and collection.
func TestVerifications(t *testing.T) {
	spec := map[string]any{"operations": []any{
		map[string]any{"name": "many", "op": "insertMany", "collection": "a"},
		map[string]any{"name": "one", "op": "insertOne", "collection": "a"},
		map[string]any{"name": "other", "op": "insertOne", "collection": "b"},
		map[string]any{"name": "upd", "op": "updateOne", "collection": "a"},
		map[string]any{"name": "present", "op": "find", "collection": "a"},
	}}

	run := func(present int64) *Result {
		return &Result{
			Workload: Workload{Spec: spec},
			Phases: []Phase{
				{Name: "warm", Excluded: true, Operations: []Operation{{Name: "one", Docs: 7}}},
				{Name: "run", Operations: []Operation{{Name: "many", Docs: 500}, {Name: "one", Docs: 3}, {Name: "other", Docs: 9}, {Name: "upd", Docs: 4}}},
				{Name: VerifyPhase, Operations: []Operation{{Name: "present", Docs: present}}},
				{Name: "after", Operations: []Operation{{Name: "one", Docs: 100}}},
			},
		}
	}

	got := run(500).Verifications()
	if len(got) != 1 || got[0] != (Verification{Trials: 1, Collection: "a", Acknowledged: 503, Present: 500, Lost: 3}) {
		t.Errorf("Verifications = %+v, want 503 acknowledged, 500 present, 3 lost in a", got)
	}

	if got := run(600).Verifications(); got[0].Lost != 0 {
		t.Errorf("more present than acknowledged: lost %d, want 0", got[0].Lost)
	}

	m := &Matrix{Trials: []Trial{
		{Target: "t", Variant: "x", Result: run(503)},
		{Target: "t", Variant: "y", Result: run(500)},
		{Target: "t", Variant: "x", Result: run(502)},
		{Target: "t", Variant: "x", Result: nil},
	}}

	rows := m.Verifications()
	want := []Verification{
		{Target: "t", Variant: "x", Trials: 2, Collection: "a", Acknowledged: 1006, Present: 1005, Lost: 1},
		{Target: "t", Variant: "y", Trials: 1, Collection: "a", Acknowledged: 503, Present: 500, Lost: 3},
	}

	if len(rows) != len(want) || rows[0] != want[0] || rows[1] != want[1] {
		t.Errorf("matrix Verifications = %+v, want %+v", rows, want)
	}

	if got := (&Result{Phases: run(1).Phases}).Verifications(); len(got) != 0 {
		t.Errorf("a run without a spec verified %+v", got)
	}
}
