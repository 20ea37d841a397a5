package targets

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestLoadOwnerKey creates the key on first use, private to the user, reads
// the same key back later, and refuses a file that is not a key, naming it.
func TestLoadOwnerKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conf", "mongobench", "owner.key")

	k1, err := LoadOwnerKey(path)
	if err != nil {
		t.Fatal(err)
	}

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}

	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}

	if di, err := os.Stat(filepath.Dir(path)); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("key directory: %v, %v; want mode 0700", di, err)
	}

	k2, err := LoadOwnerKey(path)
	if err != nil {
		t.Fatal(err)
	}

	if !bytes.Equal(k1.secret, k2.secret) || k2.Path != path {
		t.Error("a second load made another key instead of reading the first")
	}

	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil || len(entries) != 1 {
		t.Errorf("key directory holds %v (%v), want only owner.key", entries, err)
	}

	other, err := LoadOwnerKey(filepath.Join(t.TempDir(), "owner.key"))
	if err != nil {
		t.Fatal(err)
	}

	if bytes.Equal(other.secret, k1.secret) {
		t.Error("two new keys are equal")
	}

	bad := filepath.Join(t.TempDir(), "bad.key")
	if err := os.WriteFile(bad, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	if _, err := LoadOwnerKey(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("LoadOwnerKey of a bad file: %v, want an error naming %s", err, bad)
	}
}

func TestOwnerKeyPath(t *testing.T) {
	env := map[string]string{OwnerKeyEnv: "/shared/team.key", "XDG_CONFIG_HOME": "/conf"}

	if p, err := OwnerKeyPath(func(k string) string { return env[k] }); err != nil || p != "/shared/team.key" {
		t.Errorf("with %s: %q, %v", OwnerKeyEnv, p, err)
	}

	delete(env, OwnerKeyEnv)

	if p, err := OwnerKeyPath(func(k string) string { return env[k] }); err != nil || p != "/conf/mongobench/owner.key" {
		t.Errorf("with XDG_CONFIG_HOME: %q, %v", p, err)
	}
}

// TestForgedOwnerRecords plants owner records mongobench did not sign in a
// user's database: one written by hand (as an older, unsigned mongobench
// wrote them), one copied from a database mongobench did create, one signed
// with another key, and a genuine one whose list of collections was widened.
// None makes the database mongobench's: Claim refuses it, and Drop and
// Reset refuse it even with an ownership that says owned.
func TestForgedOwnerRecords(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{})
	client := connect(t, e)
	ctx := t.Context()
	key := testKey(t)

	otherKey, err := NewOwnerKey([]byte("another owner key, not the test."))
	if err != nil {
		t.Fatal(err)
	}

	// A database mongobench did create, whose record is copied below.
	if _, err := Claim(ctx, client, "bench_real", false, key); err != nil {
		t.Fatal(err)
	}

	var genuine bson.D
	if err := client.Database("bench_real").Collection(MarkerCollection).FindOne(ctx, bson.D{}).Decode(&genuine); err != nil {
		t.Fatal(err)
	}

	widened := func(db string) bson.D {
		rec := &ownerRecord{DB: db, CreationID: "x", CreatedAt: newOwnerRecord(db).CreatedAt, Collections: []string{"items"}}
		doc := rec.document(key)
		rec.Collections = []string{"items", "orders"}
		out := rec.document(key)

		// The genuine MAC over {items}, the list now {items, orders}.
		for i := range out {
			if out[i].Key == "mac" {
				out[i].Value = doc[i].Value
			}
		}

		return out
	}

	forgeries := map[string]func(db string) bson.D{
		"hand-written": func(string) bson.D {
			return bson.D{{Key: "_id", Value: "owner"}, {Key: "tool", Value: "mongobench"}, {Key: "format", Value: 1}}
		},
		"copied":       func(string) bson.D { return genuine },
		"other key":    func(db string) bson.D { return newOwnerRecord(db).document(otherKey) },
		"widened list": widened,
		"format 2 no mac": func(db string) bson.D {
			d := newOwnerRecord(db).document(key)
			return slices.DeleteFunc(d, func(e bson.E) bool { return e.Key == "mac" })
		},
	}

	for name, forge := range forgeries {
		t.Run(name, func(t *testing.T) {
			db := "shop_" + strings.ReplaceAll(name, " ", "_")
			d := client.Database(db)

			if _, err := d.Collection("orders").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
				t.Fatal(err)
			}

			if _, err := d.Collection(MarkerCollection).InsertOne(ctx, forge(db)); err != nil {
				t.Fatal(err)
			}

			var noe *NotOwnedError

			own, err := Claim(ctx, client, db, false, key)
			if !errors.As(err, &noe) || !noe.Unverified || own.Owned {
				t.Fatalf("Claim = %+v, %v; want an unverified *NotOwnedError", own, err)
			}

			if !strings.Contains(err.Error(), db) || strings.Contains(err.Error(), "\n") {
				t.Errorf("the refusal is not one line naming %q: %q", db, err)
			}

			forged := Ownership{DB: db, Owned: true, key: key}
			if err := Drop(ctx, client, db, forged); !errors.As(err, &noe) || !noe.Unverified {
				t.Errorf("Drop: %v, want an unverified *NotOwnedError", err)
			}

			if err := Reset(ctx, client, db, forged, []string{"orders"}); !errors.As(err, &noe) || !noe.Unverified {
				t.Errorf("Reset: %v, want an unverified *NotOwnedError", err)
			}

			if err := Verify(ctx, client, db, []string{"orders"}, key); err == nil {
				t.Error("Verify accepted the forged record")
			}

			if got := collections(t, client, db); !slices.Equal(got, []string{MarkerCollection, "orders"}) {
				t.Errorf("collections %q, want the user's intact", got)
			}

			// --allow-existing-db uses it as the user's, never mongobench's.
			own, err = Claim(ctx, client, db, true, key)
			if err != nil || own.Owned {
				t.Errorf("Claim allowing existing = %+v, %v; want not owned", own, err)
			}
		})
	}
}

