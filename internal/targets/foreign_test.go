package targets

import (
	"errors"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestForeignCollections walks the life of mongobench's collections in a
// user's database: claimed and recorded, left behind by a run that could not
// clean up, removed by the next claim, refused when the user owns one of the
// name, and in the end nothing of mongobench's remains, while the user's
// collection, and a user's document in a collection named like the marker,
// are untouched.
func TestForeignCollections(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{})
	client := connect(t, e)
	ctx := t.Context()

	const db = "shop"

	d := client.Database(db)
	if _, err := d.Collection("orders").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}

	own, err := Claim(ctx, client, db, true, testKey(t))
	if err != nil || own.Owned {
		t.Fatalf("Claim = %+v, %v; want a foreign database", own, err)
	}

	if err := ClaimCollections(ctx, client, &own, []string{"items"}); err != nil {
		t.Fatal(err)
	}

	// A run creates its collection, then dies without cleaning up.
	if _, err := d.Collection("items").InsertOne(ctx, bson.D{{Key: "n", Value: 1}}); err != nil {
		t.Fatal(err)
	}

	// The next run's claim removes the leftover, instead of failing on it.
	again := Ownership{DB: db, key: testKey(t)}
	if err := ClaimCollections(ctx, client, &again, []string{"items"}); err != nil {
		t.Fatalf("claim after a run that left its collection: %v", err)
	}

	if got := collections(t, client, db); slices.Contains(got, "items") {
		t.Errorf("the leftover collection is still there: %q", got)
	}

	if err := RemoveCollections(ctx, client, again); err != nil {
		t.Fatal(err)
	}

	if got := collections(t, client, db); !slices.Equal(got, []string{"orders"}) {
		t.Errorf("after clean-up: collections %q, want only the user's", got)
	}

	// A user's collection with a workload collection's name is refused.
	var cee *CollectionExistsError

	third := Ownership{DB: db, key: testKey(t)}
	if err := ClaimCollections(ctx, client, &third, []string{"items", "orders"}); !errors.As(err, &cee) || cee.Collection != "orders" {
		t.Errorf("claiming the user's collection: %v, want a CollectionExistsError naming orders", err)
	}

	// A user's own document in a collection named like the marker keeps
	// that collection alive after the clean-up.
	if _, err := d.Collection(MarkerCollection).InsertOne(ctx, bson.D{{Key: "_id", Value: "users-note"}}); err != nil {
		t.Fatal(err)
	}

	fourth := Ownership{DB: db, key: testKey(t)}
	if err := ClaimCollections(ctx, client, &fourth, []string{"items"}); err != nil {
		t.Fatal(err)
	}

	if err := RemoveCollections(ctx, client, fourth); err != nil {
		t.Fatal(err)
	}

	if got := collections(t, client, db); !slices.Equal(got, []string{MarkerCollection, "orders"}) {
		t.Errorf("after clean-up: collections %q, want the user's two", got)
	}

	if n, err := d.Collection(MarkerCollection).CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("%s holds %d documents (err %v), want the user's 1", MarkerCollection, n, err)
	}

	if n, err := d.Collection("orders").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("orders holds %d documents (err %v), want 1", n, err)
	}

	// An owned database is reset, not claimed collection by collection.
	if err := ClaimCollections(ctx, client, &Ownership{DB: db, Owned: true, key: testKey(t)}, []string{"items"}); err == nil {
		t.Error("ClaimCollections accepted an owned database")
	}
}
