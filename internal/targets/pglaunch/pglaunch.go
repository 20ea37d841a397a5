// Package pglaunch starts a private, throw-away PostgreSQL server from the
// machine's installed binaries, for tests and for benchmarking FerretDB on
// PostgreSQL without a server of the user's own.
//
// The server listens on 127.0.0.1 only, on a free port, with trust
// authentication, and keeps its data in a fresh temporary directory that
// Stop removes. PostgreSQL refuses to run as root; when the process runs as
// root, the server's programs run as the postgres system user created by
// Debian's postgresql package, with the temporary directory owned by it.
//
// The postmaster is a direct child process: Stop knows exactly when it is
// gone because it reaps it, and the kernel stops it (SIGQUIT, immediate
// shutdown) if the parent process dies without calling Stop. It runs in a
// process group of its own so that a Ctrl-C at the terminal reaches only the
// parent, which then stops the server after its own cleanup.
package pglaunch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mongobench/mongobench/internal/base/freeport"
	"github.com/mongobench/mongobench/internal/base/tempdir"
)

// DefaultDatabase is the database Start creates, for FerretDB to keep its
// data in.
const DefaultDatabase = "ferretdb"

// SuperUser is the name of the server's superuser, which connects without a
// password.
const SuperUser = "postgres"

const (
	// startTimeout bounds the start-up when ctx has no earlier deadline.
	startTimeout = 60 * time.Second

	// killTimeout bounds the wait for a program to exit after it was
	// killed, and for a stopped server's last processes to go away.
	killTimeout = 5 * time.Second

	// bindAttempts is how often Start tries another free port when the one
	// it picked was taken before the server could bind it.
	bindAttempts = 3

	// maxSocketPath is the longest Unix socket path Linux accepts
	// (sizeof(sun_path) - 1).
	maxSocketPath = 107

	// logTail is how much of the server's log an error quotes.
	logTail = 2048
)

// defaultStopTimeouts are how long Stop waits after a fast shutdown request
// (which writes a checkpoint), an immediate one and a SIGKILL before
// escalating. A Server keeps its own copy, which tests of this package
// shorten on the server they stop.
var defaultStopTimeouts = [3]time.Duration{30 * time.Second, 5 * time.Second, 5 * time.Second}

// managedSettings are set by Start itself and may not be overridden, because
// the server would then listen where Start does not look for it.
var managedSettings = []string{"listen_addresses", "port", "unix_socket_directories"}

// settingName matches PostgreSQL configuration parameter names, including
// custom ones with a dot (e.g. auto_explain.log_min_duration).
var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// Options tunes the server Start launches. The zero value gives a server
// with PostgreSQL's default configuration in a directory under
// os.TempDir().
type Options struct {
	// Settings are configuration parameters written to postgresql.conf,
	// e.g. {"synchronous_commit": "off", "fsync": "off",
	// "shared_buffers": "128MB"}, so that a benchmark can say how the
	// server was tuned. Values are written quoted, as PostgreSQL accepts
	// for every parameter type. listen_addresses, port and
	// unix_socket_directories are managed by Start and rejected here.
	Settings map[string]string

	// TempDir is the parent of the server's temporary directory; empty
	// means os.TempDir(). When running as root, the postgres user must be
	// able to enter every directory on its path, which rules out, e.g.,
	// a 0700 directory owned by root.
	TempDir string

	// Logf, when set, receives progress messages (where the server lives,
	// when it is ready and when it stops), one call per message.
	Logf func(format string, args ...any)

	// pickPort picks the port to try; nil means a free port of 127.0.0.1
	// (freeport.Loopback). Tests of this package hand out a taken port.
	pickPort func() (int, error)
}

// Server is a running PostgreSQL server started by Start. Its methods are
// safe for concurrent use.
type Server struct {
	bin     binaries
	as      *account // nil when the programs run as the current user
	dir     string   // temporary directory, removed by Stop
	data    string   // data directory inside dir
	logPath string   // the server's stderr, inside dir
	port    int
	logf    func(format string, args ...any)

	pickPort     func() (int, error)
	stopTimeouts [3]time.Duration

	cmd     *exec.Cmd
	done    chan struct{} // closed once the postmaster has been reaped
	waitErr error         // the postmaster's exit status, set before done closes

	stopOnce sync.Once
	stopErr  error
}

