package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/pglaunch"
	"github.com/mongobench/mongobench/internal/targets/pglaunch/pglaunchtest"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// liveWorkload declares the operations explained against live servers, so
// that the commands are exactly those op.Operation.ExplainCommand builds.
const liveWorkload = `
name: explain-live
database: bench
seed: 7
collections:
  - name: errors
    indexes:
      - keys: {code: 1}
operations:
  - name: get_by_id
    op: findOne
    collection: errors
    filter: {_id: {^format: {pattern: "err-%04d", args: [{^int: {min: 1, max: 3000}}]}}}
  - name: find_by_code
    op: find
    collection: errors
    filter: {code: {^int: {min: 0, max: 99}}}
  - name: find_by_message
    op: find
    collection: errors
    filter: {message: m5}
    limit: 20
  - name: count_code
    op: countDocuments
    collection: errors
    filter: {code: 5}
  - name: bump
    op: updateOne
    collection: errors
    filter: {_id: err-0005}
    update: {$inc: {count: 1}}
  - name: purge
    op: deleteMany
    collection: errors
    filter: {code: 7}
  - name: add
    op: insertOne
    collection: errors
    document: {code: 1}
`

// liveDocs is how many documents the errors collection holds.
const liveDocs = 3000

// liveCase is what one explained operation must show on a FerretDB backend.
type liveCase struct {
	op         string
	filterPush bool // FerretDB pushed the filter down to the backend
	write      bool // FerretDB's write caveat is expected
}

// startLive starts FerretDB (on SQLite, or on PostgreSQL when pgURL is set),
// loads the errors collection with an index on code and returns the
// database with the workload's compiled operations.
func startLive(t *testing.T, pgURL string) (*mongo.Database, []*op.Operation, *datagen.Env) {
	t.Helper()

	e, err := targets.StartEmbedded(t.Context(), targets.EmbeddedOptions{TempDir: t.TempDir(), PostgreSQLURL: pgURL})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close FerretDB: %v", err)
		}
	})

	client, err := targets.Connect(t.Context(), e.URI(), targets.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()

		_ = client.Disconnect(ctx)
	})

	spec, errs := workload.Parse("explain-live.yaml", []byte(liveWorkload))
	if len(errs) > 0 {
		t.Fatalf("workload: %v", errs)
	}

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		t.Fatalf("vars: %v", errs)
	}

	ops, errs := op.Compile(spec, env)
	if len(errs) > 0 {
		t.Fatalf("operations: %v", errs)
	}

	db := client.Database(spec.Database)

	docs := make([]any, 0, liveDocs)
	for i := 1; i <= liveDocs; i++ {
		docs = append(docs, bson.D{
			{Key: "_id", Value: fmt.Sprintf("err-%04d", i)},
			{Key: "code", Value: int32(i % 100)},
			{Key: "message", Value: fmt.Sprintf("m%d", i%500)},
		})
	}

	if _, err := db.Collection("errors").InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}

	if _, err := db.Collection("errors").Indexes().CreateOne(t.Context(), mongo.IndexModel{Keys: bson.D{{Key: "code", Value: 1}}}); err != nil {
		t.Fatal(err)
	}

	return db, ops, env
}

