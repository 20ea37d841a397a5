package targets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/base/tempdir"
)

// ferretDBModule is the module path whose linked version Description reports.
const ferretDBModule = "github.com/FerretDB/FerretDB"

// DefaultShutdownTimeout bounds how long Close waits for the embedded server
// to stop. FerretDB itself gives connected clients up to 3 seconds to go away
// after shutdown starts, so the bound leaves room for that plus closing SQLite.
const DefaultShutdownTimeout = 10 * time.Second

// ferretDBNewMu serializes calls to ferretdb.New. FerretDB v1.24 writes a
// package-level variable of its own on every call (version.Get().Package), so
// two embedded servers started concurrently would race on it. The mutex
// guards that third-party global; it holds no state of this package.
var ferretDBNewMu sync.Mutex

// EmbeddedOptions tunes the in-process FerretDB server started by
// StartEmbedded. The zero value gives a file-backed SQLite server in a fresh
// temporary directory whose logs are discarded.
type EmbeddedOptions struct {
	// Memory keeps all data in SQLite in-memory databases (SQLite URI
	// "file:<dir>/?mode=memory") instead of files, and the data is gone when
	// the server stops. FerretDB v1.24 gives each in-memory database a single
	// SQLite connection, and its update path reads the matching documents
	// and writes them back while still holding that connection, so every
	// update that modifies a document (update, replace, findAndModify)
	// deadlocks the database for good; inserts, upserts that insert, deletes,
	// queries and aggregations work. For a RAM-backed server that supports
	// all operations, leave Memory false and set TempDir to a tmpfs such as
	// /dev/shm instead.
	Memory bool

	// Logger receives FerretDB's own log records. FerretDB logs every
	// connection and command at INFO and DEBUG, which would drown mongobench's
	// output, so when Logger is nil all records are discarded.
	Logger *slog.Logger

	// TempDir is the parent directory of the server's data directory; empty
	// means os.TempDir(). Its path must not contain '?', '#' or '%' because
	// it becomes part of a SQLite URI.
	TempDir string

	// ShutdownTimeout bounds how long Close waits for the server to stop;
	// zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration

	// PostgreSQLURL, when not empty, makes the server use FerretDB's
	// "postgresql" handler with this connection string (for example
	// "postgres://postgres@127.0.0.1:5432/ferretdb", as given by
	// pglaunch.Server.URL) instead of SQLite, so that FerretDB on
	// PostgreSQL can be measured without a FerretDB installation. The data
	// then lives in that database, which Close leaves alone; the temporary
	// directory is still created and removed, for uniformity, but holds
	// only its owner mark. Memory cannot be combined with it.
	PostgreSQLURL string

	// DataDir, when not empty, is an existing directory to keep the SQLite
	// files in instead of a fresh temporary one, and Close leaves it and
	// its files in place. A durability check runs `mongobench serve` as a
	// child process on such a directory, crashes it, and starts it again on
	// the same files (see Crashable). TempDir is then unused.
	DataDir string
}

// Embedded is a FerretDB server running inside the mongobench process, backed
// by SQLite in a temporary directory that Close removes, or by a PostgreSQL
// database (EmbeddedOptions.PostgreSQLURL). Its methods are safe for
// concurrent use.
type Embedded struct {
	dir             string
	keepDir         bool // the directory was given (DataDir): Close leaves it
	uri             string
	memory          bool
	postgreSQL      string // redacted PostgreSQL connection string, "" for SQLite
	version         string
	shutdownTimeout time.Duration

	cancel context.CancelFunc
	done   chan struct{} // closed once FerretDB's Run has returned

	closeOnce sync.Once
	closeErr  error

	removeOnce sync.Once
	removeErr  error
}

