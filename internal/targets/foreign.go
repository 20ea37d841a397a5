package targets

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// In a database mongobench does not own (used with --allow-existing-db), it
// may create only the workload's collections, and must remove them, and
// nothing else, after the run. What it creates is recorded in the database
// itself, in a document of the marker collection, before it is created: a
// run that could not clean up (killed, --keep-db) is then cleaned up by the
// next one instead of making it fail on collections that already exist.

// createdID is the _id of the document that lists the collections mongobench
// created in a database it does not own. It is not the ownership marker:
// its presence never makes the database mongobench's. It is signed with the
// owner key like the owner record, so that a forged one cannot make
// mongobench drop the user's collections.
const createdID = "created_collections"

// CollectionExistsError reports a workload collection that already exists in
// a database mongobench does not own and that mongobench did not create.
// mongobench refuses to use it: loading and measuring would write into, and
// measure, the user's data.
type CollectionExistsError struct {
	// DB and Collection name the collection.
	DB, Collection string
}

// Error names the collection and what the user can do.
func (e *CollectionExistsError) Error() string {
	return fmt.Sprintf("collection %q already exists in database %q and was not created by mongobench; "+
		"refusing to use it (rename the workload's collection or choose another database)", e.Collection, e.DB)
}

// ClaimCollections prepares a database used with Owned false for a run that
// creates the collections names: it drops the collections an earlier run
// recorded as its own (in a record that verifies with the owner key),
// refuses (with a *CollectionExistsError) a name that exists otherwise, and
// records names as mongobench's before they are created, signed. It sets
// own.Collections to names. It refuses owned databases, which Reset serves.
func ClaimCollections(ctx context.Context, client *mongo.Client, own *Ownership, names []string) error {
	if err := checkDatabaseName(own.DB); err != nil {
		return err
	}

	if own.Owned {
		return fmt.Errorf("database %q is mongobench's: reset it instead of claiming collections", own.DB)
	}

	if own.key == nil {
		return fmt.Errorf("database %q: no owner key to sign mongobench's record with", own.DB)
	}

	d := client.Database(own.DB)

	// A record left by an earlier run: its collections go, and whether
	// mongobench created the marker collection carries over.
	markerCreated, err := removeRecorded(ctx, d, own.key, false)
	if err != nil {
		return err
	}

	existing, err := collectionNames(ctx, d)
	if err != nil {
		return err
	}

	for _, n := range names {
		if slices.Contains(existing, n) {
			return &CollectionExistsError{DB: own.DB, Collection: n}
		}
	}

	markerCreated = markerCreated || !slices.Contains(existing, MarkerCollection)

	rec := createdRecord{DB: own.DB, Collections: slices.Clone(names), MarkerCreated: markerCreated}

	doc := bson.D{
		{Key: "tool", Value: markerTool},
		{Key: "format", Value: markerFormat},
		{Key: "db", Value: own.DB},
		{Key: "collections", Value: rec.Collections},
		{Key: "marker_created", Value: markerCreated},
		{Key: "mac", Value: hex.EncodeToString(own.key.sign(rec.fields()...))},
		{Key: "note", Value: "collections created by mongobench in a database it does not own; the next run removes them"},
	}

	_, err = d.Collection(MarkerCollection).ReplaceOne(ctx, bson.D{{Key: "_id", Value: createdID}}, doc,
		options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("record the collections mongobench creates in database %q: %w", own.DB, err)
	}

	own.Collections = slices.Clone(names)

	return nil
}

// RemoveCollections removes, from a database used with Owned false, the
// collections ClaimCollections recorded, then the record, and the marker
// collection if mongobench created it for the record and it is now empty.
// Nothing else is touched, and nothing at all if the record does not
// verify with the owner key.
func RemoveCollections(ctx context.Context, client *mongo.Client, own Ownership) error {
	if err := checkDatabaseName(own.DB); err != nil {
		return err
	}

	if own.Owned {
		return fmt.Errorf("database %q is mongobench's: drop it instead", own.DB)
	}

	if own.key == nil {
		return fmt.Errorf("database %q: no owner key to verify mongobench's record with", own.DB)
	}

	_, err := removeRecorded(ctx, client.Database(own.DB), own.key, true)

	return err
}

