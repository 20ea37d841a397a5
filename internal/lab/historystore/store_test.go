package historystore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/analysis/history"
	"github.com/mongobench/mongobench/internal/lab/historystore"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/embeddedtest"
)

// client connects to uri as a user would look at the store.
func client(t *testing.T, uri string) *mongo.Client {
	t.Helper()

	c, err := targets.Connect(t.Context(), uri, targets.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })

	return c
}

// writeRuns writes n results files to dir, as run writes them (WriteFile),
// from the result package's golden run, each started an hour after the
// previous and labelled, and returns their paths.
func writeRuns(t *testing.T, dir string, n int) []string {
	t.Helper()

	base, err := result.Read(t.Context(), "../../results/result/testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}

	var paths []string

	for i := range n {
		r := *base
		r.StartedAt = base.StartedAt.Add(time.Duration(i) * time.Hour)
		r.Label = "v" + string(rune('a'+i))
		p := filepath.Join(dir, "run-"+string(rune('a'+i))+".json")

		if err := result.WriteFile(p, &r); err != nil {
			t.Fatal(err)
		}

		paths = append(paths, p)
	}

	return paths
}

func open(t *testing.T, uri, db string, create bool) *historystore.Store {
	t.Helper()

	s, err := historystore.Open(t.Context(), uri, db, create)
	if err != nil {
		t.Fatalf("Open(%s, create %v): %v", db, create, err)
	}

	t.Cleanup(func() { _ = s.Close(context.Background()) })

	return s
}

// addAll adds the files at paths, returning how many were new and how many
// present.
func addAll(t *testing.T, s *historystore.Store, paths []string) (added, present int) {
	t.Helper()

	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}

		ok, err := s.Add(t.Context(), p, data)
		if err != nil {
			t.Fatalf("Add %s: %v", p, err)
		}

		if ok {
			added++
		} else {
			present++
		}
	}

	return added, present
}

// TestStore runs the store's contract against the embedded FerretDB.
func TestStore(t *testing.T) {
	t.Parallel()

	testStore(t, embeddedtest.Start(t, targets.EmbeddedOptions{ShutdownTimeout: 5 * time.Second}).URI())
}