// StartEmbedded starts FerretDB v1.24 in-process with its SQLite handler (or
// its PostgreSQL handler when opts.PostgreSQLURL is set), listening on an
// ephemeral TCP port of 127.0.0.1, and returns once the server accepts
// connections. ctx only bounds the start-up: the server keeps running until
// Close (or RemoveDir) is called, so that cancelling a run's context on
// Ctrl-C does not pull the server from under in-flight cleanup. With
// PostgreSQL, FerretDB connects lazily, so an unreachable PostgreSQL shows
// up in the first command rather than here.
func StartEmbedded(ctx context.Context, opts EmbeddedOptions) (*Embedded, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start embedded FerretDB: %w", err)
	}

	if opts.Memory && opts.PostgreSQLURL != "" {
		return nil, errors.New("start embedded FerretDB: in-memory mode is for SQLite and cannot be combined with a PostgreSQL URL")
	}

	if strings.ContainsAny(opts.TempDir, "?#%") {
		return nil, fmt.Errorf("start embedded FerretDB: temporary directory %q must not contain '?', '#' or '%%'", opts.TempDir)
	}

	dir, keep, err := embeddedDir(opts)
	if err != nil {
		return nil, err
	}

	if strings.ContainsAny(dir, "?#%") {
		removeUnlessKept(dir, keep)
		return nil, fmt.Errorf("start embedded FerretDB: data directory %q must not contain '?', '#' or '%%'; set another temporary directory", dir)
	}

	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	config := &ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: "127.0.0.1:0"},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: sqliteURL(dir, opts.Memory),
	}

	if opts.PostgreSQLURL != "" {
		config.Handler = "postgresql"
		config.SQLiteURL = ""
		config.PostgreSQLURL = opts.PostgreSQLURL
	}

	f, err := newFerretDB(config)
	if err != nil {
		removeUnlessKept(dir, keep)
		return nil, fmt.Errorf("start embedded FerretDB: %w", err)
	}

	timeout := opts.ShutdownTimeout
	if timeout <= 0 {
		timeout = DefaultShutdownTimeout
	}

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))

	e := &Embedded{
		dir:             dir,
		keepDir:         keep,
		memory:          opts.Memory,
		postgreSQL:      describePostgreSQLURL(opts.PostgreSQLURL),
		version:         ferretDBVersion(),
		shutdownTimeout: timeout,
		cancel:          cancel,
		done:            make(chan struct{}),
	}

	go func() {
		defer close(e.done)

		// Run always returns nil in v1.24; it closes listeners,
		// connections and the SQLite backend before returning.
		_ = f.Run(runCtx)
	}()

	// The listener is already bound by ferretdb.New, so the address is known
	// and connections queue in the backlog until Run accepts them.
	e.uri = f.MongoDBURI()

	if err := ctx.Err(); err != nil {
		_ = e.Close()
		return nil, fmt.Errorf("start embedded FerretDB: %w", err)
	}

	return e, nil
}

// embeddedDir returns the server's data directory and whether it is the
// caller's (DataDir, kept) rather than a fresh temporary one.
func embeddedDir(opts EmbeddedOptions) (string, bool, error) {
	if opts.DataDir != "" {
		fi, err := os.Stat(opts.DataDir)
		if err != nil {
			return "", false, fmt.Errorf("start embedded FerretDB: data directory: %w", err)
		}

		if !fi.IsDir() {
			return "", false, fmt.Errorf("start embedded FerretDB: data directory %s is not a directory", opts.DataDir)
		}

		dir, err := filepath.Abs(opts.DataDir)
		if err != nil {
			return "", false, fmt.Errorf("start embedded FerretDB: data directory: %w", err)
		}

		return dir, true, nil
	}

	// Marked with this process, so that a later run removes it if this
	// one is killed.
	dir, err := tempdir.Create(opts.TempDir, "mongobench-ferretdb-")
	if err != nil {
		return "", false, fmt.Errorf("start embedded FerretDB: create data directory: %w", err)
	}

	return dir, false, nil
}

// removeUnlessKept removes a data directory the server created itself.
func removeUnlessKept(dir string, keep bool) {
	if !keep {
		_ = os.RemoveAll(dir)
	}
}

// newFerretDB calls ferretdb.New with the package-level race workaround held.
func newFerretDB(c *ferretdb.Config) (*ferretdb.FerretDB, error) {
	ferretDBNewMu.Lock()
	defer ferretDBNewMu.Unlock()

	return ferretdb.New(c)
}

// sqliteURL returns the SQLite URI FerretDB v1.24 accepts for dir: a "file:"
// URI naming an existing directory with a trailing slash, plus mode=memory
// for in-memory databases (FerretDB then ignores the directory's content but
// still requires it to exist).
func sqliteURL(dir string, memory bool) string {
	u := "file:" + filepath.ToSlash(dir) + "/"
	if memory {
		u += "?mode=memory"
	}

	return u
}

// describePostgreSQLURL returns a PostgreSQL connection string fit for
// printing: URLs keep everything but their password, and key=value strings,
// which redact.URI does not understand, are not shown at all.
func describePostgreSQLURL(s string) string {
	if s == "" {
		return ""
	}

	if !strings.HasPrefix(s, "postgres://") && !strings.HasPrefix(s, "postgresql://") {
		return "connection string not shown"
	}

	return redact.URI(s)
}

