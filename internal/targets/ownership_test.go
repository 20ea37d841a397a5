package targets

import (
	"errors"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// collections lists db's collections, failing the test on error.
func collections(t *testing.T, client *mongo.Client, db string) []string {
	t.Helper()

	names, err := client.Database(db).ListCollectionNames(t.Context(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}

	slices.Sort(names)

	return names
}

func TestClaimResetDropLifecycle(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{})
	client := connect(t, e)

	const db = "bench"

	before := time.Now().Add(-time.Second)

	own, err := Claim(t.Context(), client, db, false, testKey(t))
	if err != nil {
		t.Fatal(err)
	}

	if own.DB != db || !own.Owned || !own.Created || own.CreatedAt.Before(before) || own.CreatedAt.After(time.Now()) {
		t.Errorf("first Claim = %+v, want owned and created now", own)
	}

	if got := collections(t, client, db); !slices.Equal(got, []string{MarkerCollection}) {
		t.Errorf("collections after Claim = %q, want only the marker", got)
	}

	var marker bson.M
	if err := client.Database(db).Collection(MarkerCollection).FindOne(t.Context(), bson.D{}).Decode(&marker); err != nil {
		t.Fatal(err)
	}

	if marker["_id"] != "owner" || marker["tool"] != "mongobench" || marker["created_at"] == nil {
		t.Errorf("marker = %v", marker)
	}

	// A later run finds its own database again.
	again, err := Claim(t.Context(), client, db, false, testKey(t))
	if err != nil {
		t.Fatal(err)
	}

	if !again.Owned || again.Created || !again.CreatedAt.Equal(own.CreatedAt) {
		t.Errorf("second Claim = %+v, want owned, not created, created at %s", again, own.CreatedAt)
	}

	// Data from a previous run, in a collection it recorded...
	if err := Reset(t.Context(), client, db, again, []string{"items"}); err != nil {
		t.Fatal(err)
	}

	if _, err := client.Database(db).Collection("items").InsertOne(t.Context(), bson.D{{Key: "n", Value: 1}}); err != nil {
		t.Fatal(err)
	}

	// ...is gone after Reset, which keeps the database owned.
	if err := Reset(t.Context(), client, db, again, []string{"other"}); err != nil {
		t.Fatal(err)
	}

	if got := collections(t, client, db); !slices.Equal(got, []string{MarkerCollection}) {
		t.Errorf("collections after Reset = %q, want only the marker", got)
	}

	afterReset, err := Claim(t.Context(), client, db, false, testKey(t))
	if err != nil || !afterReset.Owned {
		t.Errorf("Claim after Reset = %+v, %v; want owned", afterReset, err)
	}

	if err := Drop(t.Context(), client, db, afterReset); err != nil {
		t.Fatal(err)
	}

	if got := collections(t, client, db); len(got) != 0 {
		t.Errorf("collections after Drop = %q, want none", got)
	}

	dbs, err := client.ListDatabaseNames(t.Context(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}

	if slices.Contains(dbs, db) {
		t.Errorf("databases after Drop = %q, still has %q", dbs, db)
	}
}

func TestClaimForeignDatabase(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{})
	client := connect(t, e)

	const db = "shop"

	orders := client.Database(db).Collection("orders")
	if _, err := orders.InsertOne(t.Context(), bson.D{{Key: "_id", Value: 1}, {Key: "total", Value: 42}}); err != nil {
		t.Fatal(err)
	}

	// Refused without --allow-existing-db.
	own, err := Claim(t.Context(), client, db, false, testKey(t))

	var noe *NotOwnedError
	if !errors.As(err, &noe) || noe.DB != db || noe.System {
		t.Fatalf("Claim = %+v, %v; want *NotOwnedError for %q", own, err, db)
	}

	const want = `database "shop" exists and was not created by mongobench; refusing to modify it ` +
		`(choose another database name in the workload, or pass --allow-existing-db)`
	if err.Error() != want {
		t.Errorf("message = %q, want %q", err, want)
	}

	if own.Owned {
		t.Error("refused Claim returned Owned")
	}

	// Allowed, but not owned: writing is fine, destroying is not.
	own, err = Claim(t.Context(), client, db, true, testKey(t))
	if err != nil {
		t.Fatal(err)
	}

	if own.DB != db || own.Owned || own.Created {
		t.Errorf("Claim with allowExisting = %+v, want not owned", own)
	}

	for name, f := range map[string]func() error{
		"reset": func() error { return Reset(t.Context(), client, db, own, nil) },
		"drop":  func() error { return Drop(t.Context(), client, db, own) },
	} {
		err := f()

		var noe *NotOwnedError
		if !errors.As(err, &noe) || noe.Action != name {
			t.Errorf("%s of a foreign database: got %v, want *NotOwnedError", name, err)
		}
	}

	// Even a forged ownership does not get past the marker check.
	forged := Ownership{DB: db, Owned: true, key: testKey(t)}
	if err := Drop(t.Context(), client, db, forged); !errors.As(err, &noe) {
		t.Errorf("Drop with forged ownership: got %v, want *NotOwnedError", err)
	}

	if err := Reset(t.Context(), client, db, forged, nil); !errors.As(err, &noe) {
		t.Errorf("Reset with forged ownership: got %v, want *NotOwnedError", err)
	}

	// The user's data is untouched and no marker was planted.
	if got := collections(t, client, db); !slices.Equal(got, []string{"orders"}) {
		t.Errorf("collections = %q, want only the user's", got)
	}

	n, err := orders.CountDocuments(t.Context(), bson.D{})
	if err != nil || n != 1 {
		t.Errorf("orders count = %d, %v; want 1", n, err)
	}
}

// TestDropRechecksMarker covers a database that was owned at Claim time but
// lost its marker and gained foreign data before the cleanup.
func TestDropRechecksMarker(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{})
	client := connect(t, e)

	const db = "bench"

	own, err := Claim(t.Context(), client, db, false, testKey(t))
	if err != nil {
		t.Fatal(err)
	}

	if err := client.Database(db).Collection(MarkerCollection).Drop(t.Context()); err != nil {
		t.Fatal(err)
	}

	// Emptied: nothing to lose, so Reset may proceed and re-marks it.
	if err := Reset(t.Context(), client, db, own, nil); err != nil {
		t.Fatalf("Reset of an emptied owned database: %v", err)
	}

	if got := collections(t, client, db); !slices.Equal(got, []string{MarkerCollection}) {
		t.Errorf("collections after Reset = %q, want the marker back", got)
	}

	if err := client.Database(db).Collection(MarkerCollection).Drop(t.Context()); err != nil {
		t.Fatal(err)
	}

	if _, err := client.Database(db).Collection("precious").InsertOne(t.Context(), bson.D{}); err != nil {
		t.Fatal(err)
	}

	var noe *NotOwnedError

	if err := Drop(t.Context(), client, db, own); !errors.As(err, &noe) || noe.Action != "drop" {
		t.Errorf("Drop without marker: got %v, want *NotOwnedError", err)
	}

	if err := Reset(t.Context(), client, db, own, nil); !errors.As(err, &noe) || noe.Action != "reset" {
		t.Errorf("Reset without marker: got %v, want *NotOwnedError", err)
	}

	if got := collections(t, client, db); !slices.Equal(got, []string{"precious"}) {
		t.Errorf("collections = %q, want the foreign collection intact", got)
	}
}

