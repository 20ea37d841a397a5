package target

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// MarkerCollection is the collection whose single document marks a database
// as created by mongobench. Workloads must not use this name, and code that
// lists a benchmark database's collections should skip it.
const MarkerCollection = "mongobench.owner"

// markerID is the _id of the marker document.
const markerID = "owner"

// markerTool is the marker's "tool" value that proves mongobench wrote it.
const markerTool = "mongobench"

// markerFormat is the version of the marker document's layout.
const markerFormat = 1

// Ownership records what mongobench may do to a database, as established by
// Claim. Pass it unchanged to Reset and Drop.
type Ownership struct {
	// DB is the database the ownership is about.
	DB string

	// Owned is true if mongobench created the database (it carries the
	// marker), so it may drop and recreate it. False means the user allowed
	// mongobench to write into a foreign database, which must then never be
	// dropped or reset.
	Owned bool

	// Created is true if this very Claim created the database.
	Created bool

	// CreatedAt is when mongobench first created the database, per its
	// marker; zero if not owned or if the marker lacks the time.
	CreatedAt time.Time

	// Collections are the collections mongobench created in a database
	// it does not own (see ClaimCollections); RemoveCollections drops
	// them, and only them, after the run.
	Collections []string
}

// NotOwnedError reports that mongobench refused to modify a database because
// it did not create it (or because it is a system database). The message
// tells the user how to proceed.
type NotOwnedError struct {
	// DB is the database mongobench refused to modify.
	DB string

	// System is true if DB is admin, local or config, which are always
	// refused.
	System bool

	// Action is the refused operation ("drop", "reset") for databases the
	// user allowed mongobench to use but not to destroy; it is empty when
	// Claim refused to use the database at all.
	Action string
}

// Error says which database was refused and what the user can do instead.
func (e *NotOwnedError) Error() string {
	switch {
	case e.System:
		return fmt.Sprintf("database %q is a system database; mongobench never modifies admin, local or config (choose another database name in the workload)", e.DB)
	case e.Action != "":
		return fmt.Sprintf("database %q was not created by mongobench; refusing to %s it", e.DB, e.Action)
	default:
		return fmt.Sprintf("database %q exists and was not created by mongobench; refusing to modify it (choose another database name in the workload, or pass --allow-existing-db)", e.DB)
	}
}

// Claim establishes whether mongobench may modify database db. A database
// without collections is created on the spot with a marker and is owned. An
// existing database is owned only if it carries mongobench's marker;
// otherwise Claim returns a *NotOwnedError, unless allowExisting is true, in
// which case it returns an Ownership with Owned false that permits writing
// but never dropping. System databases are always refused.
//
// Existence is judged by listCollections rather than listDatabases because
// the latter may need cluster-wide privileges; a user who may not list the
// database's collections gets an error, never a guess.
func Claim(ctx context.Context, client *mongo.Client, db string, allowExisting bool) (Ownership, error) {
	if err := checkDatabaseName(db); err != nil {
		return Ownership{}, err
	}

	d := client.Database(db)

	names, err := collectionNames(ctx, d)
	if err != nil {
		return Ownership{}, err
	}

	if len(names) == 0 {
		createdAt, err := writeMarker(ctx, d)
		if err == nil {
			return Ownership{DB: db, Owned: true, Created: true, CreatedAt: createdAt}, nil
		}

		// Another mongobench claimed the database at the same moment;
		// its marker is as good as ours.
		if !mongo.IsDuplicateKeyError(err) {
			return Ownership{}, err
		}
	}

	createdAt, found, err := readMarker(ctx, d)
	if err != nil {
		return Ownership{}, err
	}

	if found {
		return Ownership{DB: db, Owned: true, CreatedAt: createdAt}, nil
	}

	if !allowExisting {
		return Ownership{}, &NotOwnedError{DB: db}
	}

	return Ownership{DB: db}, nil
}

// Reset gives an owned database a clean slate before a run: it drops every
// collection but the marker (re-creating the marker if it was missing), so
// the database stays owned. It
// refuses (with a *NotOwnedError) databases that are not owned, and checks
// the marker again right before dropping in case the database was replaced
// since Claim.
func Reset(ctx context.Context, client *mongo.Client, db string, own Ownership) error {
	d, err := checkOwned(ctx, client, db, own, "reset")
	if err != nil {
		return err
	}

	// Drop the collections, not the database: FerretDB's SQLite backend
	// deletes the database file on dropDatabase, and re-creating it at once
	// (between trials) sometimes fails with a disk I/O error while pooled
	// connections still hold the old file. The marker stays in place.
	names, err := collectionNames(ctx, d)
	if err != nil {
		return fmt.Errorf("reset database %q: %w", db, err)
	}

	for _, name := range names {
		if name == MarkerCollection {
			continue
		}

		if err := d.Collection(name).Drop(ctx); err != nil {
			return fmt.Errorf("reset database %q: drop collection %q: %w", db, name, err)
		}
	}

	// An emptied database (nothing to lose) is marked again.
	if !slices.Contains(names, MarkerCollection) {
		if _, err := writeMarker(ctx, d); err != nil {
			return fmt.Errorf("reset database %q: %w", db, err)
		}
	}

	return nil
}