// ferretDBVersion returns the linked FerretDB module version, such as
// "v1.24.0", or "" when the binary carries no build information.
func ferretDBVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}

	for _, dep := range bi.Deps {
		if dep.Path != ferretDBModule {
			continue
		}

		if dep.Replace != nil && dep.Replace.Version != "" {
			return dep.Replace.Version
		}

		return dep.Version
	}

	return ""
}

// URI returns the MongoDB connection string of the running server, such as
// "mongodb://127.0.0.1:40123/", with the real ephemeral port.
func (e *Embedded) URI() string {
	return e.uri
}

// MaxPoolSize returns the largest connection pool a client of this server may
// use, or 0 for no limit; pass it to ConnectOptions.MaxPoolSize. It is 0 in
// both modes of FerretDB v1.24. Although an in-memory SQLite database has a
// single connection, FerretDB queues concurrent operations on its side, and
// capping the client's pool at 1 would only add a deadlock: an open cursor
// holds the database's SQLite connection, so another goroutine's operation
// would take the only client connection and wait on the server while the
// cursor's getMore waits for that client connection.
func (e *Embedded) MaxPoolSize() uint64 {
	return 0
}

// Description returns a one-line, human-readable account of what serves the
// load, for run headers and result files, e.g.
// "embedded FerretDB v1.24.0 (SQLite, file-backed, /tmp/mongobench-ferretdb-123)"
// or "embedded FerretDB v1.24.0 (PostgreSQL, postgres://postgres@127.0.0.1:5432/ferretdb)".
func (e *Embedded) Description() string {
	name := "embedded FerretDB"
	if e.version != "" {
		name += " " + e.version
	}

	if e.postgreSQL != "" {
		return name + " (PostgreSQL, " + e.postgreSQL + ")"
	}

	if e.memory {
		return name + " (SQLite, in-memory)"
	}

	return name + " (SQLite, file-backed, " + e.dir + ")"
}

// Notes returns plain-language caveats about this server for the run header,
// one sentence each.
func (e *Embedded) Notes() []string {
	if e.postgreSQL != "" {
		return []string{
			"FerretDB keeps the data in PostgreSQL (" + e.postgreSQL + "), " +
				"whose configuration (synchronous_commit, fsync, shared_buffers, ...) shapes the numbers as much as FerretDB does",
		}
	}

	if !e.memory {
		return nil
	}

	return []string{
		"in-memory SQLite in FerretDB v1.24 deadlocks on updates that modify documents; " +
			"use a file-backed server in a tmpfs directory (e.g. /dev/shm) for workloads with updates",
		"in-memory SQLite runs one operation per database at a time; " +
			"a cursor left open between batches blocks every other operation on its database until it is exhausted or closed",
	}
}

// Annotate fills in what the embedded server cannot tell about itself
// through the protocol: its FerretDB version (it answers "unknown") and its
// backend (it names SQLite or PostgreSQL only once a database has been
// opened).
func (e *Embedded) Annotate(info ServerInfo) ServerInfo {
	if info.Product != ProductFerretDB {
		return info
	}

	if info.FerretDBVersion == "" {
		info.FerretDBVersion = e.version
	}

	if info.Backend == "" {
		info.Backend = "SQLite"
		if e.postgreSQL != "" {
			info.Backend = "PostgreSQL"
		}
	}

	return info
}

// Close stops the server and removes its data directory. It cancels the
// server, waits up to the shutdown timeout for it to stop, and then removes
// the directory even if the server did not stop in time. Close is idempotent
// and safe to call concurrently, e.g. from a signal handler: later calls wait
// for the first one and return its result.
func (e *Embedded) Close() error {
	e.closeOnce.Do(func() {
		e.cancel()

		var stopErr error

		timer := time.NewTimer(e.shutdownTimeout)
		defer timer.Stop()

		select {
		case <-e.done:
		case <-timer.C:
			stopErr = fmt.Errorf("embedded FerretDB did not stop within %s", e.shutdownTimeout)
		}

		e.closeErr = errors.Join(stopErr, e.RemoveDir())
	})

	return e.closeErr
}

// RemoveDir is the fast path for a second, impatient interrupt: it tells the
// server to stop but does not wait for it, and removes the data directory
// right away. Connections still open then fail. Calling it more than once, or
// together with Close, is safe.
func (e *Embedded) RemoveDir() error {
	e.removeOnce.Do(func() {
		e.cancel()

		if e.keepDir {
			return
		}

		if err := os.RemoveAll(e.dir); err != nil {
			e.removeErr = fmt.Errorf("remove embedded FerretDB data directory: %w", err)
		}
	})

	return e.removeErr
}
