package targets

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
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

// markerTool is the marker's "tool" value: what the record claims to be,
// which proves nothing by itself (anyone can insert it); the record's MAC
// does.
const markerTool = "mongobench"

// markerFormat is the version of the marker document's layout. Format 2
// is signed with the owner key; the unsigned records of format 1, written
// by mongobench before it signed them, do not verify, so their databases
// are not taken for mongobench's.
const markerFormat = 2

// Ownership records what mongobench may do to a database, as established by
// Claim. Pass it unchanged to Reset and Drop.
type Ownership struct {
	// DB is the database the ownership is about.
	DB string

	// Owned is true if mongobench created the database: it carries an
	// owner record that verifies with the owner key, so mongobench may
	// drop the collections the record lists. False means the user allowed
	// mongobench to write into a foreign database, which must then never be
	// dropped or reset.
	Owned bool

	// Created is true if this very Claim created the database.
	Created bool

	// CreatedAt is when mongobench first created the database, per its
	// owner record; zero if not owned.
	CreatedAt time.Time

	// Collections are the collections mongobench created in a database
	// it does not own (see ClaimCollections); RemoveCollections drops
	// them, and only them, after the run. In an owned database they are
	// those the owner record listed when Claim read it.
	Collections []string

	// key signs and verifies the records; creationID identifies the
	// database's creation across runs (a record copied from another
	// creation of the same name carries another); allowExisting is Claim's
	// argument, which also lets Reset work beside collections mongobench
	// did not create.
	key           *OwnerKey
	creationID    string
	allowExisting bool
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

	// Unverified is true if DB carries an owner record that does not
	// verify with KeyName's key: forged, copied from another database, or
	// signed with another key.
	Unverified bool

	// KeyName names the owner key the record was checked with.
	KeyName string

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
	case e.Unverified && e.Action != "":
		return fmt.Sprintf("database %q carries a mongobench owner record that does not verify with %s "+
			"(forged, copied from another database, signed with another key, or unsigned by an older mongobench); refusing to %s it", e.DB, e.KeyName, e.Action)
	case e.Unverified:
		return fmt.Sprintf("database %q carries a mongobench owner record that does not verify with %s "+
			"(forged, copied from another database, signed with another key, or unsigned by an older mongobench); refusing to modify it "+
			"(choose another database name in the workload, point %s at the key that created it, or pass --allow-existing-db)",
			e.DB, e.KeyName, OwnerKeyEnv)
	case e.Action != "":
		return fmt.Sprintf("database %q was not created by mongobench; refusing to %s it", e.DB, e.Action)
	default:
		return fmt.Sprintf("database %q exists and was not created by mongobench; refusing to modify it (choose another database name in the workload, or pass --allow-existing-db)", e.DB)
	}
}

// ForeignCollectionError reports collections that mongobench did not create
// in a database it owns: someone added them (to a database kept with
// --keep-db, say). Reset refuses to work beside them; Drop drops only
// mongobench's collections and keeps the database.
type ForeignCollectionError struct {
	// DB is the database, Collections the collections it holds that its
	// owner record does not list.
	DB          string
	Collections []string

	// Action is "reset" (refused) or "drop" (the database was kept).
	Action string

	// Dropped are the collections Drop dropped, mongobench's.
	Dropped []string
}

