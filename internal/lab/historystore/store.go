// Package historystore keeps a history of runs in a MongoDB database that a
// team shares, so that a CI fleet and a laptop see the same series: one
// document per run, holding the run's results file as run wrote it. The
// results file stays the unit of exchange: what is stored is the file's
// content, and what is read back is read by result.ReadAll, as files are.
//
// mongobench touches only databases it verifiably owns: a store is created
// only in an empty database, marked by a document of its own, and a
// database holding anything else is refused. Nothing is ever dropped,
// updated or overwritten; a run is only ever inserted.
package historystore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets"
)

const (
	// DefaultDatabase is the store's database when neither the URI's path
	// nor the caller names one.
	DefaultDatabase = "mongobench_history"
	// RunsCollection holds one document per run, its _id the run id.
	RunsCollection = "runs"
	// MarkerCollection holds the one document that marks a database as a
	// store; its name is mongobench's, as targets.MarkerCollection is.
	MarkerCollection = "mongobench.history"
	// MaxFileBytes is the largest results file the store takes: a run is
	// one document, and a document is at most 16 MiB.
	MaxFileBytes = 15 << 20
)

// markerID, markerTool and markerKind are the marker document's _id and
// what it says it is.
const (
	markerID     = "store"
	markerTool   = "mongobench"
	markerKind   = "history store"
	markerFormat = 1
)

// ErrNotAStore is wrapped by the error about a database that is neither
// empty nor a store: mongobench does not write into it.
var ErrNotAStore = errors.New("not a mongobench history store")

// InputError is an error the user must fix, not a failure: a store URI or
// database that cannot be used, or a database that is not a store.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the error, for errors.Is(err, ErrNotAStore).
func (e *InputError) Unwrap() error { return e.Err }

// IsInputError says err is the user's to fix (an *InputError, or a URI
// that Connect refused as malformed).
func IsInputError(err error) bool {
	var (
		ie *InputError
		ue *targets.URIError
	)

	return errors.As(err, &ie) || errors.As(err, &ue)
}

// Store is an open history store. Close it when done.
type Store struct {
	client *mongo.Client
	db     *mongo.Database
	uri    string // the connection string, for scrubbing driver errors
	name   string // redacted URI and database, for messages
	exists bool   // the database is a store (false: empty, nothing created)
}

// Database is the store's database: db when not empty, else the one the
// URI's path names, else DefaultDatabase. Both given and different is an
// error, as is a system database.
func Database(uri, db string) (string, error) {
	cs, err := connstring.Parse(uri)
	if err != nil {
		return "", &InputError{fmt.Errorf("store URI %s: %s", redact.URI(uri), redact.Error(err, uri))}
	}

	name := cmpOr(db, cs.Database, DefaultDatabase)

	switch {
	case db != "" && cs.Database != "" && db != cs.Database:
		return "", &InputError{fmt.Errorf("--store-db %q and the store URI's database %q differ; name one", db, cs.Database)}
	case targets.IsSystemDatabase(name):
		return "", &InputError{fmt.Errorf("store database %q is a system database; name another", name)}
	case strings.ContainsAny(name, "/\\. \"$\x00") || len(name) > 63:
		return "", &InputError{fmt.Errorf("store database %q: not a valid database name", name)}
	}

	return name, nil
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}

	return ""
}

// Open connects to the store in database db (see Database) at uri. With
// create, an empty database becomes a store (its marker, and the runs
// collection, whose _id index is the index on run ids); without, an
// empty database is read as a store without runs and nothing is created. A
// database that holds collections and no store marker is refused
// (ErrNotAStore). Errors never hold the URI's password.
func Open(ctx context.Context, uri, db string, create bool) (*Store, error) {
	// A bad database name is said before any server is reached. A URI
	// that does not parse, or that the driver would misread, is left to
	// Connect, whose message holds no part of the password.
	if !redact.Ambiguous(uri) {
		if _, err := connstring.Parse(uri); err == nil {
			if _, err := Database(uri, db); err != nil {
				return nil, err
			}
		}
	}

	client, err := targets.Connect(ctx, uri, targets.ConnectOptions{})
	if err != nil {
		return nil, err
	}

	name, err := Database(uri, db)
	if err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}

	s := &Store{client: client, db: client.Database(name), uri: uri, name: fmt.Sprintf("database %q at %s", name, redact.URI(uri))}

	if err := s.claim(ctx, create); err != nil {
		_ = s.Close(context.WithoutCancel(ctx))
		return nil, err
	}

	return s, nil
}

