package bench

import (
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/targets"
)

// durabilityVariants is a workload with a durability phase whose variants
// change the write concern it uses (w1, w1_j) or not (again).
const durabilityVariants = `name: dur
database: mongobench_dur
collections: [{name: items}, {name: acked}]
run: {concurrency: 1, max_operations: 1}
operations:
  - {name: insert, op: insertOne, collection: items, document: {n: 1}, write_concern: {w: 1}}
durability: {collection: acked, documents: 100, batch_size: 10, operation: insert}
variants:
  - name: w1
  - name: w1_j
    operations: [{name: insert, write_concern: {w: 1, j: true}}]
  - name: again
`

// compileVariants compiles each variant of text.
func compileVariants(t *testing.T, text string) *Plan {
	t.Helper()

	base := compileWorkload(t, text).Spec

	specs, errs := base.VariantSpecs()
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	p := &Plan{Base: base}

	for _, s := range specs {
		c, errs := Compile(s)
		if len(errs) > 0 {
			t.Fatal(errs)
		}

		p.Variants = append(p.Variants, c)
	}

	return p
}

// TestDurabilityPhaseChecksEachWriteConcern checks the seams of the
// durability phase without a server: variants whose write concerns differ
// are checked one by one under their own write concern, and targets that
// mongobench does not crash (a mongod, a connection string) get a row that
// says so instead of counts.
func TestDurabilityPhaseChecksEachWriteConcern(t *testing.T) {
	p := compileVariants(t, durabilityVariants)

	rec := &recorder{}
	r := &run{plan: p, opts: &p.Options, hooks: rec.hooks(), msg: rec}

	list := []targets.TargetSpec{
		{Name: "standalone", Kind: targets.KindMongod},
		targets.Existing("prod", "mongodb://127.0.0.1:1/"),
	}

	rows := r.durabilityPhase(t.Context(), list)

	want := []struct{ target, variant, wc string }{
		{"standalone", "w1", "w:1"},
		{"standalone", "w1_j", "w:1,j:true"},
		{"standalone", "again", "w:1"},
		{"prod", "w1", "w:1"},
		{"prod", "w1_j", "w:1,j:true"},
		{"prod", "again", "w:1"},
	}

	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}

	for i, w := range want {
		d := rows[i]
		if d.Target != w.target || d.Variant != w.variant || d.WriteConcern != w.wc {
			t.Errorf("row %d: %s/%s %s, want %s/%s %s", i, d.Target, d.Variant, d.WriteConcern, w.target, w.variant, w.wc)
		}

		if !strings.Contains(d.Error, "not verified here") || d.Acknowledged != 0 {
			t.Errorf("row %d: error %q, %d acknowledged; want a row saying it is not verified, without counts", i, d.Error, d.Acknowledged)
		}
	}

	if len(rec.lines) != len(want) {
		t.Errorf("%d messages, want one per row: %q", len(rec.lines), rec.lines)
	}
}

// TestDurabilityPhaseOnceForOneWriteConcern checks that variants sharing
// a write concern are checked once, without a variant name, and that an
// embedded target needs the serve command to be crashed.
func TestDurabilityPhaseOnceForOneWriteConcern(t *testing.T) {
	p := compileVariants(t, strings.ReplaceAll(durabilityVariants, "{w: 1, j: true}", "{w: 1}"))

	rec := &recorder{}
	r := &run{plan: p, opts: &p.Options, hooks: rec.hooks(), msg: rec}

	rows := r.durabilityPhase(t.Context(), []targets.TargetSpec{{Name: "sqlite", Kind: targets.KindEmbedded}})

	if len(rows) != 1 || rows[0].Variant != "" || rows[0].WriteConcern != "w:1" {
		t.Fatalf("rows = %+v, want one, without a variant, under w:1", rows)
	}

	if !strings.Contains(rows[0].Error, "no serve command") {
		t.Errorf("error = %q, want one saying there is no serve command", rows[0].Error)
	}
}

// TestNoDurabilityPhase checks that a workload without a durability block
// crashes nothing.
func TestNoDurabilityPhase(t *testing.T) {
	p := &Plan{Base: compileNullInsert(t).Spec, Variants: []*Compiled{compileNullInsert(t)}}
	r := &run{plan: p, opts: &p.Options, msg: noMessages{}}

	if rows := r.durabilityPhase(t.Context(), nil); rows != nil {
		t.Errorf("rows = %+v, want none", rows)
	}
}