// createdRecord is what the record of collections mongobench created in a
// database it does not own says, as signed.
type createdRecord struct {
	DB            string
	Collections   []string
	MarkerCreated bool
}

// fields are the record's signed fields, the collections in their order.
func (r *createdRecord) fields() []string {
	f := []string{
		"mongobench created collections", strconv.Itoa(markerFormat), r.DB,
		strconv.FormatBool(r.MarkerCreated), strconv.Itoa(len(r.Collections)),
	}

	return append(f, r.Collections...)
}

// storedCreated is the stored layout of the record.
type storedCreated struct {
	DB            string   `bson:"db"`
	Collections   []string `bson:"collections"`
	MarkerCreated bool     `bson:"marker_created"`
	Tool          string   `bson:"tool"`
	Format        int      `bson:"format"`
	MAC           string   `bson:"mac"`
}

// readCreated returns d's record of created collections if it verifies with
// key, else nil: a record someone forged, copied, or an older mongobench
// wrote unsigned is not mongobench's, and its collections are left alone.
func readCreated(ctx context.Context, d *mongo.Database, key *OwnerKey) (*createdRecord, error) {
	raw, err := d.Collection(MarkerCollection).FindOne(ctx, bson.D{{Key: "_id", Value: createdID}}).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}

	if err != nil {
		return nil, fmt.Errorf("read the collections mongobench created in database %q: %w", d.Name(), err)
	}

	var s storedCreated
	if err := bson.Unmarshal(raw, &s); err != nil || s.Tool != markerTool || s.Format != markerFormat || s.DB != d.Name() {
		return nil, nil
	}

	rec := &createdRecord{DB: s.DB, Collections: s.Collections, MarkerCreated: s.MarkerCreated}

	mac, err := hex.DecodeString(s.MAC)
	if err != nil || !key.verify(mac, rec.fields()...) {
		return nil, nil
	}

	return rec, nil
}

// removeRecorded drops the collections recorded in d, if the record
// verifies, and reports whether the record says mongobench created the
// marker collection. With forget, it also deletes the record (and the
// marker collection if mongobench created it and nothing else is in it);
// without, the record stays, to be replaced by the caller.
func removeRecorded(ctx context.Context, d *mongo.Database, key *OwnerKey, forget bool) (bool, error) {
	marker := d.Collection(MarkerCollection)

	rec, err := readCreated(ctx, d, key)
	if err != nil || rec == nil {
		return false, err
	}

	for _, n := range rec.Collections {
		if n == MarkerCollection {
			continue
		}

		if err := d.Collection(n).Drop(ctx); err != nil && !isNamespaceNotFound(err) {
			return rec.MarkerCreated, fmt.Errorf("drop collection %q that mongobench created in database %q: %w", n, d.Name(), err)
		}
	}

	if !forget {
		return rec.MarkerCreated, nil
	}

	if _, err := marker.DeleteOne(ctx, bson.D{{Key: "_id", Value: createdID}}); err != nil {
		return rec.MarkerCreated, fmt.Errorf("delete mongobench's record in database %q: %w", d.Name(), err)
	}

	if !rec.MarkerCreated {
		return rec.MarkerCreated, nil
	}

	n, err := marker.CountDocuments(ctx, bson.D{})
	if err != nil {
		return rec.MarkerCreated, fmt.Errorf("count the documents of %s in database %q: %w", MarkerCollection, d.Name(), err)
	}

	if n == 0 {
		if err := marker.Drop(ctx); err != nil && !isNamespaceNotFound(err) {
			return rec.MarkerCreated, fmt.Errorf("drop %s in database %q: %w", MarkerCollection, d.Name(), err)
		}
	}

	return rec.MarkerCreated, nil
}

// isNamespaceNotFound reports the error older servers return for dropping a
// collection that does not exist (code 26), which is what was wanted.
func isNamespaceNotFound(err error) bool {
	var se mongo.ServerError

	return errors.As(err, &se) && se.HasErrorCode(26)
}