// Drop removes an owned database for cleanup after a run, marker included.
// It refuses (with a *NotOwnedError) databases that are not owned, and
// checks the marker again right before dropping.
func Drop(ctx context.Context, client *mongo.Client, db string, own Ownership) error {
	d, err := checkOwned(ctx, client, db, own, "drop")
	if err != nil {
		return err
	}

	if err := d.Drop(ctx); err != nil {
		return fmt.Errorf("drop database %q: %w", db, err)
	}

	return nil
}

// IsSystemDatabase reports whether db is one of the databases mongobench
// never modifies (admin, local, config), compared case-insensitively because
// MongoDB refuses database names differing from existing ones only in case.
// These databases hold users, the oplog and cluster metadata.
func IsSystemDatabase(db string) bool {
	switch strings.ToLower(db) {
	case "admin", "local", "config":
		return true
	default:
		return false
	}
}

// checkDatabaseName rejects names mongobench must never work on.
func checkDatabaseName(db string) error {
	if db == "" {
		return errors.New("database name is empty")
	}

	if IsSystemDatabase(db) {
		return &NotOwnedError{DB: db, System: true}
	}

	return nil
}

// checkOwned verifies, for a destructive action, that own covers db, that it
// grants ownership, and that the database still carries the marker (or is
// empty, in which case there is nothing to lose).
func checkOwned(ctx context.Context, client *mongo.Client, db string, own Ownership, action string) (*mongo.Database, error) {
	if err := checkDatabaseName(db); err != nil {
		return nil, err
	}

	if own.DB != db {
		return nil, fmt.Errorf("refusing to %s database %q: its ownership was never claimed (ownership given is for %q)", action, db, own.DB)
	}

	if !own.Owned {
		return nil, &NotOwnedError{DB: db, Action: action}
	}

	d := client.Database(db)

	names, err := collectionNames(ctx, d)
	if err != nil {
		return nil, err
	}

	if len(names) == 0 {
		return d, nil
	}

	_, found, err := readMarker(ctx, d)
	if err != nil {
		return nil, err
	}

	if !found {
		return nil, &NotOwnedError{DB: db, Action: action}
	}

	return d, nil
}

// collectionNames lists d's collections, which is how mongobench tells
// whether a database exists.
func collectionNames(ctx context.Context, d *mongo.Database) ([]string, error) {
	names, err := d.ListCollectionNames(ctx, bson.D{}, options.ListCollections().SetNameOnly(true))
	if err != nil {
		return nil, fmt.Errorf("list collections of database %q: %w", d.Name(), err)
	}

	return names, nil
}

// writeMarker inserts the marker document into d and returns its creation
// time.
func writeMarker(ctx context.Context, d *mongo.Database) (time.Time, error) {
	// BSON dates have millisecond precision; truncate so that what Claim
	// returns equals what a later Claim reads back.
	now := time.Now().UTC().Truncate(time.Millisecond)

	doc := bson.D{
		{Key: "_id", Value: markerID},
		{Key: "tool", Value: markerTool},
		{Key: "format", Value: markerFormat},
		{Key: "created_at", Value: now},
		{Key: "version", Value: mongobenchVersion()},
		{Key: "note", Value: "created by mongobench, which may drop this database; delete this collection to protect it"},
	}

	if _, err := d.Collection(MarkerCollection).InsertOne(ctx, doc); err != nil {
		return time.Time{}, fmt.Errorf("mark database %q as created by mongobench: %w", d.Name(), err)
	}

	return now, nil
}

// readMarker looks for mongobench's marker in d. A document that is not
// mongobench's (wrong tool) does not count; a missing or odd created_at only
// leaves the time zero.
func readMarker(ctx context.Context, d *mongo.Database) (createdAt time.Time, found bool, err error) {
	raw, err := d.Collection(MarkerCollection).FindOne(ctx, bson.D{{Key: "_id", Value: markerID}}).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return time.Time{}, false, nil
	}

	if err != nil {
		return time.Time{}, false, fmt.Errorf("read mongobench marker of database %q: %w", d.Name(), err)
	}

	if rawString(raw, "tool") != markerTool {
		return time.Time{}, false, nil
	}

	if v, err := raw.LookupErr("created_at"); err == nil {
		if dt, ok := v.DateTimeOK(); ok {
			createdAt = time.UnixMilli(dt).UTC()
		}
	}

	return createdAt, true, nil
}

// mongobenchVersion returns mongobench's module version as recorded in the
// binary, e.g. "v0.3.0" or "(devel)", or "" without build information.
func mongobenchVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}

	return bi.Main.Version
}
