package targets

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/targets/pglaunch/pglaunchtest"
)

// serveChildEnv makes the test binary act as `mongobench serve` (see
// runServeChild), so that a crashable embedded server can be started
// without building mongobench.
const serveChildEnv = "MONGOBENCH_TEST_SERVE_CHILD"

// runServeChild is the fake serve command: it launches the --target kind
// on --data-dir as serve does, prints the connection string and runs
// until SIGTERM.
func runServeChild(args []string) int {
	var spec TargetSpec

	var opts LaunchOptions

	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--target":
			spec.Kind = args[i+1]
		case "--data-dir":
			opts.DataDir = args[i+1]
		}
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)

	l, err := Launch(context.Background(), spec, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve child:", err)
		return 1
	}

	fmt.Println(l.URI)
	<-sigs

	if err := l.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "serve child:", err)
		return 1
	}

	return 0
}

// crashOptions runs the test binary as the serve command, in a temporary
// directory the postgres user can enter.
func crashOptions(t *testing.T) CrashOptions {
	t.Helper()

	t.Setenv(serveChildEnv, "1")

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}

	dir, err := os.MkdirTemp("", "targets-crash-test-")
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = os.RemoveAll(dir) })

	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	return CrashOptions{Serve: []string{exe}, TempDir: dir}
}

// writeRead inserts a document with _id n (when insert) and reports
// whether the server then has it.
func writeRead(t *testing.T, uri string, n int, insert bool) bool {
	t.Helper()

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	client, err := Connect(ctx, uri, ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}

	defer func() { _ = client.Disconnect(context.Background()) }()

	coll := client.Database("crash").Collection("c")

	if insert {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: n}}); err != nil {
			t.Fatal(err)
		}
	}

	count, err := coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: n}})
	if err != nil {
		t.Fatal(err)
	}

	return count == 1
}

// TestCrashableKeepsWhatItWrote crashes servers that keep their writes
// (SQLite files in a serve child; PostgreSQL with synchronous_commit=on)
// and in-memory SQLite, which keeps nothing: a document acknowledged
// before the kill is found after the restart on the first two and is gone
// on the last. The server is unreachable between Kill and Restart, and
// Stop leaves nothing in the temporary directory.
func TestCrashableKeepsWhatItWrote(t *testing.T) {
	for _, tc := range []struct {
		spec TargetSpec
		kept bool
	}{
		{TargetSpec{Name: "sqlite", Kind: KindEmbedded}, true},
		{TargetSpec{Name: "memory", Kind: KindEmbeddedMemory}, false},
		{TargetSpec{Name: "pg", Kind: KindFerretDBPostgres, Settings: map[string]string{"synchronous_commit": "on"}}, true},
	} {
		t.Run(tc.spec.Name, func(t *testing.T) {
			if tc.spec.Kind == KindFerretDBPostgres {
				pglaunchtest.Require(t)
			}

			opts := crashOptions(t)

			c, err := LaunchCrashable(t.Context(), tc.spec, opts)
			if err != nil {
				t.Fatal(err)
			}

			stopped := false

			t.Cleanup(func() {
				if !stopped {
					_ = c.Stop()
				}
			})

			if !writeRead(t, c.URI(), 7, true) {
				t.Fatal("the document is not there right after its insert")
			}

			old := c.URI()

			if err := c.Kill(); err != nil {
				t.Fatal(err)
			}

			if tc.spec.Kind != KindFerretDBPostgres {
				// The serve child is gone: nothing listens on its port.
				ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
				client, err := Connect(ctx, old, ConnectOptions{})

				if err == nil {
					err = client.Ping(ctx, nil)
					_ = client.Disconnect(context.Background())
				}

				cancel()

				if err == nil {
					t.Error("the killed server still answers")
				}
			}

			if err := c.Restart(t.Context()); err != nil {
				t.Fatal(err)
			}

			if got := writeRead(t, c.URI(), 7, false); got != tc.kept {
				t.Errorf("after the crash the document is there: %v, want %v", got, tc.kept)
			}

			stopped = true

			if err := c.Stop(); err != nil {
				t.Error(err)
			}

			entries, err := os.ReadDir(opts.TempDir)
			if err != nil {
				t.Fatal(err)
			}

			for _, e := range entries {
				t.Errorf("left behind: %s", filepath.Join(opts.TempDir, e.Name()))
			}
		})
	}
}

func TestLaunchCrashableRefuses(t *testing.T) {
	for _, tc := range []struct {
		spec TargetSpec
		opts CrashOptions
		want string
	}{
		{Existing("prod", "mongodb://127.0.0.1:1/"), CrashOptions{}, "is not crashed here"},
		{TargetSpec{Name: "m", Kind: KindMongod}, CrashOptions{}, "is not crashed here"},
		{TargetSpec{Name: "e", Kind: KindEmbedded}, CrashOptions{}, "no serve command"},
	} {
		_, err := LaunchCrashable(t.Context(), tc.spec, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LaunchCrashable(%s) = %v, want an error containing %q", tc.spec.Kind, err, tc.want)
		}
	}
}
