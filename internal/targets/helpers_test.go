package targets

import (
	"context"
	"os"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/base/tempdir"
)

// startEmbedded starts an embedded FerretDB under a per-test parent
// directory and closes it when the test ends, failing the test if Close
// fails or leaves anything behind.
func startEmbedded(t *testing.T, opts EmbeddedOptions) *Embedded {
	t.Helper()

	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	e, err := StartEmbedded(ctx, opts)
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}

	parent := opts.TempDir

	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}

		assertEmptyDir(t, parent)
	})

	return e
}

// connect connects to e the way the CLI does and disconnects when the test
// ends (before the server is closed, as cleanups run last-in first-out).
func connect(t *testing.T, e *Embedded) *mongo.Client {
	t.Helper()

	client, err := Connect(t.Context(), e.URI(), ConnectOptions{MaxPoolSize: e.MaxPoolSize()})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}

	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()

		if err := client.Disconnect(ctx); err != nil {
			t.Errorf("Disconnect: %v", err)
		}
	})

	return client
}

// assertEmptyDir fails the test unless dir exists and is empty.
func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Errorf("read %s: %v", dir, err)
		return
	}

	for _, e := range entries {
		t.Errorf("%s: left behind: %s", dir, e.Name())
	}
}

// assertNoData fails the test unless the server directory dir exists and
// holds nothing but its owner mark.
func assertNoData(t *testing.T, dir string) {
	t.Helper()

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Errorf("read %s: %v", dir, err)
		return
	}

	for _, e := range entries {
		if e.Name() != tempdir.MarkFile {
			t.Errorf("%s: holds data: %s", dir, e.Name())
		}
	}
}

// assertNoDir fails the test if dir still exists.
func assertNoDir(t *testing.T, dir string) {
	t.Helper()

	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists (stat error: %v)", dir, err)
	}
}

// testKey is a fixed owner key, so that tests never touch the user's.
func testKey(t *testing.T) *OwnerKey {
	t.Helper()

	k, err := NewOwnerKey([]byte("mongobench test owner key 32 by."))
	if err != nil {
		t.Fatal(err)
	}

	return k
}
