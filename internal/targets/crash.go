package targets

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mongobench/mongobench/internal/base/tempdir"
	"github.com/mongobench/mongobench/internal/targets/pglaunch"
)

// serveLifetime bounds a crashable embedded server's child process (its
// `serve --for`), so that it stops by itself even if nothing stops it.
const serveLifetime = 30 * time.Minute

// serveStopTimeout is how long Stop waits for a serve child to exit after
// SIGTERM before it kills it.
const serveStopTimeout = 15 * time.Second

// CrashOptions tunes LaunchCrashable.
type CrashOptions struct {
	// Serve is the command that runs mongobench's serve command, program
	// first (e.g. the running executable and "serve"). The embedded kinds
	// need it: an embedded server runs inside mongobench, and a kill -9 of
	// the server must not kill the run, so the server is started as a
	// child process of its own on a data directory that survives it.
	Serve []string

	// TempDir is the parent of the server's temporary directory; empty
	// means os.TempDir().
	TempDir string

	// Logger receives progress records; nil discards them.
	Logger *slog.Logger
}

// Crashable is a server launched to be crashed: Kill stops it as a crash
// does (SIGKILL, no shutdown, no flush), Restart starts it again on the
// same data, and Stop stops it and removes its data. It is launched apart
// from a run's own servers, which a crash would disturb.
type Crashable struct {
	// Spec is the target it was launched as.
	Spec TargetSpec

	// Description says what runs, as Launched.Description does.
	Description string

	// Crash says what Kill does, for the results ("SIGKILL of ...").
	Crash string

	impl crasher
}

// crasher is what each kind implements for Crashable.
type crasher interface {
	uri() string
	kill() error
	restart(ctx context.Context) error
	stop() error
}

// CrashableKinds are the target kinds LaunchCrashable can crash.
func CrashableKinds() []string {
	return []string{KindEmbedded, KindEmbeddedMemory, KindFerretDBPostgres}
}

// LaunchCrashable starts a server of spec's kind and settings that can be
// crashed and restarted: the embedded kinds as a `mongobench serve` child
// process on a data directory of its own, ferretdb-postgres as a private
// PostgreSQL (the server that is crashed) with FerretDB in-process on it.
// Other kinds are refused: mongod's crash (kill -9 of mongod, a restart on
// its dbpath) is not implemented here, and a uri target is not
// mongobench's to kill.
func LaunchCrashable(ctx context.Context, spec TargetSpec, opts CrashOptions) (*Crashable, error) {
	if err := Validate(spec); err != nil {
		return nil, err
	}

	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	c := &Crashable{Spec: spec.Clone()}

	switch spec.Kind {
	case KindEmbedded, KindEmbeddedMemory:
		s, err := startServeChild(ctx, spec.Kind, opts)
		if err != nil {
			return nil, err
		}

		storage := "SQLite files"
		if spec.Kind == KindEmbeddedMemory {
			storage = "in-memory SQLite"
		}

		c.impl = s
		c.Description = fmt.Sprintf("FerretDB on %s in a child process (mongobench serve --target %s --data-dir %s)", storage, spec.Kind, s.dir)
		c.Crash = "SIGKILL of the server process (mongobench serve)"

	case KindFerretDBPostgres:
		p, err := startPostgresCrashable(ctx, spec, opts, logger)
		if err != nil {
			return nil, err
		}

		c.impl = p
		c.Description = "FerretDB in-process on PostgreSQL " + p.pg.Version() + " launched by mongobench with " + settingsText(spec.Settings)
		c.Crash = "SIGKILL of PostgreSQL: the postmaster and all its children, stopped first, then killed at once"

	default:
		return nil, fmt.Errorf("a durability check crashes %s targets only; %s is not crashed here", strings.Join(CrashableKinds(), ", "), spec.Kind)
	}

	return c, nil
}

// URI is the connection string of the running server; it changes at a
// Restart for the embedded kinds (a new port).
func (c *Crashable) URI() string { return c.impl.uri() }

// Kill crashes the server with SIGKILL and returns once it is gone.
func (c *Crashable) Kill() error { return c.impl.kill() }

// Restart starts the killed server again on its data and returns once it
// accepts connections.
func (c *Crashable) Restart(ctx context.Context) error { return c.impl.restart(ctx) }

// Stop stops the server, if running, and removes its data. It is
// idempotent.
func (c *Crashable) Stop() error { return c.impl.stop() }

// settingsText lists PostgreSQL settings as k=v pairs in a stable order.
func settingsText(settings map[string]string) string {
	if len(settings) == 0 {
		return "its default settings"
	}

	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}

	slices.Sort(keys)

	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = k + "=" + settings[k]
	}

	return strings.Join(pairs, ", ")
}

// serveChild is an embedded server running as `mongobench serve` in a
// child process, on a data directory that outlives it.
type serveChild struct {
	kind  string
	serve []string
	dir   string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed once cmd is reaped
	stderr  *tailBuffer
	address string

	stopOnce sync.Once
	stopErr  error
}

// startServeChild creates the data directory and starts the child on it.
func startServeChild(ctx context.Context, kind string, opts CrashOptions) (*serveChild, error) {
	if len(opts.Serve) == 0 {
		return nil, fmt.Errorf("crash a %s target: no serve command to run it as a child process", kind)
	}

	// Marked with this process, so that a later run removes it if this
	// one is killed.
	dir, err := tempdir.Create(opts.TempDir, "mongobench-crash-")
	if err != nil {
		return nil, fmt.Errorf("crash a %s target: create data directory: %w", kind, err)
	}

	s := &serveChild{kind: kind, serve: opts.Serve, dir: dir}

	if err := s.start(ctx); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}

	return s, nil
}

