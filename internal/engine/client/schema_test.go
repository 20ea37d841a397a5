package client

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/spec/workload"
)

func parseSpec(t testing.TB, yaml string) *workload.Spec {
	t.Helper()

	spec, errs := workload.Parse("w.yaml", []byte(yaml))
	if len(errs) > 0 {
		t.Fatalf("parse: %v", errs)
	}

	return spec
}

// TestDeriveSchema checks the types read from generated documents: every
// BSON type of the protocol's list that the generators produce, embedded
// documents, arrays, and fields that only some templates write.
func TestDeriveSchema(t *testing.T) {
	t.Parallel()

	spec := parseSpec(t, `name: t
database: d
collections:
  - name: users
load:
  - collection: users
    documents: 10
    document:
      _id: {^objectId: {}}
      name: {^name: {}}
      n: {^int: {min: 1, max: 9}}
      score: {^float: {min: 0, max: 1}}
      at: {^now: {}}
      ok: {^bool: 0.5}
      tags: {^array: {length: 2, of: {^words: 1}}}
      none: []
      addr: {city: {^words: 1}, zip: {^int: {min: 1, max: 99}}}
operations:
  - name: add
    op: insertOne
    collection: users
    document: {name: x, extra: 1.5}
  - name: get
    op: findOne
    collection: users
    filter: {n: 1}
run:
  duration: 1s
`)

	sc, err := DeriveSchema(spec, "users", true)
	if err != nil {
		t.Fatal(err)
	}

	got, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}

	want := `{"fields":{"_id":{"type":"objectId"},"addr":{"type":"object","fields":{"city":{"type":"string"},"zip":{"type":"long"}}},` +
		`"at":{"type":"date"},"extra":{"type":"double"},"n":{"type":"long"},"name":{"type":"string"},` +
		`"none":{"type":"array","items":{"type":"mixed"}},"ok":{"type":"bool"},"score":{"type":"double"},` +
		`"tags":{"type":"array","items":{"type":"string"}}}}`
	if string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}

// TestDeriveSchemaVaryingType checks that a field generated with two types
// is an error naming the collection and the field for ODM stacks (strict)
// and mixed for driver stacks, while an array of mixed elements is allowed.
func TestDeriveSchemaVaryingType(t *testing.T) {
	t.Parallel()

	spec := parseSpec(t, `name: t
database: d
collections:
  - name: c
load:
  - collection: c
    documents: 10
    document:
      mixedArray: [1, "a"]
      sub: {v: {^choice: {values: [1, "one"]}}}
operations:
  - name: get
    op: findOne
    collection: c
run:
  duration: 1s
`)

	sc, err := DeriveSchema(spec, "c", false)
	if err != nil {
		t.Fatalf("a driver stack's schema: %v", err)
	}

	if got := sc.Fields["sub"].Fields["v"].Type; got != "mixed" {
		t.Errorf("without strict, the varying field is %q, want mixed", got)
	}

	_, err = DeriveSchema(spec, "c", true)
	if err == nil {
		t.Fatal("no error for a field that is a long and a string")
	}

	for _, want := range []string{`collection "c"`, `field "sub.v"`, "long", "string", "load[0].document"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