// explainLive explains each case's operation through Run and checks the
// summary against the case and against the plan text the server sent
// (scanned says whether that text shows a whole-table read).
func explainLive(t *testing.T, db *mongo.Database, ops []*op.Operation, env *datagen.Env,
	format string, cases []liveCase, scanned func(raw string) bool,
) {
	t.Helper()

	scope := env.NewScope(0)

	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			i := slices.IndexFunc(ops, func(o *op.Operation) bool { return o.Name() == c.op })
			if i < 0 {
				t.Fatalf("no operation %s", c.op)
			}

			cmd, ok := ops[i].ExplainCommand(scope)
			if !ok {
				t.Fatalf("%s has no explain command", c.op)
			}

			e := Run(t.Context(), db, c.op, "errors", cmd)
			t.Logf("%s: stages %q, pushdown %v, warnings %q", c.op, e.Stages, e.Pushdown, e.Warnings)

			if e.Error != "" || e.Format != format {
				t.Fatalf("Run = format %q, error %q; want %q", e.Format, e.Error, format)
			}

			if e.Operation != c.op || e.Collection != "errors" || !strings.HasPrefix(e.Command, `{"`+commandName(cmd)+`":"errors"`) {
				t.Errorf("labels: operation %q, collection %q, command %.80s", e.Operation, e.Collection, e.Command)
			}

			if want := scanned(e.Raw); e.CollectionScan != want {
				t.Errorf("CollectionScan = %v, but the server's plan says %v: %s", e.CollectionScan, want, e.Raw)
			}

			if len(e.Stages) == 0 {
				t.Error("no stages")
			}

			if got := e.Pushdown["filter"]; got != c.filterPush {
				t.Errorf("filter pushdown = %v, want %v (%v)", got, c.filterPush, e.Pushdown)
			}

			// FerretDB does not execute the explained command.
			if e.DocsExamined != -1 || e.DocsReturned != -1 || e.KeysExamined != -1 || e.ExecutionMS != -1 {
				t.Errorf("counters = %d/%d/%d/%v, want all unknown", e.KeysExamined, e.DocsExamined, e.DocsReturned, e.ExecutionMS)
			}

			hasCaveat := slices.ContainsFunc(e.Warnings, func(w string) bool { return strings.HasPrefix(w, "FerretDB explains") })
			if hasCaveat != c.write {
				t.Errorf("write caveat = %v, want %v: %q", hasCaveat, c.write, e.Warnings)
			}

			if e.CollectionScan && !slices.Contains(e.Warnings, "collection scan on errors") {
				t.Errorf("no collection scan warning: %q", e.Warnings)
			}
		})
	}

	// Explaining writes must not have written anything.
	n, err := db.Collection("errors").CountDocuments(t.Context(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}

	if n != liveDocs {
		t.Errorf("the collection has %d documents after explaining writes, want %d", n, liveDocs)
	}

	var doc struct {
		Count int32 `bson:"count"`
	}
	if err := db.Collection("errors").FindOne(t.Context(), bson.D{{Key: "_id", Value: "err-0005"}}).Decode(&doc); err != nil || doc.Count != 0 {
		t.Errorf("the explained update was applied (count %d, error %v)", doc.Count, err)
	}

	t.Run("insert has no plan", func(t *testing.T) {
		i := slices.IndexFunc(ops, func(o *op.Operation) bool { return o.Name() == "add" })
		if _, ok := ops[i].ExplainCommand(scope); ok {
			t.Error("insertOne has an explain command")
		}
	})

	t.Run("missing collection", func(t *testing.T) {
		e := Run(t.Context(), db, "ghost", "ghost", bson.D{{Key: "find", Value: "ghost"}, {Key: "filter", Value: bson.D{}}})
		if e.Format != FormatUnknown || e.Error != "" || len(e.Warnings) == 0 || !strings.Contains(e.Warnings[0], "no plan") {
			t.Errorf("Run = %+v, want an unknown format with a no-plan warning", summarize(e))
		}
	})
}

func TestRunFerretDBSQLite(t *testing.T) {
	db, ops, env := startLive(t, "")

	// FerretDB v1.24 on SQLite pushes down only _id equality on strings
	// and ObjectIDs, and SQLite still scans: its index is on another
	// expression than the one FerretDB's SQL compares.
	cases := []liveCase{
		{op: "get_by_id", filterPush: true},
		{op: "find_by_code"},
		{op: "find_by_message"},
		{op: "count_code"},
		{op: "bump", write: true},
		{op: "purge", write: true},
	}

	scanned := func(raw string) bool {
		return strings.Contains(raw, "detail=SCAN ") && !strings.Contains(raw, " USING ")
	}

	explainLive(t, db, ops, env, FormatFerretDBSQLite, cases, scanned)
}