func TestClaimRefusesSystemDatabases(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{})
	client := connect(t, e)

	for _, db := range []string{"admin", "local", "config", "Admin"} {
		for _, allow := range []bool{false, true} {
			_, err := Claim(t.Context(), client, db, allow, testKey(t))

			var noe *NotOwnedError
			if !errors.As(err, &noe) || !noe.System {
				t.Errorf("Claim(%q, allowExisting=%v): got %v, want a system-database *NotOwnedError", db, allow, err)
			}
		}

		forged := Ownership{DB: db, Owned: true, key: testKey(t)}

		var noe *NotOwnedError
		if err := Reset(t.Context(), client, db, forged, nil); !errors.As(err, &noe) || !noe.System {
			t.Errorf("Reset(%q): got %v, want a system-database *NotOwnedError", db, err)
		}

		if err := Drop(t.Context(), client, db, forged); !errors.As(err, &noe) || !noe.System {
			t.Errorf("Drop(%q): got %v, want a system-database *NotOwnedError", db, err)
		}
	}

	if _, err := Claim(t.Context(), client, "", false, testKey(t)); err == nil {
		t.Error("Claim accepted an empty database name")
	}
}

func TestOwnershipMustMatchDatabase(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{})
	client := connect(t, e)

	own, err := Claim(t.Context(), client, "bench_a", false, testKey(t))
	if err != nil {
		t.Fatal(err)
	}

	if _, err := client.Database("bench_b").Collection("items").InsertOne(t.Context(), bson.D{}); err != nil {
		t.Fatal(err)
	}

	if err := Drop(t.Context(), client, "bench_b", own); err == nil {
		t.Error("Drop accepted the ownership of another database")
	}

	if got := collections(t, client, "bench_b"); !slices.Equal(got, []string{"items"}) {
		t.Errorf("bench_b collections = %q, want it intact", got)
	}
}