// TestForeignCollectionInOwnedDatabase covers a database kept after a run
// (--keep-db) to which someone added a collection: the next run's Reset
// refuses to work beside it unless allowed, then drops only mongobench's
// collections; the final Drop keeps the database and the collection and
// says so.
func TestForeignCollectionInOwnedDatabase(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{})
	client := connect(t, e)
	ctx := t.Context()
	key := testKey(t)

	const db = "bench"

	d := client.Database(db)

	own, err := Claim(ctx, client, db, false, key)
	if err != nil {
		t.Fatal(err)
	}

	if err := Reset(ctx, client, db, own, []string{"items"}); err != nil {
		t.Fatal(err)
	}

	for _, c := range []string{"items", "notes"} {
		if _, err := d.Collection(c).InsertOne(ctx, bson.D{{Key: "n", Value: 1}}); err != nil {
			t.Fatal(err)
		}
	}

	again, err := Claim(ctx, client, db, false, key)
	if err != nil || !again.Owned || !slices.Equal(again.Collections, []string{"items"}) {
		t.Fatalf("Claim of the kept database = %+v, %v; want owned, recording items", again, err)
	}

	var fce *ForeignCollectionError
	if err := Reset(ctx, client, db, again, []string{"items"}); !errors.As(err, &fce) || !slices.Equal(fce.Collections, []string{"notes"}) {
		t.Fatalf("Reset beside a foreign collection: %v, want a *ForeignCollectionError naming notes", err)
	}

	const wantReset = `database "bench" holds collection "notes" that mongobench did not create; not resetting "bench" ` +
		`(drop them yourself, or pass --allow-existing-db to run beside them)`
	if fce.Error() != wantReset {
		t.Errorf("message %q, want %q", fce, wantReset)
	}

	if got := collections(t, client, db); !slices.Equal(got, []string{"items", MarkerCollection, "notes"}) {
		t.Errorf("a refused Reset changed the collections: %q", got)
	}

	// Allowed: mongobench's collection goes, the other stays.
	allowed, err := Claim(ctx, client, db, true, key)
	if err != nil || !allowed.Owned {
		t.Fatalf("Claim allowing existing = %+v, %v", allowed, err)
	}

	var cee *CollectionExistsError
	if err := Reset(ctx, client, db, allowed, []string{"notes"}); !errors.As(err, &cee) || cee.Collection != "notes" {
		t.Errorf("Reset creating a collection named like the foreign one: %v, want a *CollectionExistsError", err)
	}

	if err := Reset(ctx, client, db, allowed, []string{"items"}); err != nil {
		t.Fatal(err)
	}

	if got := collections(t, client, db); !slices.Equal(got, []string{MarkerCollection, "notes"}) {
		t.Errorf("collections after the allowed Reset %q, want the marker and notes", got)
	}

	if _, err := d.Collection("items").InsertOne(ctx, bson.D{{Key: "n", Value: 2}}); err != nil {
		t.Fatal(err)
	}

	err = Drop(ctx, client, db, allowed)
	if !errors.As(err, &fce) || fce.Action != "drop" || !slices.Equal(fce.Dropped, []string{"items"}) {
		t.Fatalf("Drop beside a foreign collection: %v, want a *ForeignCollectionError that dropped items", err)
	}

	const wantDrop = `database "bench" holds collection "notes" that mongobench did not create; not dropping "bench" ` +
		`(dropped only mongobench's collections: "items")`
	if fce.Error() != wantDrop {
		t.Errorf("message %q, want %q", fce, wantDrop)
	}

	if got := collections(t, client, db); !slices.Equal(got, []string{MarkerCollection, "notes"}) {
		t.Errorf("collections after Drop %q, want the marker and notes", got)
	}

	if n, err := d.Collection("notes").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("notes holds %d documents (%v), want 1", n, err)
	}

	// Once notes is gone, the database is mongobench's alone again.
	if err := d.Collection("notes").Drop(ctx); err != nil {
		t.Fatal(err)
	}

	if err := Drop(ctx, client, db, allowed); err != nil {
		t.Fatal(err)
	}

	dbs, err := client.ListDatabaseNames(ctx, bson.D{})
	if err != nil || slices.Contains(dbs, db) {
		t.Errorf("databases after the last Drop: %q, %v; want %q gone", dbs, err, db)
	}
}

