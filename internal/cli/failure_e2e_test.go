//go:build e2e

package cli

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
)

// TestRunAllowExistingRepeatable runs twice in a user's database with
// --allow-existing-db against the embedded FerretDB: both runs succeed, the
// user's collection and documents are untouched, and nothing of mongobench's
// remains afterwards. A leftover of a run that could not clean up (here
// --keep-db) is removed by the next run; a user's collection named like a
// workload collection is refused, by name, and left alone.
func TestRunAllowExistingRepeatable(t *testing.T) {
	const db = "mongobench_cli_small" // testdata/small.yaml's database

	e := startServer(t)
	client := connectClient(t, e.URI())
	users := client.Database(db).Collection("users")
	userDocs := []any{
		bson.D{{Key: "_id", Value: "alice"}, {Key: "role", Value: "admin"}},
		bson.D{{Key: "_id", Value: "bob"}, {Key: "role", Value: "dev"}},
	}

	if _, err := users.InsertMany(t.Context(), userDocs); err != nil {
		t.Fatalf("inserting the user's documents: %v", err)
	}

	if _, err := users.Indexes().CreateOne(t.Context(), mongo.IndexModel{Keys: bson.D{{Key: "role", Value: 1}}}); err != nil {
		t.Fatalf("indexing the user's collection: %v", err)
	}

	// What the user's database holds, compared after every run.
	snapshot := func(when string) string {
		t.Helper()

		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()

		names, err := client.Database(db).ListCollectionNames(ctx, bson.D{})
		if err != nil {
			t.Fatalf("%s: listing collections: %v", when, err)
		}

		slices.Sort(names)

		cur, err := users.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			t.Fatalf("%s: reading the user's documents: %v", when, err)
		}

		var docs []bson.D
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatalf("%s: reading the user's documents: %v", when, err)
		}

		specs, err := users.Indexes().ListSpecifications(ctx)
		if err != nil {
			t.Fatalf("%s: listing the user's indexes: %v", when, err)
		}

		idx := make([]string, 0, len(specs))
		for _, s := range specs {
			idx = append(idx, s.Name)
		}

		slices.Sort(idx)

		return fmt.Sprintf("collections %q; users %v; indexes %q", names, docs, idx)
	}

	want := snapshot("before the runs")
	if !strings.Contains(want, `collections ["users"]`) {
		t.Fatalf("unexpected starting state: %s", want)
	}

	run := func(name string, extra ...string) {
		t.Helper()

		args := append([]string{
			"run", "testdata/small.yaml", "--uri", e.URI(), "--allow-existing-db", "--no-explain",
			"--out", outPath(t),
		}, extra...)

		code, stdout, stderr := runMain(t, args...)
		if code != ExitOK {
			t.Fatalf("%s: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", name, code, ExitOK, stdout, stderr)
		}
	}

	for _, name := range []string{"first run", "second run"} {
		run(name)

		if got := snapshot("after the " + name); got != want {
			t.Errorf("after the %s:\n got %s\nwant %s", name, got, want)
		}
	}

	// A run that leaves its collections behind, then one that cleans up.
	run("run with --keep-db", "--keep-db")

	if got := snapshot("after --keep-db"); !strings.Contains(got, `"errors"`) {
		t.Errorf("--keep-db did not keep the workload's collection: %s", got)
	}

	run("run after --keep-db")

	if got := snapshot("after the run that followed --keep-db"); got != want {
		t.Errorf("after the run that followed --keep-db:\n got %s\nwant %s", got, want)
	}

	// A collection of the user's with a workload collection's name.
	errs := client.Database(db).Collection("errors")
	if _, err := errs.InsertOne(t.Context(), bson.D{{Key: "_id", Value: "mine"}}); err != nil {
		t.Fatal(err)
	}

	code, _, stderr := runMain(t, "run", "testdata/small.yaml", "--uri", e.URI(), "--allow-existing-db", "--out", outPath(t))
	if code != ExitBadInput || !strings.Contains(stderr, `collection "errors" already exists in database "mongobench_cli_small"`) {
		t.Errorf("exit code %d, want %d with a message naming the collection\nstderr:\n%s", code, ExitBadInput, stderr)
	}

	if n, err := errs.CountDocuments(t.Context(), bson.D{}); err != nil || n != 1 {
		t.Errorf("the user's errors collection holds %d documents (err %v), want its 1", n, err)
	}
}
