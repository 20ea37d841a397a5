// Package profiler reads a database's profiler collection (system.profile)
// for mongobench capture: it connects, checks that the collection exists,
// and hands each document down as relaxed extended JSON, the form of
// mongod's log, so that package capture turns it into the same records as
// a log line without linking the driver.
package profiler

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/mongobench/mongobench/internal/targets"
)

// Collection is the profiler's collection in each database.
const Collection = "system.profile"

// MissingError is a profiler collection that does not exist.
type MissingError struct {
	DB, Coll string
}

func (e *MissingError) Error() string {
	if e.Coll != Collection {
		return fmt.Sprintf("database %s has no collection %s", e.DB, e.Coll)
	}

	return fmt.Sprintf("database %s has no %s collection: the profiler is off "+
		"(db.setProfilingLevel(2) on that database profiles every operation until set back to 0) "+
		"or the server has none (FerretDB has no profiler: capture its log or the wire instead)", e.DB, Collection)
}

// ErrNoDatabase is a read that names no database.
var ErrNoDatabase = errors.New("no database: name it (--db NAME, or in the URI's path)")

// Options say what to read.
type Options struct {
	// DB is the database whose profile is read; empty means the URI's.
	DB string
	// Coll is the collection read, Collection unless set: a copy of a
	// profile kept in a collection of its own (system.profile is capped,
	// so users copy it to keep it), and the seam through which tests read
	// documents they wrote, since the test server has no profiler.
	Coll string
	// Connect are the connection's options.
	Connect targets.ConnectOptions
}

// Database is the database a URI names, or "".
func Database(uri string) string {
	cs, err := connstring.Parse(uri)
	if err != nil {
		return ""
	}

	return cs.Database
}

// Read connects to uri and calls each with every document of the
// profiler collection, in natural order (the order the server wrote them),
// numbered from 1. It returns how many it read; an error of each stops the
// read and is returned.
func Read(ctx context.Context, uri string, opts Options, each func(doc []byte, n int) error) (int, error) {
	db, coll := opts.DB, opts.Coll
	if db == "" {
		db = Database(uri)
	}

	if db == "" {
		return 0, ErrNoDatabase
	}

	if coll == "" {
		coll = Collection
	}

	client, err := targets.Connect(ctx, uri, opts.Connect)
	if err != nil {
		return 0, err
	}

	defer func() { _ = client.Disconnect(context.WithoutCancel(ctx)) }()

	return read(ctx, client.Database(db), coll, each)
}

func read(ctx context.Context, db *mongo.Database, coll string, each func(doc []byte, n int) error) (int, error) {
	names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: coll}})
	if err != nil {
		return 0, fmt.Errorf("listing the collections of %s: %w", db.Name(), err)
	}

	if len(names) == 0 {
		return 0, &MissingError{DB: db.Name(), Coll: coll}
	}

	cur, err := db.Collection(coll).Find(ctx, bson.D{})
	if err != nil {
		return 0, fmt.Errorf("reading %s.%s: %w", db.Name(), coll, err)
	}

	defer func() { _ = cur.Close(context.WithoutCancel(ctx)) }()

	n := 0

	for cur.Next(ctx) {
		n++

		doc, err := extJSON(cur.Current)
		if err != nil {
			return n, fmt.Errorf("%s.%s document %d: %w", db.Name(), coll, n, err)
		}

		if err := each(doc, n); err != nil {
			return n, err
		}
	}

	if err := cur.Err(); err != nil {
		return n, fmt.Errorf("reading %s.%s: %w", db.Name(), coll, err)
	}

	return n, nil
}

// extJSON writes a document as relaxed extended JSON, as mongod's log
// writes its attributes.
func extJSON(doc bson.Raw) ([]byte, error) {
	return bson.MarshalExtJSON(doc, false, false)
}