// Name is the store for messages: its redacted URI and database.
func (s *Store) Name() string { return s.name }

// Close disconnects.
func (s *Store) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()

	return s.client.Disconnect(ctx)
}

// marker is the store's marker document.
type marker struct {
	ID        string    `bson:"_id"`
	Tool      string    `bson:"tool"`
	Kind      string    `bson:"kind"`
	Format    int       `bson:"format"`
	CreatedAt time.Time `bson:"created_at"`
}

// claim checks that the database is a store, or empty; with create, an
// empty one is made a store.
func (s *Store) claim(ctx context.Context, create bool) error {
	names, err := s.db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return s.errorf("list the collections of %s: %w", s.name, err)
	}

	names = slices.DeleteFunc(names, func(n string) bool { return strings.HasPrefix(n, "system.") })

	if slices.Contains(names, MarkerCollection) {
		var m marker

		err := s.db.Collection(MarkerCollection).FindOne(ctx, bson.D{{Key: "_id", Value: markerID}}).Decode(&m)

		switch {
		case errors.Is(err, mongo.ErrNoDocuments) || (err == nil && (m.Tool != markerTool || m.Kind != markerKind)):
			return &InputError{fmt.Errorf("%s: %w: its %s collection holds no store marker", s.name, ErrNotAStore, MarkerCollection)}
		case err != nil:
			return s.errorf("read the store marker of %s: %w", s.name, err)
		case m.Format != markerFormat:
			return fmt.Errorf("%s is a history store of format %d; this mongobench reads format %d", s.name, m.Format, markerFormat)
		}

		s.exists = true

		if create {
			return s.createRuns(ctx)
		}

		return nil
	}

	if len(names) > 0 {
		slices.Sort(names)

		return &InputError{fmt.Errorf("%s: %w: it holds other collections (%s); name an empty database or a store (--store-db)",
			s.name, ErrNotAStore, strings.Join(names, ", "))}
	}

	if !create {
		return nil
	}

	m := marker{ID: markerID, Tool: markerTool, Kind: markerKind, Format: markerFormat, CreatedAt: time.Now().UTC()}
	if _, err := s.db.Collection(MarkerCollection).InsertOne(ctx, m); err != nil && !mongo.IsDuplicateKeyError(err) {
		// A duplicate is another mongobench creating the store at the
		// same moment.
		return s.errorf("create the store marker in %s: %w", s.name, err)
	}

	s.exists = true

	return s.createRuns(ctx)
}

// createRuns creates the runs collection unless it exists.
func (s *Store) createRuns(ctx context.Context) error {
	err := s.db.CreateCollection(ctx, RunsCollection)

	var ce mongo.CommandError
	if err == nil || (errors.As(err, &ce) && (ce.Code == 48 || ce.Name == "NamespaceExists")) {
		return nil
	}

	return s.errorf("create the %s collection in %s: %w", RunsCollection, s.name, err)
}

// errorf is fmt.Errorf with the driver's error scrubbed of the URI's
// password.
func (s *Store) errorf(format string, args ...any) error {
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = scrubbed{msg: redact.Error(err, s.uri), err: err}
		}
	}

	return fmt.Errorf(format, args...)
}

// scrubbed is a driver error whose message holds no password.
type scrubbed struct {
	msg string
	err error
}

