package targets

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestEmbeddedFileBacked(t *testing.T) {
	parent := t.TempDir()

	e, err := StartEmbedded(t.Context(), EmbeddedOptions{TempDir: parent})
	if err != nil {
		t.Fatal(err)
	}

	u, err := url.Parse(e.URI())
	if err != nil {
		t.Fatalf("URI %q: %v", e.URI(), err)
	}

	if u.Scheme != "mongodb" || u.Hostname() != "127.0.0.1" || u.Port() == "" || u.Port() == "0" {
		t.Errorf("URI = %q, want mongodb://127.0.0.1:<ephemeral port>/", e.URI())
	}

	if filepath.Dir(e.Dir()) != parent {
		t.Errorf("Dir = %q, want a directory under %q", e.Dir(), parent)
	}

	if e.Memory() || e.MaxPoolSize() != 0 {
		t.Errorf("Memory = %v, MaxPoolSize = %d; want false, 0", e.Memory(), e.MaxPoolSize())
	}

	desc := e.Description()
	for _, want := range []string{"embedded FerretDB", "SQLite, file-backed", e.Dir(), e.FerretDBVersion()} {
		if !strings.Contains(desc, want) {
			t.Errorf("Description = %q, want it to contain %q", desc, want)
		}
	}

	client, err := Connect(t.Context(), e.URI(), ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if _, err := client.Database("bench").Collection("items").InsertOne(t.Context(), bson.D{{Key: "n", Value: 1}}); err != nil {
		t.Fatal(err)
	}

	if _, err := os.Stat(filepath.Join(e.Dir(), "bench.sqlite")); err != nil {
		t.Errorf("database file not in data directory: %v", err)
	}

	if err := client.Disconnect(t.Context()); err != nil {
		t.Fatal(err)
	}

	// Close returns an error when the server did not stop within the
	// shutdown timeout, so nil means it stopped by itself.
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	assertNoDir(t, e.Dir())
	assertEmptyDir(t, parent)

	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	select {
	case <-e.Done():
	default:
		t.Error("Done not closed after Close")
	}

	// The server is really gone.
	_, err = Connect(t.Context(), e.URI(), ConnectOptions{Timeout: 500 * time.Millisecond})

	var ce *ConnectError
	if !errors.As(err, &ce) || !ce.Unreachable {
		t.Errorf("Connect after Close: got %v, want an unreachable *ConnectError", err)
	}
}

func TestEmbeddedMemoryOneConnection(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{Memory: true})

	if !e.Memory() {
		t.Error("Memory = false")
	}

	if desc := e.Description(); !strings.Contains(desc, "SQLite, in-memory") {
		t.Errorf("Description = %q, want it to mention in-memory SQLite", desc)
	}

	if len(e.Notes()) == 0 {
		t.Error("Notes empty for in-memory mode")
	}

	var (
		mu      sync.Mutex
		created int
	)

	monitor := &event.PoolMonitor{Event: func(ev *event.PoolEvent) {
		if ev.Type == event.ConnectionCreated {
			mu.Lock()
			created++
			mu.Unlock()
		}
	}}

	client, err := mongo.Connect(options.Client().ApplyURI(e.URI()).SetMaxPoolSize(1).SetPoolMonitor(monitor))
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })

	coll := client.Database("bench").Collection("items")

	for i := range 50 {
		if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: i}, {Key: "even", Value: i%2 == 0}}); err != nil {
			t.Fatal(err)
		}
	}

	// Small batches make the server keep a cursor between getMores.
	cur, err := coll.Find(t.Context(), bson.D{{Key: "even", Value: true}}, options.Find().SetBatchSize(3))
	if err != nil {
		t.Fatal(err)
	}

	var docs []bson.M
	if err := cur.All(t.Context(), &docs); err != nil {
		t.Fatal(err)
	}

	if len(docs) != 25 {
		t.Errorf("found %d documents, want 25", len(docs))
	}

	if _, err := coll.DeleteMany(t.Context(), bson.D{{Key: "even", Value: false}}); err != nil {
		t.Fatal(err)
	}

	upsert := options.UpdateOne().SetUpsert(true)
	if _, err := coll.UpdateOne(t.Context(), bson.D{{Key: "_id", Value: 1000}}, bson.D{{Key: "$set", Value: bson.D{{Key: "even", Value: true}}}}, upsert); err != nil {
		t.Fatal(err)
	}

	n, err := coll.CountDocuments(t.Context(), bson.D{})
	if err != nil || n != 26 {
		t.Errorf("CountDocuments = %d, %v; want 26", n, err)
	}

	mu.Lock()
	if created != 1 {
		t.Errorf("client opened %d pooled connections, want 1", created)
	}
	mu.Unlock()

	// Nothing touches the disk in memory mode.
	assertNoData(t, e.Dir())
}

