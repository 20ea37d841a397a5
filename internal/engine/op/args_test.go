package op

import (
	"encoding/json"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// argsWorkload has one operation of each shape an external stack is sent.
const argsWorkload = `name: t
database: d
collections:
  - name: c
run:
  duration: 1s
operations:
  - name: find
    op: find
    collection: c
    filter: {n: {^int: {min: 1, max: 1000000}}}
    sort: {n: -1}
    limit: {^int: {min: 1, max: 50}}
    batch_size: 7
  - name: ins
    op: insertMany
    collection: c
    batch_size: 3
    ordered: false
    document: {at: {^now: {}}, x: 1.5, id: {^objectId: {}}}
  - name: up
    op: updateOne
    collection: c
    filter: {n: 1}
    update: {$inc: {n: 1}}
    upsert: true
  - name: drop
    op: drop
    collection: c
`

func compileArgsWorkload(t *testing.T) (map[string]*Operation, *datagen.Env) {
	t.Helper()

	spec, errs := workload.Parse("w.yaml", []byte(argsWorkload))
	if len(errs) > 0 {
		t.Fatalf("parse: %v", errs)
	}

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		t.Fatalf("env: %v", errs)
	}

	ops, errs := Compile(spec, env)
	if len(errs) > 0 {
		t.Fatalf("compile: %v", errs)
	}

	byName := map[string]*Operation{}
	for _, o := range ops {
		byName[o.Name()] = o
	}

	return byName, env
}

// TestArgsSameScopeSameValues checks that the arguments come from the
// worker's seeded scope: the same worker of the same workload gets the
// same arguments, another worker other ones.
func TestArgsSameScopeSameValues(t *testing.T) {
	t.Parallel()

	ops, env := compileArgsWorkload(t)
	find := ops["find"]

	gen := func(worker int) []string {
		s := env.NewScope(worker)

		var out []string

		for range 5 {
			s.NextIteration()

			a, err := find.Args(s)
			if err != nil {
				t.Fatal(err)
			}

			b, err := a.AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}

			out = append(out, string(b))
		}

		return out
	}

	w0, again, w1 := gen(0), gen(0), gen(1)
	if strings.Join(w0, "\n") != strings.Join(again, "\n") {
		t.Errorf("worker 0 twice:\n%v\n%v", w0, again)
	}

	if strings.Join(w0, "\n") == strings.Join(w1, "\n") {
		t.Errorf("workers 0 and 1 got the same arguments: %v", w0)
	}
}

// TestArgsJSON checks the encoding the protocol specifies: canonical
// Extended JSON for values, plain numbers for counts, booleans for flags.
func TestArgsJSON(t *testing.T) {
	t.Parallel()

	ops, env := compileArgsWorkload(t)
	s := env.NewScope(0)

	var got struct {
		Filter    map[string]map[string]string `json:"filter"`
		Sort      map[string]map[string]string `json:"sort"`
		Limit     *int64                       `json:"limit"`
		BatchSize *int64                       `json:"batch_size"`
		Documents []map[string]map[string]any  `json:"documents"`
		Ordered   *bool                        `json:"ordered"`
		Upsert    *bool                        `json:"upsert"`
	}

	decode := func(name string) {
		t.Helper()

		got = struct {
			Filter    map[string]map[string]string `json:"filter"`
			Sort      map[string]map[string]string `json:"sort"`
			Limit     *int64                       `json:"limit"`
			BatchSize *int64                       `json:"batch_size"`
			Documents []map[string]map[string]any  `json:"documents"`
			Ordered   *bool                        `json:"ordered"`
			Upsert    *bool                        `json:"upsert"`
		}{}

		a, err := ops[name].Args(s)
		if err != nil {
			t.Fatal(err)
		}

		b, err := a.AppendJSON([]byte("prefix:"))
		if err != nil {
			t.Fatal(err)
		}

		text, ok := strings.CutPrefix(string(b), "prefix:")
		if !ok {
			t.Fatalf("AppendJSON lost what was before: %s", b)
		}

		if err := json.Unmarshal([]byte(text), &got); err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", name, err, text)
		}

		// The values must read back with their BSON types.
		var d bson.D
		if err := bson.UnmarshalExtJSON([]byte(text), true, &d); err != nil {
			t.Fatalf("%s: not canonical Extended JSON: %v\n%s", name, err, text)
		}
	}

	decode("find")

	if _, ok := got.Filter["n"]["$numberLong"]; !ok {
		t.Errorf("find: filter.n is not an int64: %v", got.Filter)
	}

	if got.Sort["n"]["$numberLong"] != "-1" {
		t.Errorf("find: sort = %v", got.Sort)
	}

	if got.Limit == nil || *got.Limit < 1 || *got.Limit > 50 || got.BatchSize == nil || *got.BatchSize != 7 {
		t.Errorf("find: limit %v, batch_size %v", got.Limit, got.BatchSize)
	}

	decode("ins")

	if len(got.Documents) != 3 || got.Ordered == nil || *got.Ordered || got.BatchSize != nil {
		t.Fatalf("insertMany: %d documents, ordered %v, batch_size %v", len(got.Documents), got.Ordered, got.BatchSize)
	}

	for _, d := range got.Documents {
		if d["at"]["$date"] == nil || d["id"]["$oid"] == nil || d["x"]["$numberDouble"] != "1.5" {
			t.Errorf("insertMany document lost its types: %v", d)
		}
	}

	decode("up")

	if got.Upsert == nil || !*got.Upsert || got.Filter["n"]["$numberLong"] != "1" {
		t.Errorf("updateOne: upsert %v, filter %v", got.Upsert, got.Filter)
	}
}

// TestArgsRefusesAdministration checks that a kind no stack sends (drop)
// is an error, not an empty call.
func TestArgsRefusesAdministration(t *testing.T) {
	t.Parallel()

	ops, env := compileArgsWorkload(t)

	_, err := ops["drop"].Args(env.NewScope(0))
	if err == nil || !strings.Contains(err.Error(), `"drop"`) {
		t.Fatalf("Args of a drop: %v", err)
	}
}