// Error names the database and the collections, and what happened or what
// the user can do.
func (e *ForeignCollectionError) Error() string {
	what := fmt.Sprintf("collection %q", e.Collections[0])
	if len(e.Collections) > 1 {
		what = fmt.Sprintf("collections %s", quoteList(e.Collections))
	}

	if e.Action == "drop" {
		dropped := "none"
		if len(e.Dropped) > 0 {
			dropped = quoteList(e.Dropped)
		}

		// A collection mongobench dropped that is listed again was made
		// anew after the drop (a late write of the run, or another
		// client): it is kept, and said so rather than called foreign.
		var again, other []string

		for _, c := range e.Collections {
			if slices.Contains(e.Dropped, c) {
				again = append(again, c)
			} else {
				other = append(other, c)
			}
		}

		switch {
		case len(other) == 0:
			return fmt.Sprintf("database %q: %s reappeared after mongobench dropped it (a late write, or another client, made it anew); not dropping %q",
				e.DB, quoteList(again), e.DB)
		case len(again) > 0:
			what = fmt.Sprintf("%s that mongobench did not create, and %s made anew after mongobench dropped it", quoteList(other), quoteList(again))

			return fmt.Sprintf("database %q holds %s; not dropping %q (dropped mongobench's collections: %s)", e.DB, what, e.DB, dropped)
		}

		return fmt.Sprintf("database %q holds %s that mongobench did not create; not dropping %q "+
			"(dropped only mongobench's collections: %s)", e.DB, what, e.DB, dropped)
	}

	return fmt.Sprintf("database %q holds %s that mongobench did not create; not resetting %q "+
		"(drop them yourself, or pass --allow-existing-db to run beside them)", e.DB, what, e.DB)
}

// quoteList is `"a", "b"`.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}

	return strings.Join(q, ", ")
}

// Claim establishes whether mongobench may modify database db. A database
// without collections is created on the spot with an owner record signed
// with key, and is owned. An existing database is owned only if its owner
// record verifies with key; otherwise Claim returns a *NotOwnedError,
// unless allowExisting is true, in which case it returns an Ownership with
// Owned false that permits writing but never dropping. System databases are
// always refused.
//
// Existence is judged by listCollections rather than listDatabases because
// the latter may need cluster-wide privileges; a user who may not list the
// database's collections gets an error, never a guess.
func Claim(ctx context.Context, client *mongo.Client, db string, allowExisting bool, key *OwnerKey) (Ownership, error) {
	if err := checkDatabaseName(db); err != nil {
		return Ownership{}, err
	}

	if key == nil {
		return Ownership{}, errors.New("claiming a database needs mongobench's owner key")
	}

	d := client.Database(db)

	names, err := collectionNames(ctx, d)
	if err != nil {
		return Ownership{}, err
	}

	if len(names) == 0 {
		rec := newOwnerRecord(db)

		err := insertMarker(ctx, d, key, rec)
		if err == nil {
			return Ownership{
				DB: db, Owned: true, Created: true, CreatedAt: rec.CreatedAt,
				key: key, creationID: rec.CreationID, allowExisting: allowExisting,
			}, nil
		}

		// Another mongobench claimed the database at the same moment;
		// its record is as good as ours if it verifies.
		if !mongo.IsDuplicateKeyError(err) {
			return Ownership{}, err
		}
	}

	rec, found, err := readMarker(ctx, d, key)
	if err != nil {
		return Ownership{}, err
	}

	if rec != nil {
		return Ownership{
			DB: db, Owned: true, CreatedAt: rec.CreatedAt, Collections: rec.Collections,
			key: key, creationID: rec.CreationID, allowExisting: allowExisting,
		}, nil
	}

	if !allowExisting {
		return Ownership{}, &NotOwnedError{DB: db, Unverified: found, KeyName: key.where()}
	}

	return Ownership{DB: db, key: key, allowExisting: true}, nil
}

