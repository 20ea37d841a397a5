package op

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestRegistryMatchesOpkind checks that the registry of bindings and package
// opkind's table (which workload validation and the docs follow) list the
// same kinds in the same order, so that no kind validates without a
// binding or has a binding nobody can name.
func TestRegistryMatchesOpkind(t *testing.T) {
	t.Parallel()

	var reg []string
	for _, k := range kinds() {
		reg = append(reg, k.name)

		if k.bind == nil {
			t.Errorf("kind %s has no bind function", k.name)
		}
	}

	if table := opkind.Names(); !slices.Equal(reg, table) {
		t.Errorf("registry kinds %v, opkind kinds %v", reg, table)
	}
}

// bindCase is one kind's binding test: an operation of that kind, the
// command the driver must send for it and what one call must report.
type bindCase struct {
	yaml string // the operation's fields after "op:"

	command string         // first command sent after the handshake
	fields  map[string]any // fields of that command, as Go values of its extended JSON
	docs    int64          // documents counted by one call
	explain string         // command explain wraps; "" for kinds with no plan
}

// bindCases holds a case for every kind of the registry; the test fails
// for a kind without one, so a new kind comes with its test.
var bindCases = map[string]bindCase{
	opkind.InsertOne: {
		yaml: "collection: c\n    document: {a: 1}", command: "insert",
		fields: map[string]any{"insert": "c"}, docs: 1,
	},
	opkind.InsertMany: {
		yaml: "collection: c\n    document: {a: 1}\n    batch_size: 4\n    ordered: false", command: "insert",
		fields: map[string]any{"insert": "c", "ordered": false}, docs: 4,
	},
	opkind.FindOne: {
		yaml: "collection: c\n    filter: {a: 1}\n    skip: 2", command: "find",
		fields: map[string]any{"find": "c", "skip": int64(2), "limit": int64(1)}, docs: 1, explain: "find",
	},
	opkind.Find: {
		yaml: "collection: c\n    filter: {a: 1}\n    limit: 2", command: "find",
		fields: map[string]any{"find": "c", "limit": int64(2)}, docs: 2, explain: "find",
	},
	opkind.CountDocuments: {
		yaml: "collection: c\n    filter: {a: 1}", command: "aggregate",
		fields: map[string]any{"aggregate": "c"}, docs: 0, explain: "aggregate",
	},
	opkind.Aggregate: {
		yaml: "collection: c\n    pipeline: [{$match: {a: 1}}]", command: "aggregate",
		fields: map[string]any{"aggregate": "c"}, docs: 3, explain: "aggregate",
	},
	opkind.UpdateOne: {
		yaml: "collection: c\n    filter: {a: 1}\n    update: {$inc: {n: 1}}", command: "update",
		fields: map[string]any{"update": "c"}, docs: 1, explain: "update",
	},
	opkind.UpdateMany: {
		yaml: "collection: c\n    filter: {a: 1}\n    update: {$inc: {n: 1}}", command: "update",
		fields: map[string]any{"update": "c"}, docs: 1, explain: "update",
	},
	opkind.ReplaceOne: {
		yaml: "collection: c\n    filter: {a: 1}\n    replacement: {a: 2}", command: "update",
		fields: map[string]any{"update": "c"}, docs: 1, explain: "update",
	},
	opkind.DeleteOne: {
		yaml: "collection: c\n    filter: {a: 1}", command: "delete",
		fields: map[string]any{"delete": "c"}, docs: 1, explain: "delete",
	},
	opkind.DeleteMany: {
		yaml: "collection: c\n    filter: {a: 1}", command: "delete",
		fields: map[string]any{"delete": "c"}, docs: 1, explain: "delete",
	},
	opkind.Drop: {
		yaml: "collection: c", command: "drop", fields: map[string]any{"drop": "c"},
	},
	opkind.CreateIndexes: {
		yaml: "collection: c", command: "createIndexes", fields: map[string]any{"createIndexes": "c"},
	},
	opkind.RunCommand: {
		yaml: "command: {ping: 1}", command: "ping", fields: map[string]any{"ping": int64(1)},
	},
}

// TestKindBindings runs one call of every kind against the wire-protocol
// test server and checks the command the driver sent (seen through the
// driver's command monitor), the documents the call counted, and which
// command explain would wrap.
func TestKindBindings(t *testing.T) {
	t.Parallel()

	srv, err := wiretest.Start(wiretest.Config{FindDocs: 3})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	var (
		mu   sync.Mutex
		sent []bson.Raw
	)

	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName == "hello" || e.CommandName == "isMaster" || e.CommandName == "endSessions" {
			return
		}

		mu.Lock()
		sent = append(sent, slices.Clone(e.Command))
		mu.Unlock()
	}}

	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()).SetMonitor(monitor).SetTimeout(30 * time.Second))
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })

	db := client.Database("d")

	for _, k := range kinds() {
		tc, ok := bindCases[k.name]
		if !ok {
			t.Errorf("kind %s has no binding test case", k.name)
			continue
		}

		t.Run(k.name, func(t *testing.T) {
			o, env := compileOp(t, k.name, tc.yaml)

			mu.Lock()
			sent = nil
			mu.Unlock()

			docs, err := o.Bind(db)(t.Context(), env.NewScope(0))
			if err != nil {
				t.Fatalf("call: %v", err)
			}

			if docs != tc.docs {
				t.Errorf("docs = %d, want %d", docs, tc.docs)
			}

			mu.Lock()
			got := slices.Clone(sent)
			mu.Unlock()

			if len(got) == 0 {
				t.Fatal("no command was sent")
			}

			cmd := got[0]
			if name := cmd.Index(0).Key(); name != tc.command {
				t.Fatalf("command %q, want %q (%s)", name, tc.command, cmd)
			}

			var m map[string]any
			if err := bson.Unmarshal(cmd, &m); err != nil {
				t.Fatal(err)
			}

			for key, want := range tc.fields {
				if m[key] != want {
					t.Errorf("command field %s = %#v (%T), want %#v (%T)", key, m[key], m[key], want, want)
				}
			}

			ex, hasPlan := o.ExplainCommand(env.NewScope(1))
			switch {
			case tc.explain == "" && hasPlan:
				t.Errorf("explain command %v for a kind without a plan", ex)
			case tc.explain != "" && !hasPlan:
				t.Errorf("no explain command, want %s", tc.explain)
			case tc.explain != "" && ex[0].Key != tc.explain:
				t.Errorf("explain command %s, want %s", ex[0].Key, tc.explain)
			}
		})
	}
}

// compileOp compiles a workload holding one operation of kind with fields.
func compileOp(t *testing.T, kind, fields string) (*Operation, *datagen.Env) {
	t.Helper()

	src := "name: t\ndatabase: d\ncollections:\n  - name: c\n    indexes:\n      - keys: {a: 1}\n" +
		"run:\n  duration: 1s\noperations:\n  - name: o\n    op: " + kind + "\n    " + fields + "\n"

	spec, errs := workload.Parse("w.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("parse:\n%s\n%v", src, errs)
	}

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		t.Fatalf("env: %v", errs)
	}

	ops, errs := Compile(spec, env)
	if len(errs) > 0 {
		t.Fatalf("compile: %v", errs)
	}

	if !strings.EqualFold(ops[0].Spec.Op, kind) {
		t.Fatalf("compiled %s, want %s", ops[0].Spec.Op, kind)
	}

	return ops[0], env
}