// TestVerify: a process that writes into a database another run set up
// accepts an empty database, or one whose verified records list the
// collections; nothing else.
func TestVerify(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{})
	client := connect(t, e)
	ctx := t.Context()
	key := testKey(t)

	if err := Verify(ctx, client, "empty", []string{"items"}, key); err != nil {
		t.Errorf("Verify of an empty database: %v", err)
	}

	own, err := Claim(ctx, client, "bench", false, key)
	if err != nil {
		t.Fatal(err)
	}

	if err := Reset(ctx, client, "bench", own, []string{"items"}); err != nil {
		t.Fatal(err)
	}

	if err := Verify(ctx, client, "bench", []string{"items"}, key); err != nil {
		t.Errorf("Verify of mongobench's database: %v", err)
	}

	var nve *NotVerifiedError
	if err := Verify(ctx, client, "bench", []string{"items", "orders"}, key); !errors.As(err, &nve) || nve.Collection != "orders" {
		t.Errorf("Verify of a collection the record does not list: %v, want a *NotVerifiedError naming orders", err)
	}

	other, err := NewOwnerKey([]byte("another owner key, not the test."))
	if err != nil {
		t.Fatal(err)
	}

	if err := Verify(ctx, client, "bench", []string{"items"}, other); !errors.As(err, &nve) {
		t.Errorf("Verify with another key: %v, want a *NotVerifiedError", err)
	}

	// A user's database, then the same after mongobench claimed a
	// collection in it with --allow-existing-db.
	shop := client.Database("shop")
	if _, err := shop.Collection("orders").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}

	if err := Verify(ctx, client, "shop", []string{"orders"}, key); !errors.As(err, &nve) {
		t.Errorf("Verify of the user's database: %v, want a *NotVerifiedError", err)
	}

	foreign, err := Claim(ctx, client, "shop", true, key)
	if err != nil {
		t.Fatal(err)
	}

	if err := ClaimCollections(ctx, client, &foreign, []string{"items"}); err != nil {
		t.Fatal(err)
	}

	if err := Verify(ctx, client, "shop", []string{"items"}, key); err != nil {
		t.Errorf("Verify of mongobench's collection in the user's database: %v", err)
	}

	if err := Verify(ctx, client, "shop", []string{"orders"}, key); !errors.As(err, &nve) {
		t.Errorf("Verify of the user's collection: %v, want a *NotVerifiedError", err)
	}
}

// TestForgedCreatedRecord: a hand-written record of "collections mongobench
// created" in a user's database, listing the user's collection, makes
// mongobench drop nothing.
func TestForgedCreatedRecord(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{})
	client := connect(t, e)
	ctx := t.Context()
	key := testKey(t)

	d := client.Database("shop")
	if _, err := d.Collection("orders").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}

	forged := bson.D{
		{Key: "_id", Value: createdID},
		{Key: "tool", Value: markerTool},
		{Key: "format", Value: markerFormat},
		{Key: "db", Value: "shop"},
		{Key: "collections", Value: []string{"orders"}},
		{Key: "marker_created", Value: true},
	}
	if _, err := d.Collection(MarkerCollection).InsertOne(ctx, forged); err != nil {
		t.Fatal(err)
	}

	own, err := Claim(ctx, client, "shop", true, key)
	if err != nil {
		t.Fatal(err)
	}

	if err := ClaimCollections(ctx, client, &own, []string{"items"}); err != nil {
		t.Fatal(err)
	}

	if err := RemoveCollections(ctx, client, own); err != nil {
		t.Fatal(err)
	}

	if n, err := d.Collection("orders").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("orders holds %d documents (%v) after the forged record, want 1", n, err)
	}
}

// TestForeignCollectionMessages: a collection listed after mongobench
// dropped it was made anew (a late write of the run, another client); the
// message says so instead of calling a collection mongobench made foreign
// while listing it as dropped.
func TestForeignCollectionMessages(t *testing.T) {
	for _, tc := range []struct {
		e    ForeignCollectionError
		want string
	}{
		{
			ForeignCollectionError{DB: "d", Collections: []string{"items"}, Action: "drop", Dropped: []string{"items"}},
			`database "d": "items" reappeared after mongobench dropped it (a late write, or another client, made it anew); not dropping "d"`,
		},
		{
			ForeignCollectionError{DB: "d", Collections: []string{"items", "notes"}, Action: "drop", Dropped: []string{"items"}},
			`database "d" holds "notes" that mongobench did not create, and "items" made anew after mongobench dropped it; not dropping "d" (dropped mongobench's collections: "items")`,
		},
		{
			ForeignCollectionError{DB: "d", Collections: []string{"notes"}, Action: "drop"},
			`database "d" holds collection "notes" that mongobench did not create; not dropping "d" (dropped only mongobench's collections: none)`,
		},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("message\n %q, want\n %q", got, tc.want)
		}
	}
}
