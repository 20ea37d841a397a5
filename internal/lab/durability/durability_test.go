package durability_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/mongobench/mongobench/internal/lab/durability"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// nullServer is the wire-protocol test server as a crashable server: it
// acknowledges every insert and keeps nothing, so that after a "crash"
// every acknowledged document is missing. It is the positive control of
// the counter: a check that cannot find losses would pass it.
type nullServer struct {
	t     *testing.T
	mu    sync.Mutex
	srv   *wiretest.Server
	kills int
}

func startNull(t *testing.T) *nullServer {
	t.Helper()

	n := &nullServer{t: t}
	if err := n.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() {
		n.mu.Lock()
		defer n.mu.Unlock()

		_ = n.srv.Close()
	})

	return n
}

func (n *nullServer) URI() string {
	n.mu.Lock()
	defer n.mu.Unlock()

	return n.srv.URI()
}

func (n *nullServer) Kill() error {
	n.mu.Lock()
	defer n.mu.Unlock()

	n.kills++

	return n.srv.Close()
}

func (n *nullServer) Restart(context.Context) error {
	srv, err := wiretest.Start(wiretest.Config{})
	if err != nil {
		return err
	}

	n.mu.Lock()
	n.srv = srv
	n.mu.Unlock()

	return nil
}

func TestCheckFindsEveryLossOfAServerThatKeepsNothing(t *testing.T) {
	srv := startNull(t)

	got, err := durability.Check(t.Context(), srv, durability.Config{
		Database: "db", Collection: "c", Documents: 1000, BatchSize: 50, Writers: 3,
	})
	if err != nil {
		t.Fatal(err)
	}

	if srv.kills != 1 {
		t.Errorf("the server was killed %d times, want 1", srv.kills)
	}

	if got.Acknowledged < 1000 || got.Acknowledged%50 != 0 {
		t.Errorf("Acknowledged = %d, want at least 1000 in whole batches of 50", got.Acknowledged)
	}

	if got.Lost != got.Acknowledged || got.Present != 0 {
		t.Errorf("Lost = %d, Present = %d of %d acknowledged; a server that keeps nothing loses them all",
			got.Lost, got.Present, got.Acknowledged)
	}
}

// restartable is the embedded FerretDB on a data directory of its own:
// "Kill" stops it (an orderly stop, not a crash) and Restart starts it on
// the same files, so every acknowledged document must be found again.
type restartable struct {
	dir string
	mu  sync.Mutex
	e   *targets.Embedded
}

func (r *restartable) URI() string {
	r.mu.Lock()
	defer r.mu.Unlock()

	return r.e.URI()
}

func (r *restartable) Kill() error {
	r.mu.Lock()
	defer r.mu.Unlock()

	return r.e.Close()
}

func (r *restartable) Restart(ctx context.Context) error {
	e, err := targets.StartEmbedded(ctx, targets.EmbeddedOptions{DataDir: r.dir})
	if err != nil {
		return err
	}

	r.mu.Lock()
	r.e = e
	r.mu.Unlock()

	return nil
}

func TestCheckFindsEveryDocumentAServerKept(t *testing.T) {
	r := &restartable{dir: t.TempDir()}
	if err := r.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = r.Kill() })

	got, err := durability.Check(t.Context(), r, durability.Config{
		Database: "db", Collection: "c", Documents: 600, BatchSize: 100, Writers: 2,
	})
	if err != nil {
		t.Fatal(err)
	}

	if got.Acknowledged < 600 || got.Lost != 0 {
		t.Errorf("Acknowledged = %d, Lost = %d; want at least 600 and none lost", got.Acknowledged, got.Lost)
	}

	if got.Present != got.Acknowledged+got.UnacknowledgedPresent {
		t.Errorf("Present = %d, want the %d acknowledged plus the %d unacknowledged ones found",
			got.Present, got.Acknowledged, got.UnacknowledgedPresent)
	}

	// The data directory was the caller's and is still there.
	if _, err := os.Stat(r.dir); err != nil {
		t.Error(err)
	}
}

func TestCheckRefusesAnEmptyConfig(t *testing.T) {
	if _, err := durability.Check(t.Context(), startNull(t), durability.Config{Database: "db", Collection: "c"}); err == nil {
		t.Error("Check with no documents, batch size or writers succeeded")
	}
}