// Start creates a temporary directory, initializes a database cluster in it
// (initdb with trust authentication, UTF8 encoding and the C locale), starts
// the server on a free port of 127.0.0.1 and creates DefaultDatabase. It
// returns once the server accepts connections. ctx bounds only the start-up:
// the server runs until Stop is called (or this process exits). On failure
// everything it created is removed, and the error quotes the server's log.
func Start(ctx context.Context, opts Options) (*Server, error) {
	s, err := start(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start PostgreSQL: %w", err)
	}

	return s, nil
}

func start(ctx context.Context, opts Options) (*Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	if err := validateSettings(opts.Settings); err != nil {
		return nil, err
	}

	if err := platformCheck(); err != nil {
		return nil, err
	}

	bin, err := findBinaries(debianLibDir)
	if err != nil {
		return nil, err
	}

	var as *account

	if isRoot() {
		if as, err = lookupSystemUser(); err != nil {
			return nil, err
		}
	}

	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc

		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}

	s := &Server{bin: bin, as: as, logf: opts.Logf, done: make(chan struct{}), pickPort: opts.pickPort, stopTimeouts: defaultStopTimeouts}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}

	if s.pickPort == nil {
		s.pickPort = freeport.Loopback
	}

	close(s.done) // nothing to wait for until the postmaster starts

	if err := s.makeDir(opts.TempDir); err != nil {
		return nil, err
	}

	if err := s.initdb(ctx, opts.Settings); err != nil {
		return nil, errors.Join(err, s.removeDir())
	}

	if err := s.launch(ctx); err != nil {
		return nil, errors.Join(err, s.stop(false))
	}

	if _, err := s.Psql(ctx, "postgres", "CREATE DATABASE "+DefaultDatabase); err != nil {
		return nil, errors.Join(fmt.Errorf("create database %s: %w", DefaultDatabase, err), s.stop(false))
	}

	return s, nil
}

// validateSettings rejects settings that could not be written to
// postgresql.conf safely or that Start manages itself.
func validateSettings(settings map[string]string) error {
	for k, v := range settings {
		if !settingName.MatchString(k) {
			return fmt.Errorf("invalid setting name %q", k)
		}

		if slices.Contains(managedSettings, strings.ToLower(k)) {
			return fmt.Errorf("setting %q is managed by mongobench and cannot be changed", k)
		}

		if strings.ContainsAny(v, "\x00\r\n") {
			return fmt.Errorf("setting %s: value must be a single line", k)
		}
	}

	return nil
}

// makeDir creates the temporary directory and hands it to the account the
// server runs as.
func (s *Server) makeDir(parent string) error {
	// Marked with this process, so that a later run removes it if this
	// one is killed.
	dir, err := tempdir.Create(parent, "mongobench-postgres-")
	if err != nil {
		return fmt.Errorf("create temporary directory: %w", err)
	}

	s.dir = dir

	s.data = filepath.Join(s.dir, "data")
	s.logPath = filepath.Join(s.dir, "postgres.log")

	// PostgreSQL puts its socket, .s.PGSQL.<port>, in the directory.
	if n := len(s.dir) + len("/.s.PGSQL.65535"); n > maxSocketPath {
		return errors.Join(fmt.Errorf("temporary directory %s is too long for a Unix socket path (%d > %d bytes); choose a shorter one",
			s.dir, n, maxSocketPath), s.removeDir())
	}

	if s.as != nil {
		if err := checkReachable(s.dir, s.as); err != nil {
			return errors.Join(err, s.removeDir())
		}

		if err := s.as.chown(s.dir); err != nil {
			return errors.Join(fmt.Errorf("hand %s to the %q user: %w", s.dir, s.as.name, err), s.removeDir())
		}
	}

	return nil
}