func TestRunFerretDBPostgreSQL(t *testing.T) {
	pg := pglaunchtest.Start(t, pglaunch.Options{Settings: map[string]string{"fsync": "off", "synchronous_commit": "off"}})

	db, ops, env := startLive(t, pg.URL(pglaunch.DefaultDatabase))

	// FerretDB v1.24 on PostgreSQL pushes down top-level equality filters
	// as jsonb containment (@>), which its expression indexes cannot
	// serve, so PostgreSQL scans.
	cases := []liveCase{
		{op: "get_by_id", filterPush: true},
		{op: "find_by_code", filterPush: true},
		{op: "find_by_message", filterPush: true},
		{op: "count_code", filterPush: true},
		{op: "bump", write: true},
		{op: "purge", write: true},
	}

	scanned := func(raw string) bool {
		return strings.Contains(raw, `"Node Type":"Seq Scan"`)
	}

	explainLive(t, db, ops, env, FormatFerretDBPostgreSQL, cases, scanned)

	t.Run("index names", func(t *testing.T) {
		// FerretDB's PostgreSQL index names map back to the MongoDB ones.
		out, err := pg.Psql(t.Context(), pglaunch.DefaultDatabase,
			"SELECT indexname FROM pg_indexes WHERE schemaname = 'bench' AND indexname NOT LIKE '\\_ferretdb\\_%' ORDER BY 1")
		if err != nil {
			t.Fatal(err)
		}

		var got []string

		for sqlName := range strings.SplitSeq(out, "\n") {
			got = append(got, matchPGIndex(sqlName, []string{"_id_", "code_1"}))
			t.Logf("%s -> %s", sqlName, got[len(got)-1])
		}

		slices.Sort(got)

		if !slices.Equal(got, []string{"_id_", "code_1"}) {
			t.Errorf("PostgreSQL indexes %q map to %q, want _id_ and code_1", out, got)
		}
	})

	t.Run("index scan", func(t *testing.T) {
		// A capped collection is read in insertion order: PostgreSQL uses
		// the primary key of FerretDB's record id, not a MongoDB index.
		if err := db.CreateCollection(t.Context(), "capped", options.CreateCollection().SetCapped(true).SetSizeInBytes(1<<20)); err != nil {
			t.Fatal(err)
		}

		if _, err := db.Collection("capped").InsertMany(t.Context(), []any{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 2}}}); err != nil {
			t.Fatal(err)
		}

		e := Run(t.Context(), db, "tail", "capped", bson.D{{Key: "find", Value: "capped"}, {Key: "filter", Value: bson.D{}}, {Key: "limit", Value: int64(2)}})

		if e.Format != FormatFerretDBPostgreSQL || e.CollectionScan || !slices.Contains(e.Stages, "Index Scan") ||
			!strings.HasSuffix(e.Index, "_pkey") || !e.Pushdown["limit"] {
			t.Errorf("Run = %+v", summarize(e))
		}
	})
}

func TestRunRejected(t *testing.T) {
	// wiretest answers explain with CommandNotFound, as servers without
	// explain do: Run tries both verbosities and reports, never fails.
	srv, err := wiretest.Start(wiretest.Config{})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	client, err := targets.Connect(t.Context(), srv.URI(), targets.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })

	cmd := bson.D{{Key: "find", Value: "errors"}, {Key: "filter", Value: bson.D{{Key: "code", Value: 5}}}}

	e := Run(t.Context(), client.Database("bench"), "find_by_code", "errors", cmd)

	want := result.Explain{
		Operation: "find_by_code", Collection: "errors", Command: `{"find":"errors","filter":{"code":5}}`,
		Format: FormatUnknown, KeysExamined: -1, DocsExamined: -1, DocsReturned: -1, ExecutionMS: -1,
	}

	got := e
	got.Error = ""

	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Run =\n%+v\nwant\n%+v", got, want)
	}

	if !strings.Contains(e.Error, "CommandNotFound") || !strings.Contains(e.Error, "with verbosity queryPlanner") {
		t.Errorf("Error = %q, want both attempts' CommandNotFound", e.Error)
	}

	if n := srv.Stats().Requests["explain"]; n != 2 {
		t.Errorf("the server got %d explain requests, want 2 (executionStats, then queryPlanner)", n)
	}

	t.Run("canceled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()

		before := srv.Stats().Requests["explain"]

		e := Run(ctx, client.Database("bench"), "find_by_code", "errors", cmd)
		if !strings.Contains(e.Error, "context canceled") || e.Format != FormatUnknown {
			t.Errorf("Run = %+v", e)
		}

		if n := srv.Stats().Requests["explain"] - before; n != 0 {
			t.Errorf("%d explain requests after cancellation", n)
		}
	})
}