// TestEmbeddedMemoryOpenCursor shows why Embedded.MaxPoolSize does not cap
// the pool in memory mode: an operation that has to wait for another
// goroutine's open cursor must not also take the connection that cursor's
// getMore needs.
func TestEmbeddedMemoryOpenCursor(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{Memory: true})

	// The command monitor says when the insert below has taken a
	// connection and is being sent: from then on it queues behind the
	// cursor on the server.
	var armed sync.Once

	sent := make(chan struct{})
	waiting := make(chan struct{})
	monitor := &event.CommandMonitor{Started: func(_ context.Context, ev *event.CommandStartedEvent) {
		if ev.CommandName != "insert" {
			return
		}

		select {
		case <-waiting:
			armed.Do(func() { close(sent) })
		default:
		}
	}}

	client, err := mongo.Connect(options.Client().ApplyURI(e.URI()).SetMaxPoolSize(e.MaxPoolSize()).SetMonitor(monitor))
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	coll := client.Database("bench").Collection("items")

	for i := range 10 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}

	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetBatchSize(2))
	if err != nil {
		t.Fatal(err)
	}

	if !cur.Next(ctx) {
		t.Fatalf("first document: %v", cur.Err())
	}

	inserted := make(chan error, 1)

	close(waiting)

	go func() {
		_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 100}})
		inserted <- err
	}()

	// The insert has been sent and queues behind the cursor.
	select {
	case <-sent:
	case err := <-inserted:
		t.Fatalf("insert returned before the cursor was read: %v", err)
	}

	n := 1
	for cur.Next(ctx) {
		n++
	}

	if err := cur.Err(); err != nil || n < 10 {
		t.Errorf("cursor read %d documents, error %v; want at least 10, nil", n, err)
	}

	if err := <-inserted; err != nil {
		t.Errorf("insert behind the open cursor: %v", err)
	}
}

// TestEmbeddedMemoryUpdateDeadlock pins down the FerretDB v1.24 limitation
// documented on EmbeddedOptions.Memory: an update that modifies a document
// never completes in memory mode, but does in a file-backed server. If a
// FerretDB upgrade fixes it, this test fails and the documentation and
// Notes should be updated.
func TestEmbeddedMemoryUpdateDeadlock(t *testing.T) {
	for _, memory := range []bool{false, true} {
		name := map[bool]string{false: "file-backed", true: "in-memory"}[memory]

		t.Run(name, func(t *testing.T) {
			e := startEmbedded(t, EmbeddedOptions{Memory: memory})
			client := connect(t, e)
			coll := client.Database("bench").Collection("items")

			if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: 1}}); err != nil {
				t.Fatal(err)
			}

			// In memory the update never completes, however long it is
			// given, so a second is enough to see it hang; a file-backed
			// update gets the test's own deadline, so a slow machine
			// cannot fail it.
			ctx := t.Context()
			if memory {
				var cancel context.CancelFunc

				ctx, cancel = context.WithTimeout(ctx, time.Second)
				defer cancel()
			}

			_, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}})

			switch {
			case !memory && err != nil:
				t.Errorf("update on file-backed server: %v", err)
			case memory && err == nil:
				t.Error("update on in-memory server succeeded; FerretDB fixed the deadlock, update EmbeddedOptions.Memory and Embedded.Notes")
			case memory && !errors.Is(err, context.DeadlineExceeded):
				t.Errorf("update on in-memory server: got %v, want a timeout", err)
			}
		})
	}
}