// Reset gives an owned database a clean slate before a run: it drops the
// collections its owner record lists, then records collections, which the
// caller then creates, as the ones mongobench created. It refuses (with a
// *NotOwnedError) databases that are not owned, verifying the record again
// right before dropping in case the database was replaced since Claim; and
// (with a *ForeignCollectionError) a database that holds collections
// mongobench did not create, unless Claim was allowed to use existing
// databases, in which case they are left alone. A database emptied since
// Claim has nothing to lose and is recorded afresh.
func Reset(ctx context.Context, client *mongo.Client, db string, own Ownership, collections []string) error {
	d, rec, err := checkOwned(ctx, client, db, own, "reset")
	if err != nil {
		return err
	}

	if rec == nil {
		rec = &ownerRecord{DB: db, CreationID: own.creationID, CreatedAt: own.CreatedAt}
		if rec.CreationID == "" {
			rec = newOwnerRecord(db)
		}
	} else {
		// Drop the collections, not the database: FerretDB's SQLite
		// backend deletes the database file on dropDatabase, and
		// re-creating it at once (between trials) sometimes fails with a
		// disk I/O error while pooled connections still hold the old
		// file. The record stays in place.
		names, err := collectionNames(ctx, d)
		if err != nil {
			return fmt.Errorf("reset database %q: %w", db, err)
		}

		if foreign := foreignCollections(names, rec.Collections); len(foreign) > 0 {
			if !own.allowExisting {
				return &ForeignCollectionError{DB: db, Collections: foreign, Action: "reset"}
			}

			for _, c := range collections {
				if slices.Contains(foreign, c) {
					return &CollectionExistsError{DB: db, Collection: c}
				}
			}
		}

		if _, err := dropRecorded(ctx, d, names, rec.Collections); err != nil {
			return fmt.Errorf("reset database %q: %w", db, err)
		}
	}

	rec.Collections = slices.Clone(collections)
	if err := replaceMarker(ctx, d, own.key, rec); err != nil {
		return fmt.Errorf("reset database %q: %w", db, err)
	}

	return nil
}

// Drop removes what mongobench created in an owned database after a run:
// the collections its owner record lists, then, if nothing else is left,
// the database. A database that holds collections mongobench did not
// create is kept, with them, and Drop returns a *ForeignCollectionError
// saying so. It refuses (with a *NotOwnedError) databases that are not
// owned, verifying the owner record again right before dropping.
func Drop(ctx context.Context, client *mongo.Client, db string, own Ownership) error {
	d, rec, err := checkOwned(ctx, client, db, own, "drop")
	if err != nil {
		return err
	}

	if rec != nil {
		names, err := collectionNames(ctx, d)
		if err != nil {
			return fmt.Errorf("drop database %q: %w", db, err)
		}

		dropped, err := dropRecorded(ctx, d, names, rec.Collections)
		if err != nil {
			return fmt.Errorf("drop database %q: %w", db, err)
		}

		// Listed again: a collection created meanwhile is kept too.
		if names, err = collectionNames(ctx, d); err != nil {
			return fmt.Errorf("drop database %q: %w", db, err)
		}

		if foreign := foreignCollections(names, nil); len(foreign) > 0 {
			// The record no longer lists what was dropped, so that a
			// collection of the same name made later is not taken for
			// mongobench's.
			rec.Collections = nil
			if err := replaceMarker(ctx, d, own.key, rec); err != nil {
				return fmt.Errorf("drop database %q: %w", db, err)
			}

			return &ForeignCollectionError{DB: db, Collections: foreign, Action: "drop", Dropped: dropped}
		}
	}

	if err := d.Drop(ctx); err != nil {
		return fmt.Errorf("drop database %q: %w", db, err)
	}

	return nil
}

// Verify checks, without changing anything, that mongobench may write into
// the collections of db: that db holds no collection at all (nothing to
// lose, as on a server that stores nothing), or that an owner record, or
// the record of collections created in a database mongobench does not own
// (see ClaimCollections), verifies with key and lists every one of
// collections. It is for processes that write into a database another
// mongobench run set up, and returns a *NotVerifiedError otherwise.
func Verify(ctx context.Context, client *mongo.Client, db string, collections []string, key *OwnerKey) error {
	if err := checkDatabaseName(db); err != nil {
		return err
	}

	if key == nil {
		return errors.New("verifying a database needs mongobench's owner key")
	}

	d := client.Database(db)

	names, err := collectionNames(ctx, d)
	if err != nil {
		return err
	}

	if len(names) == 0 {
		return nil
	}

	var listed []string

	rec, _, err := readMarker(ctx, d, key)
	if err != nil {
		return err
	}

	if rec != nil {
		listed = rec.Collections
	} else {
		cr, err := readCreated(ctx, d, key)
		if err != nil {
			return err
		}

		if cr != nil {
			listed = cr.Collections
		}
	}

	for _, c := range collections {
		if !slices.Contains(listed, c) {
			return &NotVerifiedError{DB: db, Collection: c, KeyName: key.where()}
		}
	}

	return nil
}