// initdb creates the database cluster and appends mongobench's settings to
// its postgresql.conf.
func (s *Server) initdb(ctx context.Context, settings map[string]string) error {
	s.logf("pglaunch: initializing a PostgreSQL cluster in %s with %s", s.data, s.bin.initdb)

	cmd := s.command(ctx, s.bin.initdb,
		"--pgdata="+s.data, "--username="+SuperUser, "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync")

	out, err := cmd.CombinedOutput()
	if cmd.Process != nil {
		// initdb runs the server in single-user mode as a child of its
		// own; make sure that one is gone too before the directory is
		// reused or removed.
		waitGroupGone(cmd.Process.Pid)
	}

	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("initdb: %w", ctx.Err())
		}

		return fmt.Errorf("initdb: %w: %s", err, tail(out, logTail))
	}

	var conf strings.Builder

	conf.WriteString("\n# Added by mongobench (internal/targets/pglaunch).\n")
	fmt.Fprintf(&conf, "listen_addresses = '127.0.0.1'\n")
	fmt.Fprintf(&conf, "unix_socket_directories = %s\n", quoteSetting(s.dir))

	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}

	slices.Sort(keys)

	for _, k := range keys {
		fmt.Fprintf(&conf, "%s = %s\n", k, quoteSetting(settings[k]))
	}

	f, err := os.OpenFile(filepath.Join(s.data, "postgresql.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("configure: %w", err)
	}

	if _, err := f.WriteString(conf.String()); err != nil {
		_ = f.Close()
		return fmt.Errorf("configure: %w", err)
	}

	if err := f.Close(); err != nil {
		return fmt.Errorf("configure: %w", err)
	}

	return nil
}

// quoteSetting quotes v as a postgresql.conf string value.
func quoteSetting(v string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), "'", "''") + "'"
}

// launch starts the postmaster and waits until it accepts connections,
// trying another port when the one picked was taken in the meantime.
func (s *Server) launch(ctx context.Context) error {
	var err error

	for attempt := 1; attempt <= bindAttempts; attempt++ {
		if s.port, err = s.pickPort(); err != nil {
			return err
		}

		err = s.launchOnce(ctx)
		if err == nil {
			s.logf("pglaunch: PostgreSQL is ready on 127.0.0.1:%d (pid %d, data in %s)", s.port, s.PID(), s.data)
			return nil
		}

		if !errors.Is(err, errPortTaken) {
			return err
		}

		s.logf("pglaunch: port %d was taken before PostgreSQL could bind it; trying another", s.port)
	}

	return err
}

// errPortTaken marks a start-up that failed because the port was in use.
var errPortTaken = errors.New("port already in use")

// launchOnce starts the postmaster on s.port and waits until it is ready.
func (s *Server) launchOnce(ctx context.Context) error {
	logFile, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("create server log: %w", err)
	}
	defer logFile.Close() // the child keeps its own descriptor

	// Earlier attempts' messages are not this attempt's.
	var logStart int64
	if fi, err := logFile.Stat(); err == nil {
		logStart = fi.Size()
	}

	// The postmaster must outlive ctx, so it is not tied to it.
	cmd := s.command(context.Background(), s.bin.postgres, "-D", s.data, "-p", strconv.Itoa(s.port))
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	prepareServer(cmd)

	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.bin.postgres, err)
	}

	done := make(chan struct{})
	s.cmd, s.done = cmd, done

	go func() {
		s.waitErr = cmd.Wait()
		close(done)
	}()

	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()

	for {
		select {
		case <-done:
			log := s.logTailFrom(logStart)
			if strings.Contains(log, "Address already in use") {
				return fmt.Errorf("%w: %s", errPortTaken, log)
			}

			return fmt.Errorf("postgres exited during start-up (%v): %s", s.waitErr, log) //nolint:errorlint // the exit status is context, and may be nil

		case <-ctx.Done():
			return fmt.Errorf("waiting for PostgreSQL to accept connections: %w", ctx.Err())

		case <-tick.C:
			if s.ready() {
				return nil
			}
		}
	}
}

// ready reports whether the postmaster says, in postmaster.pid, that it
// accepts connections. This is what pg_ctl -w waits for.
func (s *Server) ready() bool {
	b, err := os.ReadFile(filepath.Join(s.data, "postmaster.pid"))
	if err != nil {
		return false
	}

	lines := strings.Split(string(b), "\n")

	// Line 1 is the postmaster's pid and line 8 its status (PostgreSQL 10+).
	return len(lines) >= 8 &&
		strings.TrimSpace(lines[0]) == strconv.Itoa(s.cmd.Process.Pid) &&
		strings.TrimSpace(lines[7]) == "ready"
}