// testStore is the store's contract against the server at uri: an empty
// database becomes a store with its marker and runs collection; a run is
// stored as the bytes run wrote, once however often it is imported, and
// read back by result.ReadAll as the file is; reading an empty database
// creates nothing; a database holding anything else is refused and left
// as it was.
func testStore(t *testing.T, uri string) {
	dir := t.TempDir()
	paths := writeRuns(t, dir, 3)
	c := client(t, uri)

	t.Run("idempotent import, content as written", func(t *testing.T) {
		s := open(t, uri, "hist_idem", true)

		if added, present := addAll(t, s, paths); added != 3 || present != 0 {
			t.Fatalf("first import: added %d, present %d; want 3, 0", added, present)
		}

		if added, present := addAll(t, s, paths); added != 0 || present != 3 {
			t.Fatalf("second import: added %d, present %d; want 0, 3", added, present)
		}

		// The same file under another name is the same run.
		data, err := os.ReadFile(paths[0])
		if err != nil {
			t.Fatal(err)
		}

		if ok, err := s.Add(t.Context(), "elsewhere/copy.json", data); err != nil || ok {
			t.Errorf("a copy of an imported file under another name: added %v, %v; want not added", ok, err)
		}

		coll := c.Database("hist_idem").Collection(historystore.RunsCollection)

		n, err := coll.CountDocuments(t.Context(), bson.D{})
		if err != nil || n != 3 {
			t.Fatalf("runs in the store: %d (%v), want 3", n, err)
		}

		var doc struct {
			ID      string `bson:"_id"`
			Results string `bson:"results"`
		}
		if err := coll.FindOne(t.Context(), bson.D{{Key: "name", Value: paths[0]}}).Decode(&doc); err != nil {
			t.Fatal(err)
		}

		if !bytes.Equal([]byte(doc.Results), data) {
			t.Errorf("stored results differ from the file run wrote (%d bytes stored, %d in the file)", len(doc.Results), len(data))
		}

		if doc.ID != historystore.RunID(data) {
			t.Errorf("run id %s, want the digest of the file %s", doc.ID, historystore.RunID(data))
		}

		names, err := c.Database("hist_idem").ListCollectionNames(t.Context(), bson.D{})
		if err != nil {
			t.Fatal(err)
		}

		slices.Sort(names)

		if want := []string{historystore.MarkerCollection, historystore.RunsCollection}; !slices.Equal(names, want) {
			t.Errorf("collections of a new store: %q, want %q", names, want)
		}

		// Reopened, it is a store.
		s2 := open(t, uri, "hist_idem", true)
		if added, present := addAll(t, s2, paths[:1]); added != 0 || present != 1 {
			t.Errorf("import into the reopened store: added %d, present %d; want 0, 1", added, present)
		}
	})

	t.Run("read back as files are read", func(t *testing.T) {
		s := open(t, uri, "hist_read", true)
		addAll(t, s, paths)

		fromStore, _, err := history.Load(t.Context(), s)
		if err != nil {
			t.Fatal(err)
		}

		fromFiles, _, err := history.Load(t.Context(), history.Files{Paths: []string{dir}})
		if err != nil {
			t.Fatal(err)
		}

		sortRuns := func(rs []history.Run) {
			slices.SortFunc(rs, func(a, b history.Run) int { return a.StartedAt.Compare(b.StartedAt) })
		}
		sortRuns(fromStore)
		sortRuns(fromFiles)

		if len(fromStore) != 3 || len(fromFiles) != 3 {
			t.Fatalf("runs: %d from the store, %d from the files; want 3 each", len(fromStore), len(fromFiles))
		}

		for i := range fromStore {
			a, b := fromStore[i], fromFiles[i]
			if a.File != b.File || a.Label != b.Label || !a.StartedAt.Equal(b.StartedAt) {
				t.Errorf("run %d: from the store %+v, from the files %+v", i, a, b)
			}
		}
	})

	t.Run("reading an empty database creates nothing", func(t *testing.T) {
		s := open(t, uri, "hist_empty", false)

		runs, skipped, err := history.Load(t.Context(), s)
		if err != nil || len(runs) != 0 || len(skipped) != 0 {
			t.Fatalf("history of an empty database: %d runs, %d skipped, %v", len(runs), len(skipped), err)
		}

		names, err := c.Database("hist_empty").ListCollectionNames(t.Context(), bson.D{})
		if err != nil || len(names) != 0 {
			t.Errorf("reading created collections %q (%v)", names, err)
		}
	})

	t.Run("a foreign database is refused and left alone", func(t *testing.T) {
		foreign := c.Database("hist_foreign")
		if _, err := foreign.Collection("orders").InsertOne(t.Context(), bson.D{{Key: "_id", Value: 1}}); err != nil {
			t.Fatal(err)
		}

		// A collection named like the marker's, without the marker, does
		// not make a database a store either.
		fake := c.Database("hist_fake")
		if _, err := fake.Collection(historystore.MarkerCollection).InsertOne(t.Context(), bson.D{{Key: "_id", Value: "other"}}); err != nil {
			t.Fatal(err)
		}

		for _, db := range []string{"hist_foreign", "hist_fake"} {
			for _, create := range []bool{true, false} {
				_, err := historystore.Open(t.Context(), uri, db, create)
				if !errors.Is(err, historystore.ErrNotAStore) || !historystore.IsInputError(err) {
					t.Errorf("Open(%s, create %v) = %v, want ErrNotAStore as input error", db, create, err)
				}
			}
		}

		for db, want := range map[string][]string{"hist_foreign": {"orders"}, "hist_fake": {historystore.MarkerCollection}} {
			names, err := c.Database(db).ListCollectionNames(t.Context(), bson.D{})
			if err != nil || !slices.Equal(names, want) {
				t.Errorf("%s after the refusals: collections %q (%v), want %q", db, names, err, want)
			}
		}

		n, err := fake.Collection(historystore.MarkerCollection).CountDocuments(t.Context(), bson.D{})
		if err != nil || n != 1 {
			t.Errorf("%s: %d documents (%v), want the 1 it had", historystore.MarkerCollection, n, err)
		}
	})
}

func TestDatabase(t *testing.T) {
	t.Parallel()

	for _, c := range []struct {
		uri, db, want string
		bad           bool
	}{
		{uri: "mongodb://h/", want: historystore.DefaultDatabase},
		{uri: "mongodb://h", want: historystore.DefaultDatabase},
		{uri: "mongodb://h/team", want: "team"},
		{uri: "mongodb://h/", db: "team", want: "team"},
		{uri: "mongodb://h/team", db: "team", want: "team"},
		{uri: "mongodb://h/team", db: "other", bad: true},
		{uri: "mongodb://h/admin", bad: true},
		{uri: "mongodb://h/", db: "a.b", bad: true},
	} {
		got, err := historystore.Database(c.uri, c.db)

		switch {
		case c.bad && (err == nil || !historystore.IsInputError(err)):
			t.Errorf("Database(%q, %q) = %q, %v; want an input error", c.uri, c.db, got, err)
		case !c.bad && (err != nil || got != c.want):
			t.Errorf("Database(%q, %q) = %q, %v; want %q", c.uri, c.db, got, err, c.want)
		}
	}
}