// NotVerifiedError reports a database whose collection mongobench may not
// write into, because no record that verifies with the owner key says
// mongobench created it.
type NotVerifiedError struct {
	// DB and Collection name the collection.
	DB, Collection string

	// KeyName names the owner key the records were checked with.
	KeyName string
}

// Error names the database, the collection and the key.
func (e *NotVerifiedError) Error() string {
	return fmt.Sprintf("database %q is not verifiably mongobench's: no record that verifies with %s says mongobench created its collection %q",
		e.DB, e.KeyName, e.Collection)
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
// grants ownership, and that the database still carries an owner record
// that verifies, which it returns; or that the database is empty, in which
// case there is nothing to lose and the record is nil.
func checkOwned(ctx context.Context, client *mongo.Client, db string, own Ownership, action string) (*mongo.Database, *ownerRecord, error) {
	if err := checkDatabaseName(db); err != nil {
		return nil, nil, err
	}

	if own.DB != db {
		return nil, nil, fmt.Errorf("refusing to %s database %q: its ownership was never claimed (ownership given is for %q)", action, db, own.DB)
	}

	if !own.Owned {
		return nil, nil, &NotOwnedError{DB: db, Action: action}
	}

	if own.key == nil {
		return nil, nil, fmt.Errorf("refusing to %s database %q: no owner key to verify it with", action, db)
	}

	d := client.Database(db)

	names, err := collectionNames(ctx, d)
	if err != nil {
		return nil, nil, err
	}

	if len(names) == 0 {
		return d, nil, nil
	}

	rec, found, err := readMarker(ctx, d, own.key)
	if err != nil {
		return nil, nil, err
	}

	if rec == nil {
		return nil, nil, &NotOwnedError{DB: db, Action: action, Unverified: found, KeyName: own.key.where()}
	}

	return d, rec, nil
}

// foreignCollections returns the names that are neither recorded nor
// mongobench's record itself. The server's own system.* collections (a
// profiler's, say) do not count: a user's view shows under its own name.
func foreignCollections(names, recorded []string) []string {
	var foreign []string

	for _, n := range names {
		if n != MarkerCollection && !strings.HasPrefix(n, "system.") && !slices.Contains(recorded, n) {
			foreign = append(foreign, n)
		}
	}

	slices.Sort(foreign)

	return foreign
}

// dropRecorded drops the collections of names that recorded lists, and
// returns them.
func dropRecorded(ctx context.Context, d *mongo.Database, names, recorded []string) ([]string, error) {
	var dropped []string

	for _, n := range names {
		if n == MarkerCollection || !slices.Contains(recorded, n) {
			continue
		}

		if err := d.Collection(n).Drop(ctx); err != nil && !isNamespaceNotFound(err) {
			return dropped, fmt.Errorf("drop collection %q: %w", n, err)
		}

		dropped = append(dropped, n)
	}

	slices.Sort(dropped)

	return dropped, nil
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

// ownerRecord is what the owner record says, as signed: the database's
// name (a record copied to another database does not verify), the
// creation's random id and time, and the collections mongobench created.
type ownerRecord struct {
	DB          string
	CreationID  string
	CreatedAt   time.Time
	Collections []string
}

// newOwnerRecord is the record of a database created now.
func newOwnerRecord(db string) *ownerRecord {
	// BSON dates have millisecond precision; truncate so that what is
	// signed equals what a later read gets back.
	return &ownerRecord{DB: db, CreationID: rand.Text(), CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}
}

// fields are the record's signed fields, the collections sorted.
func (r *ownerRecord) fields() []string {
	cols := slices.Clone(r.Collections)
	slices.Sort(cols)

	f := []string{
		"mongobench owner record", strconv.Itoa(markerFormat), r.DB, r.CreationID,
		strconv.FormatInt(r.CreatedAt.UnixMilli(), 10), strconv.Itoa(len(cols)),
	}

	return append(f, cols...)
}

// document is the record as stored, signed with key.
func (r *ownerRecord) document(key *OwnerKey) bson.D {
	cols := slices.Clone(r.Collections)
	slices.Sort(cols)

	if cols == nil {
		cols = []string{}
	}

	return bson.D{
		{Key: "_id", Value: markerID},
		{Key: "tool", Value: markerTool},
		{Key: "format", Value: markerFormat},
		{Key: "db", Value: r.DB},
		{Key: "creation_id", Value: r.CreationID},
		{Key: "created_at", Value: r.CreatedAt},
		{Key: "collections", Value: cols},
		{Key: "mac", Value: hex.EncodeToString(key.sign(r.fields()...))},
		{Key: "version", Value: mongobenchVersion()},
		{Key: "note", Value: "created by mongobench, which may drop the collections listed here, and the database if it holds nothing else; delete this collection to protect them"},
	}
}

// insertMarker inserts rec's document into d; a duplicate key error means
// another process put a record there first.
func insertMarker(ctx context.Context, d *mongo.Database, key *OwnerKey, rec *ownerRecord) error {
	if _, err := d.Collection(MarkerCollection).InsertOne(ctx, rec.document(key)); err != nil {
		return fmt.Errorf("mark database %q as created by mongobench: %w", d.Name(), err)
	}

	return nil
}

// replaceMarker writes rec's document in place of the record in d. It
// deletes and inserts rather than replacing: the embedded in-memory FerretDB
// deadlocks on an update that modifies a document (see
// EmbeddedOptions.Memory), not on deletes and inserts. A crash between the
// two leaves a database without a record, which the next run refuses rather
// than drops: the safe side.
func replaceMarker(ctx context.Context, d *mongo.Database, key *OwnerKey, rec *ownerRecord) error {
	coll := d.Collection(MarkerCollection)

	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: markerID}}); err != nil {
		return fmt.Errorf("record the collections mongobench creates in database %q: %w", d.Name(), err)
	}

	if _, err := coll.InsertOne(ctx, rec.document(key)); err != nil {
		return fmt.Errorf("record the collections mongobench creates in database %q: %w", d.Name(), err)
	}

	return nil
}

