package workload

import (
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/spec/opkind"
)

const cleanup = `name: cleanup
database: bench
collections:
  - name: scores
    indexes:
      - keys: {user_id: 1, year: 1}
        unique: true
      - keys: {science.id: 1}
run:
  max_operations: 10
operations:
  - name: fill
    op: insertMany
    collection: scores
    batch_size: 10
    document: {user_id: {^int: {min: 1, max: 9}}}
  - name: clean
    op: deleteMany
    collection: scores
    filter: {}
variants:
  - name: delete_many
  - name: drop_recreate
    operations:
      - {name: clean, op: drop, collection: scores}
      - {name: reindex, op: createIndexes, collection: scores}
    run:
      sequence: [fill, clean, reindex]
  - name: no_indexes
    collections:
      - {name: scores, indexes: []}
    run:
      concurrency: 2
trials:
  rounds: 4
`

func TestVariantSpecs(t *testing.T) {
	t.Parallel()

	s, errs := Parse("v.yaml", []byte(cleanup))
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	specs, errs := s.VariantSpecs()
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	if len(specs) != 3 || s.Trials.Rounds != 4 {
		t.Fatalf("%d variants, %d rounds", len(specs), s.Trials.Rounds)
	}

	base, drop, bare := specs[0], specs[1], specs[2]

	if base.Variant != "delete_many" || base.Operations[1].Op != opkind.DeleteMany || len(base.Collections[0].Indexes) != 2 {
		t.Errorf("delete_many should equal the base: %+v", base.Operations[1])
	}

	// The changed kind replaces the operation (no stale filter), the new
	// operation is appended, and run is merged key by key.
	if o := drop.Operations[1]; o.Op != opkind.Drop || o.Filter != nil {
		t.Errorf("clean in drop_recreate = %+v", o)
	}

	if len(drop.Operations) != 3 || drop.Operations[2].Name != "reindex" || drop.Run.MaxOperations != 10 ||
		strings.Join(drop.Run.Sequence, ",") != "fill,clean,reindex" {
		t.Errorf("drop_recreate = %+v / %+v", drop.Operations, drop.Run)
	}

	if len(bare.Collections[0].Indexes) != 0 || bare.Run.Concurrency != 2 {
		t.Errorf("no_indexes: %d indexes, concurrency %d", len(bare.Collections[0].Indexes), bare.Run.Concurrency)
	}

	// The base document is untouched by merging.
	if len(s.Operations) != 2 || s.Operations[1].Op != opkind.DeleteMany || len(s.Collections[0].Indexes) != 2 {
		t.Error("merging modified the base spec")
	}
}

func TestVariantErrors(t *testing.T) {
	t.Parallel()

	for name, tc := range map[string]struct{ yaml, want string }{
		"patch error names the variant and position": {
			yaml: strings.Replace(cleanup, "{name: reindex, op: createIndexes, collection: scores}",
				"{name: reindex, op: createIndexes, collection: nope}", 1),
			want: `v.yaml:26:56: operations[2].collection: collection "nope" is not declared in collections (in variant "drop_recreate")`,
		},
		"duplicate variant": {
			yaml: strings.Replace(cleanup, "  - name: no_indexes", "  - name: delete_many", 1),
			want: `variants[2].name: variant "delete_many" is defined twice`,
		},
		"unknown patch field": {
			yaml: strings.Replace(cleanup, "  - name: delete_many\n", "  - name: delete_many\n    database: x\n", 1),
			want: `variants[0].database: unknown field "database"`,
		},
		"group of one": {
			yaml: strings.Replace(cleanup, "  - name: delete_many\n", "  - name: delete_many\n    group: empyt\n", 1),
			want: `v.yaml:23:12: variants[0].group: group "empyt" holds only variant "delete_many": a group compares at least two variants`,
		},
		"bad target": {
			yaml: cleanup + "targets:\n  - kind: k\n  - kind: k\n",
			want: `targets[1].name: target "k" is named twice`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			_, errs := Parse("v.yaml", []byte(tc.yaml))

			var got []string
			for _, err := range errs {
				got = append(got, err.Error())
			}

			if !strings.Contains(strings.Join(got, "\n"), tc.want) {
				t.Errorf("want %q in:\n%s", tc.want, strings.Join(got, "\n"))
			}
		})
	}
}
