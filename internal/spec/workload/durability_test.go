package workload

import (
	"strings"
	"testing"
)

func TestDurabilityValidation(t *testing.T) {
	t.Parallel()

	for name, tc := range map[string]struct {
		block string
		want  string // "" for valid
	}{
		"valid": {
			block: "durability: {collection: c, documents: 100, batch_size: 10, operation: ins}\n",
		},
		"documents": {
			block: "durability: {collection: c, documents: 0, batch_size: 10}\n",
			want:  "w.yaml:14:40: durability.documents: must be > 0",
		},
		"batch size": {
			block: "durability:\n  collection: c\n  documents: 5\n  batch_size: 0\n",
			want:  "w.yaml:17:15: durability.batch_size: must be between 1 and 100000",
		},
		"concurrency": {
			block: "durability: {collection: c, documents: 5, batch_size: 1, concurrency: -1}\n",
			want:  "durability.concurrency: must be between 1 and 256",
		},
		"collection": {
			block: "durability: {collection: d, documents: 5, batch_size: 1}\n",
			want:  `durability.collection: collection "d" is not declared in collections`,
		},
		"operation": {
			block: "durability: {collection: c, documents: 5, batch_size: 1, operation: nope}\n",
			want:  `durability.operation: operation "nope" is not declared in operations`,
		},
		"unknown field": {
			block: "durability: {collection: c, documents: 5, batch_size: 1, crash: now}\n",
			want:  `durability.crash: unknown field "crash"`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			spec, errs := Parse("w.yaml", []byte(base+tc.block))

			got := errorText(errs)

			switch {
			case tc.want == "" && len(errs) > 0:
				t.Fatalf("unexpected errors:\n%s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Fatalf("errors:\n%s\nwant one containing %q", got, tc.want)
			case tc.want == "":
				if spec.Durability.Writers() != DefaultDurabilityConcurrency {
					t.Errorf("Writers() = %d, want the default %d", spec.Durability.Writers(), DefaultDurabilityConcurrency)
				}

				if wc := spec.DurabilityWriteConcern(); wc != nil {
					t.Errorf("DurabilityWriteConcern() = %v, want nil (the operation has none)", wc.Label())
				}
			}
		})
	}
}

func TestDurabilityWriteConcernFollowsTheOperation(t *testing.T) {
	t.Parallel()

	text := strings.Replace(base, "    document: {a: 1}\n", "    document: {a: 1}\n    write_concern: {w: majority, j: true}\n", 1) +
		"durability: {collection: c, documents: 5, batch_size: 1, concurrency: 2, operation: ins}\n"

	spec, errs := Parse("w.yaml", []byte(text))
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	if got := spec.DurabilityWriteConcern().Label(); got != "w:majority,j:true" {
		t.Errorf("DurabilityWriteConcern() = %s, want w:majority,j:true", got)
	}

	if spec.Durability.Writers() != 2 {
		t.Errorf("Writers() = %d, want 2", spec.Durability.Writers())
	}
}