func TestEmbeddedCloseConcurrent(t *testing.T) {
	parent := t.TempDir()

	e, err := StartEmbedded(t.Context(), EmbeddedOptions{TempDir: parent})
	if err != nil {
		t.Fatal(err)
	}

	// A client left connected, as after an interrupted run.
	client, err := Connect(t.Context(), e.URI(), ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })

	var wg sync.WaitGroup

	errs := make(chan error, 8)
	for range 4 {
		wg.Go(func() { errs <- e.Close() })
		wg.Go(func() { errs <- e.RemoveDir() })
	}

	wg.Wait()
	close(errs)

	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}

	assertNoDir(t, e.Dir())
	assertEmptyDir(t, parent)
}

func TestEmbeddedRemoveDirFastPath(t *testing.T) {
	parent := t.TempDir()

	e, err := StartEmbedded(t.Context(), EmbeddedOptions{TempDir: parent})
	if err != nil {
		t.Fatal(err)
	}

	client, err := Connect(t.Context(), e.URI(), ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })

	if _, err := client.Database("bench").Collection("items").InsertOne(t.Context(), bson.D{}); err != nil {
		t.Fatal(err)
	}

	// RemoveDir does not wait for the connected client to go away (it
	// never waits on Done); the server still stops, below.
	if err := e.RemoveDir(); err != nil {
		t.Fatal(err)
	}

	assertNoDir(t, e.Dir())

	select {
	case <-e.Done():
	case <-time.After(DefaultShutdownTimeout):
		t.Error("server did not stop after RemoveDir")
	}

	if err := e.Close(); err != nil {
		t.Errorf("Close after RemoveDir: %v", err)
	}

	assertEmptyDir(t, parent)
}

func TestStartEmbeddedErrors(t *testing.T) {
	t.Run("canceled context", func(t *testing.T) {
		parent := t.TempDir()

		ctx, cancel := context.WithCancel(t.Context())
		cancel()

		if _, err := StartEmbedded(ctx, EmbeddedOptions{TempDir: parent}); !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}

		assertEmptyDir(t, parent)
	})

	t.Run("URI-hostile directory", func(t *testing.T) {
		parent := filepath.Join(t.TempDir(), "what?")
		if err := os.Mkdir(parent, 0o700); err != nil {
			t.Fatal(err)
		}

		if _, err := StartEmbedded(t.Context(), EmbeddedOptions{TempDir: parent}); err == nil {
			t.Error("StartEmbedded accepted a directory with '?'")
		}

		assertEmptyDir(t, parent)
	})

	t.Run("missing directory", func(t *testing.T) {
		if _, err := StartEmbedded(t.Context(), EmbeddedOptions{TempDir: filepath.Join(t.TempDir(), "missing")}); err == nil {
			t.Error("StartEmbedded accepted a missing parent directory")
		}
	})
}

func TestEmbeddedAnnotate(t *testing.T) {
	e := &Embedded{version: "v1.24.0"}

	got := e.Annotate(ServerInfo{Product: ProductFerretDB, Version: "7.0.42"})
	if got.FerretDBVersion != "v1.24.0" || got.Backend != "SQLite" {
		t.Errorf("Annotate = %+v, want FerretDB v1.24.0 on SQLite", got)
	}

	mongo := ServerInfo{Product: ProductMongoDB, Version: "8.0.4"}
	if got := e.Annotate(mongo); got.FerretDBVersion != "" || got.Backend != "" {
		t.Errorf("Annotate changed a MongoDB description: %+v", got)
	}
}
