package cli

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/targets"
)

// smallDB is testdata/small.yaml's database; its one collection is errors.
const smallDB = "mongobench_cli_small"

// countDocs counts the documents of db.coll, failing the test on error.
func countDocs(t *testing.T, client *mongo.Client, db, coll string) int64 {
	t.Helper()

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	n, err := client.Database(db).Collection(coll).CountDocuments(ctx, bson.D{})
	if err != nil {
		t.Fatalf("counting %s.%s: %v", db, coll, err)
	}

	return n
}

// collectionsOf lists db's collections, sorted, failing the test on error.
func collectionsOf(t *testing.T, client *mongo.Client, db string) []string {
	t.Helper()

	names, err := client.Database(db).ListCollectionNames(t.Context(), bson.D{})
	if err != nil {
		t.Fatalf("listing the collections of %s: %v", db, err)
	}

	slices.Sort(names)

	return names
}

// oneLineNaming fails the test unless stderr has a line naming db that
// contains want.
func oneLineNaming(t *testing.T, stderr, db, want string) {
	t.Helper()

	for line := range strings.SplitSeq(stderr, "\n") {
		if strings.Contains(line, `"`+db+`"`) && strings.Contains(line, want) {
			return
		}
	}

	t.Errorf("no line of stderr names database %q and says %q:\n%s", db, want, stderr)
}

// TestRunRefusesForgedOwnerRecord plants, in a user's database, the owner
// document anyone can write (what mongobench itself wrote before it signed
// its records): the run must refuse with exit 2 and a line naming the
// database, and the user's data must survive, where mongobench used to take
// the database for its own and drop the user's collection.
func TestRunRefusesForgedOwnerRecord(t *testing.T) {
	e := startServer(t)
	client := connectClient(t, e.URI())
	d := client.Database(smallDB)

	if _, err := d.Collection("users").InsertOne(t.Context(), bson.D{{Key: "_id", Value: "alice"}}); err != nil {
		t.Fatal(err)
	}

	forged := bson.D{
		{Key: "_id", Value: "owner"},
		{Key: "tool", Value: "mongobench"},
		{Key: "format", Value: 1},
		{Key: "created_at", Value: time.Now()},
	}
	if _, err := d.Collection(targets.MarkerCollection).InsertOne(t.Context(), forged); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runMain(t, "run", "testdata/small.yaml", "--uri", e.URI(), "--no-explain", "--out", outPath(t))
	if code != ExitBadInput {
		t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitBadInput, stdout, stderr)
	}

	oneLineNaming(t, stderr, smallDB, "does not verify")

	if got := collectionsOf(t, client, smallDB); !slices.Equal(got, []string{targets.MarkerCollection, "users"}) {
		t.Errorf("collections after the refused run: %q, want the user's untouched", got)
	}

	if n := countDocs(t, client, smallDB, "users"); n != 1 {
		t.Errorf("users holds %d documents, want 1", n)
	}
}

// TestShardSetupNoneRefusesForeignDatabase runs one shard that sets nothing
// up against a user's database holding the workload's collection: it must
// refuse (exit 2) before writing, where it used to insert into the user's
// collection; against a database an earlier run kept, it runs.
func TestShardSetupNoneRefusesForeignDatabase(t *testing.T) {
	e := startServer(t)
	client := connectClient(t, e.URI())
	errs := client.Database(smallDB).Collection("errors")

	if _, err := errs.InsertOne(t.Context(), bson.D{{Key: "_id", Value: "the user's"}}); err != nil {
		t.Fatal(err)
	}

	// Each run ends after a number of operations, with a minute to do
	// them, so that a slow machine still measures some (a run that
	// measures none fails).
	shard := []string{
		"run", "testdata/small.yaml", "--uri", e.URI(), "--no-explain", "--server-stats-interval", "0",
		"--shard", "0/1", "--shard-setup", "none", "--duration", "1m", "--max-operations", "40",
	}

	code, stdout, stderr := runMain(t, append(shard, "--out", outPath(t))...)
	if code != ExitBadInput {
		t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitBadInput, stdout, stderr)
	}

	oneLineNaming(t, stderr, smallDB, "not verifiably mongobench's")

	if n := countDocs(t, client, smallDB, "errors"); n != 1 {
		t.Errorf("the user's collection holds %d documents after the refused shard, want 1", n)
	}

	// A database a mongobench run set up and kept is written to.
	if err := client.Database(smallDB).Drop(t.Context()); err != nil {
		t.Fatal(err)
	}

	if code, _, stderr := runMain(t, "run", "testdata/small.yaml", "--uri", e.URI(), "--no-explain", "--keep-db",
		"--duration", "1m", "--max-operations", "40", "--out", outPath(t)); code != ExitOK {
		t.Fatalf("setting up with --keep-db: exit code %d\n%s", code, stderr)
	}

	before := countDocs(t, client, smallDB, "errors")

	if code, _, stderr := runMain(t, append(shard, "--out", outPath(t))...); code != ExitOK {
		t.Fatalf("shard on the kept database: exit code %d\n%s", code, stderr)
	}

	if after := countDocs(t, client, smallDB, "errors"); after <= before {
		t.Errorf("the shard inserted nothing into the kept database (%d documents, %d before)", after, before)
	}
}

// TestKeptDatabaseForeignCollection keeps the database of a run, adds a
// collection mongobench did not create, and runs again: the run refuses with
// exit 2 and a line naming database and collection, where it used to drop
// the collection without a word; with --allow-existing-db it runs beside it,
// leaves it, and says that it did not drop the database.
func TestKeptDatabaseForeignCollection(t *testing.T) {
	e := startServer(t)
	client := connectClient(t, e.URI())

	run := []string{"run", "testdata/small.yaml", "--uri", e.URI(), "--no-explain", "--server-stats-interval", "0"}

	if code, _, stderr := runMain(t, append(run, "--keep-db", "--out", outPath(t))...); code != ExitOK {
		t.Fatalf("run with --keep-db: exit code %d\n%s", code, stderr)
	}

	if _, err := client.Database(smallDB).Collection("notes").InsertOne(t.Context(), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runMain(t, append(run, "--out", outPath(t))...)
	if code != ExitBadInput {
		t.Errorf("run beside a foreign collection: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitBadInput, stdout, stderr)
	}

	oneLineNaming(t, stderr, smallDB, `collection "notes" that mongobench did not create`)

	if n := countDocs(t, client, smallDB, "notes"); n != 1 {
		t.Fatalf("notes holds %d documents after the refused run, want 1", n)
	}

	code, stdout, stderr = runMain(t, append(run, "--allow-existing-db", "--out", outPath(t))...)
	if code != ExitOK {
		t.Fatalf("run with --allow-existing-db: exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	oneLineNaming(t, stderr, smallDB, `not dropping "`+smallDB+`"`)

	if n := countDocs(t, client, smallDB, "notes"); n != 1 {
		t.Errorf("notes holds %d documents after the allowed run, want 1", n)
	}

	if got := collectionsOf(t, client, smallDB); slices.Contains(got, "errors") {
		t.Errorf("the run left its own collection: %q", got)
	}
}