// storedRecord is the stored owner record's layout.
type storedRecord struct {
	Tool        string    `bson:"tool"`
	Format      int       `bson:"format"`
	DB          string    `bson:"db"`
	CreationID  string    `bson:"creation_id"`
	CreatedAt   time.Time `bson:"created_at"`
	Collections []string  `bson:"collections"`
	MAC         string    `bson:"mac"`
}

// readMarker returns d's owner record if it verifies with key. found tells
// whether an owner record was there at all, verified or not (one that does
// not verify was forged, copied, written by an older mongobench, or signed
// with another key).
func readMarker(ctx context.Context, d *mongo.Database, key *OwnerKey) (rec *ownerRecord, found bool, err error) {
	raw, err := d.Collection(MarkerCollection).FindOne(ctx, bson.D{{Key: "_id", Value: markerID}}).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, false, nil
	}

	if err != nil {
		return nil, false, fmt.Errorf("read mongobench's owner record of database %q: %w", d.Name(), err)
	}

	var s storedRecord
	if err := bson.Unmarshal(raw, &s); err != nil || s.Tool != markerTool || s.Format != markerFormat {
		return nil, true, nil
	}

	r := &ownerRecord{DB: s.DB, CreationID: s.CreationID, CreatedAt: s.CreatedAt.UTC(), Collections: s.Collections}

	mac, err := hex.DecodeString(s.MAC)
	if err != nil || s.DB != d.Name() || s.CreationID == "" || !key.verify(mac, r.fields()...) {
		return nil, true, nil
	}

	return r, true, nil
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