// start runs the child and waits for the connection string it prints.
func (s *serveChild) start(ctx context.Context) error {
	args := append(append([]string{}, s.serve[1:]...),
		"--target", s.kind, "--data-dir", s.dir, "--for", serveLifetime.String())

	cmd := exec.Command(s.serve[0], args...) //nolint:gosec,noctx // the program is mongobench itself; it must outlive ctx
	cmd.SysProcAttr = detachedProcAttr()

	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("start %s: %w", s.kind, err)
	}

	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr

	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s as a child process: %w", s.kind, err)
	}

	done := make(chan struct{})
	lines := make(chan string, 1)

	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- strings.TrimSpace(sc.Text())
		}

		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()

	go func() {
		_ = cmd.Wait()
		close(done)
	}()

	s.mu.Lock()
	s.cmd, s.done, s.stderr = cmd, done, stderr
	s.mu.Unlock()

	select {
	case line, ok := <-lines:
		if !ok || !strings.HasPrefix(line, "mongodb://") {
			_ = s.kill()
			return fmt.Errorf("%s child process printed no connection string: %s", s.kind, stderr.String())
		}

		s.mu.Lock()
		s.address = line
		s.mu.Unlock()

		return nil
	case <-ctx.Done():
		_ = s.kill()
		return fmt.Errorf("start %s as a child process: %w", s.kind, ctx.Err())
	}
}

func (s *serveChild) uri() string {
	s.mu.Lock()
	defer s.mu.Unlock()

	return s.address
}

// kill sends SIGKILL to the child and waits until it is reaped.
func (s *serveChild) kill() error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()

	if cmd == nil {
		return errors.New("kill the server: it was never started")
	}

	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill the server (pid %d): %w", cmd.Process.Pid, err)
	}

	select {
	case <-done:
		return nil
	case <-time.After(serveStopTimeout):
		return fmt.Errorf("the server (pid %d) was not reaped within %s of SIGKILL", cmd.Process.Pid, serveStopTimeout)
	}
}

// restart starts a new child on the same data directory.
func (s *serveChild) restart(ctx context.Context) error {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()

	select {
	case <-done:
	default:
		return errors.New("restart the server: it is still running")
	}

	return s.start(ctx)
}

// stop asks the child to stop (SIGTERM), kills it if it does not, and
// removes the data directory.
func (s *serveChild) stop() error {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		cmd, done := s.cmd, s.done
		s.mu.Unlock()

		var errs []error

		select {
		case <-done:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)

			select {
			case <-done:
			case <-time.After(serveStopTimeout):
				errs = append(errs, fmt.Errorf("the server (pid %d) ignored SIGTERM for %s and was killed", cmd.Process.Pid, serveStopTimeout))

				if err := s.kill(); err != nil {
					errs = append(errs, err)
				}
			}
		}

		if err := os.RemoveAll(s.dir); err != nil {
			errs = append(errs, fmt.Errorf("remove the server's data directory: %w", err))
		}

		s.stopErr = errors.Join(errs...)
	})

	return s.stopErr
}

// tailBuffer keeps the last max bytes written to it, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()

	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}

	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()

	return strings.TrimSpace(string(t.b))
}

// postgresCrashable is a private PostgreSQL, the server that is crashed,
// with FerretDB in-process on it; FerretDB is started anew after each
// restart so that no connection of the crashed server is reused.
type postgresCrashable struct {
	pg     *pglaunch.Server
	opts   CrashOptions
	logger *slog.Logger

	mu sync.Mutex
	fe *Embedded

	stopOnce sync.Once
	stopErr  error
}

// startPostgresCrashable starts PostgreSQL with spec's settings and FerretDB.
func startPostgresCrashable(ctx context.Context, spec TargetSpec, opts CrashOptions, logger *slog.Logger) (*postgresCrashable, error) {
	if err := pglaunch.Available(); err != nil {
		return nil, err
	}

	pg, err := pglaunch.Start(ctx, pglaunch.Options{
		Settings: spec.Settings,
		TempDir:  opts.TempDir,
		Logf:     func(format string, args ...any) { logger.Info(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return nil, err
	}

	p := &postgresCrashable{pg: pg, opts: opts, logger: logger}

	if err := p.startFerretDB(ctx); err != nil {
		return nil, errors.Join(err, pg.Stop())
	}

	return p, nil
}

func (p *postgresCrashable) startFerretDB(ctx context.Context) error {
	fe, err := StartEmbedded(ctx, EmbeddedOptions{
		PostgreSQLURL: p.pg.URL(pglaunch.DefaultDatabase),
		TempDir:       p.opts.TempDir,
		Logger:        p.opts.Logger,
	})
	if err != nil {
		return err
	}

	p.mu.Lock()
	p.fe = fe
	p.mu.Unlock()

	return nil
}

func (p *postgresCrashable) uri() string {
	p.mu.Lock()
	defer p.mu.Unlock()

	return p.fe.URI()
}

func (p *postgresCrashable) kill() error { return p.pg.Kill() }

// restart closes the FerretDB of the crashed server, restarts PostgreSQL
// on its data directory (crash recovery) and starts a new FerretDB on it.
func (p *postgresCrashable) restart(ctx context.Context) error {
	p.mu.Lock()
	fe := p.fe
	p.mu.Unlock()

	if err := fe.Close(); err != nil {
		return err
	}

	if err := p.pg.Restart(ctx); err != nil {
		return err
	}

	return p.startFerretDB(ctx)
}

func (p *postgresCrashable) stop() error {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		fe := p.fe
		p.mu.Unlock()

		p.stopErr = errors.Join(fe.Close(), p.pg.Stop())
	})

	return p.stopErr
}