func (e scrubbed) Error() string { return e.msg }
func (e scrubbed) Unwrap() error { return e.err }

// runDoc is one run in the store.
type runDoc struct {
	// ID is the run id: "sha256:" and the SHA-256 of Results. A results
	// file holds no id of its own, and its content is what identifies it:
	// the same file imported twice, from anywhere, is one run.
	ID string `bson:"_id"`
	// Name is the file's path as it was imported, what history shows.
	Name string `bson:"name"`
	// Results is the results file, byte for byte (masked: result.Clean).
	Results string `bson:"results"`
	// The rest repeats what the file says, for people who query the store.
	Workload   string    `bson:"workload"`
	Target     string    `bson:"target"`
	StartedAt  time.Time `bson:"started_at"`
	Label      string    `bson:"label,omitempty"`
	Commit     string    `bson:"commit,omitempty"`
	ImportedAt time.Time `bson:"imported_at"`
}

// RunID is the id of the run whose results file content is data.
func RunID(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Add stores the run of the results file named name, whose content is
// data: it is masked (result.Clean) and must be a results file (as
// result.Parse reads it). added is false when the store has the run
// already; nothing is ever overwritten.
func (s *Store) Add(ctx context.Context, name string, data []byte) (added bool, err error) {
	clean, err := result.Clean(data)
	if err != nil {
		return false, fmt.Errorf("%s: %w", name, err)
	}

	if len(clean) > MaxFileBytes {
		return false, fmt.Errorf("%s: %d MiB; the store takes results files up to %d MiB (one document each)", name, len(clean)>>20, MaxFileBytes>>20)
	}

	res, err := result.Parse(name, clean)
	if err != nil {
		return false, err
	}

	doc := runDoc{
		ID: RunID(clean), Name: name, Results: string(clean),
		Workload: res.Workload.Name, Target: res.Target.Kind, StartedAt: res.StartedAt.UTC(),
		Label: res.Label, Commit: res.Commit, ImportedAt: time.Now().UTC(),
	}

	_, err = s.db.Collection(RunsCollection).InsertOne(ctx, doc)

	switch {
	case err == nil:
		return true, nil
	case mongo.IsDuplicateKeyError(err):
		return false, nil
	default:
		return false, s.errorf("store %s in %s: %w", name, s.name, err)
	}
}

// Results reads every run of the store with result.ReadAll, each named by
// the file it was imported from (and its run id when two share a name).
// The Arg of every file and error is the store, so that history skips a
// run that cannot be read, as it skips a file in a directory.
func (s *Store) Results(ctx context.Context) (*result.Files, error) {
	if !s.exists {
		return &result.Files{}, nil
	}

	cur, err := s.db.Collection(RunsCollection).Find(ctx, bson.D{},
		options.Find().SetProjection(bson.D{{Key: "name", Value: 1}, {Key: "results", Value: 1}}).SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, s.errorf("read the runs of %s: %w", s.name, err)
	}

	var docs []runDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, s.errorf("read the runs of %s: %w", s.name, err)
	}

	count := map[string]int{}
	for _, d := range docs {
		count[d.Name]++
	}

	content := make(map[string][]byte, len(docs))
	keys := make([]string, 0, len(docs))

	for _, d := range docs {
		key := d.Name
		if count[d.Name] > 1 || key == "" {
			key = strings.TrimSpace(d.Name + " [" + d.ID + "]")
		}

		content[key] = []byte(d.Results)
		keys = append(keys, key)
	}

	files, err := result.ReadAll(ctx, keys, result.ReadOptions{
		AllowEmpty: true,
		Read: func(_ context.Context, key string) (*result.Result, error) {
			return result.Parse(key, content[key])
		},
	})
	if err != nil {
		return nil, err
	}

	for i := range files.Files {
		files.Files[i].Arg = s.name
	}

	for _, e := range files.Errors {
		var fe *result.FileError
		if errors.As(e, &fe) {
			fe.Arg = s.name
		}
	}

	return files, nil
}