// command prepares a PostgreSQL program to run as the server's account, in
// the temporary directory (root's home may not be readable by that account),
// without the PG* environment variables that would redirect it elsewhere. It
// runs in a process group of its own, all of which is killed when ctx is
// done.
func (s *Server) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = s.dir
	cmd.Env = cleanEnv(os.Environ())
	cmd.WaitDelay = killTimeout
	prepareCommand(cmd, s.as)

	return cmd
}

// cleanEnv drops PG* variables (PGDATA, PGPORT, PGHOST, PGUSER, ...) and the
// locale, which is set to C so that messages are in English.
func cleanEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)

	for _, kv := range env {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}

		out = append(out, kv)
	}

	return append(out, "LC_ALL=C")
}

// Psql runs one SQL command in database db as the superuser, through psql
// over TCP, and returns its unaligned, tuples-only output without the final
// newline, e.g. "off" for "SHOW synchronous_commit". It exists so that tests
// and diagnostics can see what the server really runs with. psql runs as the
// server's programs do (as the postgres system user under root).
func (s *Server) Psql(ctx context.Context, db, sql string) (string, error) {
	cmd := s.command(ctx, s.bin.psql,
		"--no-psqlrc", "--no-password", "--tuples-only", "--no-align", "--quiet",
		"--set=ON_ERROR_STOP=1",
		"--host=127.0.0.1", "--port="+strconv.Itoa(s.port), "--username="+SuperUser, "--dbname="+db,
		"--command="+sql)

	var stderr strings.Builder

	cmd.Stderr = &stderr

	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("psql: %w: %s", err, strings.TrimSpace(stderr.String()))
	}

	return strings.TrimSuffix(string(out), "\n"), nil
}

// URL returns the connection string of database db, such as
// "postgres://postgres@127.0.0.1:40123/ferretdb", for FerretDB's
// PostgreSQL handler or any PostgreSQL client. No password is needed.
func (s *Server) URL(db string) string {
	u := url.URL{
		Scheme: "postgres",
		User:   url.User(SuperUser),
		Host:   net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path:   "/" + db,
	}

	return u.String()
}

// Version returns the major version of the binaries in use, e.g. "15",
// when they come from Debian's versioned directory, else "".
func (s *Server) Version() string {
	if filepath.Base(s.bin.dir) != "bin" {
		return ""
	}

	v := filepath.Base(filepath.Dir(s.bin.dir))
	if _, ok := parseVersion(v); !ok {
		return ""
	}

	return v
}

// PID returns the postmaster's process id, or 0 before it started.
func (s *Server) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}

	return s.cmd.Process.Pid
}

// Stop shuts the server down and removes its temporary directory. It asks
// for a fast shutdown (SIGINT, as pg_ctl stop -m fast does), escalates to an
// immediate one (SIGQUIT) and then to SIGKILL of the whole process group if
// the server does not exit in time, and returns only once the postmaster has
// been reaped and no process of its group is left. Stop is idempotent and
// safe to call concurrently: later calls wait for the first one and return
// its result. A server that had exited by itself before Stop (a crash, or
// a kill from outside) is reported as an error, with its log's end.
func (s *Server) Stop() error {
	return s.stop(true)
}

// stop does Stop's work; reportExited says whether a server that exited by
// itself is an error (it is not when Start gives up, having said why).
func (s *Server) stop(reportExited bool) error {
	s.stopOnce.Do(func() {
		s.stopErr = errors.Join(s.stopProcess(reportExited), s.removeDir())
	})

	return s.stopErr
}

// stopProcess stops the postmaster and its children, if started.
func (s *Server) stopProcess(reportExited bool) error {
	pid := s.PID()
	if pid == 0 {
		return nil
	}

	select {
	case <-s.done:
		// It exited by itself (and was reaped, so pid may already
		// belong to another process): only its group may be left.
		if !waitGroupGone(pid) {
			return fmt.Errorf("processes of PostgreSQL's group %d are still running", pid)
		}

		if !reportExited {
			return nil
		}

		return fmt.Errorf("PostgreSQL (pid %d) had exited before Stop (%v): %s", pid, s.waitErr, s.logTail()) //nolint:errorlint // the exit status is context, and may be nil
	default:
	}

	s.logf("pglaunch: stopping PostgreSQL (pid %d)", pid)

	var errs []error

	exited := false

	for step := range stopSignals {
		sig, err := signalStep(pid, step)
		if err != nil {
			errs = append(errs, fmt.Errorf("send %s to PostgreSQL (pid %d): %w", sig, pid, err))
		}

		if waitClosed(s.done, s.stopTimeouts[step]) {
			exited = true

			if step > 0 {
				errs = append(errs, fmt.Errorf("PostgreSQL (pid %d) ignored a shutdown request for %s and had to be sent %s",
					pid, s.stopTimeouts[step-1], sig))
			}

			break
		}
	}

	if !exited {
		return errors.Join(append(errs, fmt.Errorf("PostgreSQL (pid %d) is still running after SIGKILL", pid))...)
	}

	// The postmaster waits for its children on every orderly shutdown;
	// after an escalation some may linger briefly, so make sure the
	// group is empty before the directory goes away.
	if !waitGroupGone(pid) {
		errs = append(errs, fmt.Errorf("processes of PostgreSQL's group %d are still running", pid))
	}

	return errors.Join(errs...)
}

