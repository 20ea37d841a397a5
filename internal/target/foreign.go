package target

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
// its presence never makes the database mongobench's.
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
// recorded as its own, refuses (with a *CollectionExistsError) a name that
// exists otherwise, and records names as mongobench's before they are
// created. It sets own.Collections to names. It refuses owned databases,
// which Reset serves.
func ClaimCollections(ctx context.Context, client *mongo.Client, own *Ownership, names []string) error {
	if err := checkDatabaseName(own.DB); err != nil {
		return err
	}

	if own.Owned {
		return fmt.Errorf("database %q is mongobench's: reset it instead of claiming collections", own.DB)
	}

	d := client.Database(own.DB)

	// A record left by an earlier run: its collections go, and whether
	// mongobench created the marker collection carries over.
	markerCreated, err := removeRecorded(ctx, d, false)
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

	doc := bson.D{
		{Key: "tool", Value: markerTool},
		{Key: "format", Value: markerFormat},
		{Key: "collections", Value: names},
		{Key: "marker_created", Value: markerCreated},
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
// Nothing else is touched.
func RemoveCollections(ctx context.Context, client *mongo.Client, own Ownership) error {
	if err := checkDatabaseName(own.DB); err != nil {
		return err
	}

	if own.Owned {
		return fmt.Errorf("database %q is mongobench's: drop it instead", own.DB)
	}

	_, err := removeRecorded(ctx, client.Database(own.DB), true)

	return err
}

// record is the stored list of collections mongobench created.
type record struct {
	Tool          string   `bson:"tool"`
	Collections   []string `bson:"collections"`
	MarkerCreated bool     `bson:"marker_created"`
}

// removeRecorded drops the collections recorded in d, if any, and reports
// whether the record says mongobench created the marker collection. With
// forget, it also deletes the record (and the marker collection if
// mongobench created it and nothing else is in it); without, the record
// stays, to be replaced by the caller.
func removeRecorded(ctx context.Context, d *mongo.Database, forget bool) (bool, error) {
	marker := d.Collection(MarkerCollection)

	var rec record

	err := marker.FindOne(ctx, bson.D{{Key: "_id", Value: createdID}}).Decode(&rec)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return rec.MarkerCreated, nil
	}

	if err != nil {
		return rec.MarkerCreated, fmt.Errorf("read the collections mongobench created in database %q: %w", d.Name(), err)
	}

	if rec.Tool != markerTool {
		return false, nil
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