// waitGroupGone waits up to killTimeout for process group pgid to be empty,
// killing what is left of it, and reports whether it is.
func waitGroupGone(pgid int) bool {
	deadline := time.Now().Add(killTimeout)

	for groupAlive(pgid) {
		if time.Now().After(deadline) {
			return false
		}

		killGroup(pgid)

		time.Sleep(10 * time.Millisecond)
	}

	return true
}

// waitClosed waits up to d for ch to be closed.
func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()

	select {
	case <-ch:
		return true
	case <-timer.C:
		return false
	}
}

// removeDir removes the temporary directory.
func (s *Server) removeDir() error {
	if s.dir == "" {
		return nil
	}

	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("remove PostgreSQL's temporary directory: %w", err)
	}

	return nil
}

// logTail returns the end of the server's log, for error messages.
func (s *Server) logTail() string {
	return s.logTailFrom(0)
}

// logTailFrom returns the end of the server's log after its first start
// bytes.
func (s *Server) logTailFrom(start int64) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return "(no server log: " + err.Error() + ")"
	}

	if start > 0 && start <= int64(len(b)) {
		b = b[start:]
	}

	return tail(b, logTail)
}

// tail returns the last n bytes of b, trimmed, starting at a line boundary
// when it cuts.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}

	return strings.TrimSpace(string(b))
}

// Kill crashes the server: every process of it (the postmaster and each
// of its children, which PostgreSQL puts in process groups of their own)
// is stopped and then killed with SIGKILL, as a crash of the machine would
// stop them but with the operating system's page cache intact, so that
// what PostgreSQL had written (not necessarily flushed) survives, what was
// still in its shared memory (WAL buffers) does not, and crash recovery
// runs at the next start. It returns once the postmaster is reaped and
// every process of it has exited; the data directory is left for Restart.
// Durability checks use it; a run stops its server with Stop.
func (s *Server) Kill() error {
	pid := s.PID()
	if pid == 0 {
		return errors.New("kill PostgreSQL: it was never started")
	}

	s.logf("pglaunch: killing PostgreSQL (pid %d) and its children with SIGKILL", pid)

	killed := crashTree(pid)

	if !waitClosed(s.done, killTimeout) {
		return fmt.Errorf("kill PostgreSQL: the postmaster (pid %d) was not reaped within %s of SIGKILL", pid, killTimeout)
	}

	deadline := time.Now().Add(killTimeout)

	for !treeGone(killed) {
		if time.Now().After(deadline) {
			return fmt.Errorf("kill PostgreSQL: processes of the server (%v) are still running %s after SIGKILL", killed, killTimeout)
		}

		time.Sleep(10 * time.Millisecond)
	}

	return nil
}

// Restart starts the postmaster again on the same data directory and port
// after Kill (PostgreSQL then runs crash recovery from its write-ahead log)
// and returns once it accepts connections. The same port keeps URL valid.
func (s *Server) Restart(ctx context.Context) error {
	select {
	case <-s.done:
	default:
		return errors.New("restart PostgreSQL: it is still running")
	}

	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc

		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}

	if err := s.launchOnce(ctx); err != nil {
		return fmt.Errorf("restart PostgreSQL on %s: %w", s.data, err)
	}

	s.logf("pglaunch: PostgreSQL restarted on 127.0.0.1:%d (pid %d, data in %s)", s.port, s.PID(), s.data)

	return nil
}
