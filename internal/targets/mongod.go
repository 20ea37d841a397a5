package targets

// Launching mongod is tested against a fake mongod (a wire-protocol test
// server that answers ping, hello and buildInfo) because no mongod can be
// installed on the machines mongobench is developed on. The arguments and
// the replica set protocol follow MongoDB's documentation but are NOT
// verified against a real mongod here.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mongobench/mongobench/internal/base/freeport"
	"github.com/mongobench/mongobench/internal/base/tempdir"
	"github.com/mongobench/mongobench/internal/spec/targetspec"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// errNoMongod is the error for a mongod target on a machine without mongod.
var errNoMongod = errors.New("no mongod binary found (give one with --mongod-binary or MONGOBENCH_MONGOD, or put mongod on PATH); mongod targets cannot run on this machine")

// ReplicaSetName is the name of the replica sets Launch starts.
const ReplicaSetName = "mongobench"

// maxVotingMembers is how many members of a replica set may vote.
const maxVotingMembers = 7

const (
	// mongodStartTimeout bounds the start-up of a mongod target (processes
	// ready, replica set initiated, primary elected, secondaries caught
	// up) when ctx has no earlier deadline.
	mongodStartTimeout = 2 * time.Minute

	// mongodKillTimeout bounds the wait for a mongod to be reaped after
	// SIGKILL.
	mongodKillTimeout = 5 * time.Second

	// mongodBindAttempts is how often a member is started on another free
	// port when the one picked was taken before mongod could bind it.
	mongodBindAttempts = 3

	// mongodLogTail is how much of a mongod's log an error quotes.
	mongodLogTail = 2048

	// mongodPollInterval is how often start-up checks are repeated.
	mongodPollInterval = 50 * time.Millisecond
)

// mongodStopTimeout is how long Stop waits for a mongod to exit after
// SIGTERM before it sends SIGKILL, unless mongodTuning says otherwise.
const mongodStopTimeout = 10 * time.Second

// mongodTuning holds what a mongod target's start and stop take from the
// caller rather than from constants, so that a test can shorten the stop
// or provoke a port clash without changing package state that other tests
// share. The zero value is what a run uses.
type mongodTuning struct {
	// stopTimeout is how long Stop waits for a mongod to exit after
	// SIGTERM before it sends SIGKILL; zero means mongodStopTimeout.
	stopTimeout time.Duration

	// pickPort returns the port to try for a member; nil means a free
	// port of 127.0.0.1 (freeport.Loopback).
	pickPort func() (int, error)
}

// MongodArgs returns the command-line arguments of one mongod process of a
// mongod target: its data directory dbPath, TCP port on 127.0.0.1 only, no
// Unix socket (which mongod would otherwise create in /tmp, outside the
// temporary directory), the storage engine, --nojournal when spec.Journal
// is false, the WiredTiger cache size, --replSet when replSet is not empty,
// and spec.Args last. spec.Binary and spec.ReplicaSet are not used here.
//
// MongoDB 6.1 removed --nojournal: a mongod of 6.1 or later refuses to start
// with journal=false, and Launch then adds a hint to the error. The
// arguments follow MongoDB's documentation and are not verified against a
// real mongod by mongobench's tests.
func MongodArgs(spec MongodSpec, dbPath string, port int, replSet string) []string {
	args := []string{
		"--dbpath", dbPath,
		"--port", strconv.Itoa(port),
		"--bind_ip", "127.0.0.1",
		"--nounixsocket",
	}

	if spec.StorageEngine != "" {
		args = append(args, "--storageEngine", spec.StorageEngine)
	}

	if spec.Journal != nil && !*spec.Journal {
		args = append(args, "--nojournal")
	}

	if spec.CacheSizeGB > 0 {
		args = append(args, "--wiredTigerCacheSizeGB", targetspec.FormatGB(spec.CacheSizeGB))
	}

	if replSet != "" {
		args = append(args, "--replSet", replSet)
	}

	return append(args, spec.Args...)
}

// ReplicaSetConfig returns the replica set configuration document that
// replSetInitiate takes for a set called name whose members listen at hosts
// ("127.0.0.1:port"), member ids counting from 0 in the order given. MongoDB
// allows at most seven voting members, so members after the seventh get no
// vote and priority 0 (they never become primary).
func ReplicaSetConfig(name string, hosts []string) bson.D {
	members := make(bson.A, len(hosts))

	for i, h := range hosts {
		m := bson.D{{Key: "_id", Value: int32(i)}, {Key: "host", Value: h}}
		if i >= maxVotingMembers {
			m = append(m, bson.E{Key: "votes", Value: int32(0)}, bson.E{Key: "priority", Value: int32(0)})
		}

		members[i] = m
	}

	return bson.D{{Key: "_id", Value: name}, {Key: "members", Value: members}}
}

// mongodURI returns the connection string of mongod processes listening on
// ports of 127.0.0.1: a standalone when replSet is empty, else a replica
// set the driver discovers.
func mongodURI(ports []int, replSet string) string {
	hosts := make([]string, len(ports))
	for i, p := range ports {
		hosts[i] = hostPort(p)
	}

	uri := "mongodb://" + strings.Join(hosts, ",") + "/"
	if replSet != "" {
		uri += "?replicaSet=" + replSet
	}

	return uri
}

// hostPort returns "127.0.0.1:port".
func hostPort(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// findMongod returns the absolute path of the mongod to run: binary, looked
// up in PATH when it has no slash, or "mongod" from PATH.
func findMongod(binary string) (string, error) {
	if binary == "" {
		path, err := exec.LookPath("mongod")
		if err != nil {
			return "", errNoMongod
		}

		return filepath.Abs(path)
	}

	path, err := exec.LookPath(binary)
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			err = ee.Err
		}

		return "", fmt.Errorf("mongod binary %q cannot be run: %w", binary, err)
	}

	return filepath.Abs(path)
}

// mongodCluster is the set of mongod processes of one mongod target, with
// the temporary directory holding their data and logs.
type mongodCluster struct {
	binary  string
	spec    MongodSpec
	root    string // temporary directory, removed by stop
	replSet string // "" for a standalone
	logger  *slog.Logger
	members []*mongodMember
	version string // as reported by buildInfo, or ""
	tuning  mongodTuning
}

// mongodMember is one mongod process.
type mongodMember struct {
	index   int
	dbPath  string
	logPath string
	port    int

	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has been reaped
	waitErr error         // its exit status, set before done is closed
}

// launchMongod starts the mongod processes of a mongod target.
func (l *Launched) launchMongod(ctx context.Context, opts LaunchOptions) error {
	var spec MongodSpec
	if l.Spec.Mongod != nil {
		spec = *l.Spec.Mongod
	}

	c, err := startMongod(ctx, spec, opts.TempDir, l.logger, opts.mongod)
	if err != nil {
		return err
	}

	ports := make([]int, len(c.members))
	for i, m := range c.members {
		ports[i] = m.port
	}

	l.mongod = c
	l.URI = mongodURI(ports, c.replSet)
	l.Description = c.description()
	l.Notes = c.notes()

	return nil
}

// startMongod starts the processes, waits until each answers, and for a
// replica set initiates it and waits for a primary and caught-up
// secondaries. On failure, everything is stopped and removed.
func startMongod(ctx context.Context, spec MongodSpec, tempDir string, logger *slog.Logger, tuning mongodTuning) (*mongodCluster, error) {
	binary, err := findMongod(spec.Binary)
	if err != nil {
		return nil, err
	}

	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc

		ctx, cancel = context.WithTimeout(ctx, mongodStartTimeout)
		defer cancel()
	}

	// Marked with this process, so that a later run removes it if this
	// one is killed.
	root, err := tempdir.Create(tempDir, "mongobench-mongod-")
	if err != nil {
		return nil, fmt.Errorf("create mongod's temporary directory: %w", err)
	}

	if tuning.stopTimeout <= 0 {
		tuning.stopTimeout = mongodStopTimeout
	}

	if tuning.pickPort == nil {
		tuning.pickPort = freeport.Loopback
	}

	c := &mongodCluster{binary: binary, spec: spec, logger: logger, root: root, tuning: tuning}

	if spec.ReplicaSet > 0 {
		c.replSet = ReplicaSetName
	}

	if err := c.start(ctx); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("start mongod: %w", context.Cause(ctx))
		}

		if stopErr := c.stop(false); stopErr != nil {
			err = fmt.Errorf("%w (cleaning up also failed: %s)", err, oneLine(stopErr.Error()))
		}

		return nil, err
	}

	return c, nil
}

// start does startMongod's work; the caller cleans up after a failure.
func (c *mongodCluster) start(ctx context.Context) error {
	n := max(1, c.spec.ReplicaSet)
	used := map[int]bool{}

	for i := range n {
		dir := filepath.Join(c.root, "member"+strconv.Itoa(i))
		m := &mongodMember{index: i, dbPath: filepath.Join(dir, "db"), logPath: filepath.Join(dir, "mongod.log")}

		if err := os.MkdirAll(m.dbPath, 0o700); err != nil {
			return fmt.Errorf("create mongod's data directory: %w", err)
		}

		c.members = append(c.members, m)

		// Start all members before waiting for any, so that they start
		// up in parallel.
		if err := c.spawn(m, used); err != nil {
			return err
		}
	}

	clients := make([]*mongo.Client, 0, n)

	defer func() {
		for _, client := range clients {
			disconnect(client)
		}
	}()

	for _, m := range c.members {
		client, err := c.waitReady(ctx, m, used)
		if err != nil {
			return err
		}

		clients = append(clients, client)
	}

	c.version = buildVersion(ctx, clients[0])

	if c.replSet == "" {
		return nil
	}

	hosts := make([]string, n)
	for i, m := range c.members {
		hosts[i] = hostPort(m.port)
	}

	cmd := bson.D{{Key: "replSetInitiate", Value: ReplicaSetConfig(c.replSet, hosts)}}
	if err := clients[0].Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
		return fmt.Errorf("initiate replica set %s on %s: replSetInitiate: %s", c.replSet, hosts[0], oneLine(err.Error()))
	}

	c.logger.Info("mongod: replica set initiated; waiting for a primary", "replica_set", c.replSet, "members", n)

	return waitForReplicaSet(ctx, c.replSet, func(ctx context.Context, i int) (bson.Raw, error) {
		return clients[i].Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Raw()
	}, n)
}

// spawn starts m's process on a free port not in used.
func (c *mongodCluster) spawn(m *mongodMember, used map[int]bool) error {
	port, err := c.tuning.pickPort()
	for attempt := 0; err == nil && used[port] && attempt < 10; attempt++ {
		port, err = c.tuning.pickPort()
	}

	if err != nil {
		return err
	}

	used[port] = true
	m.port = port

	logFile, err := os.OpenFile(m.logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("create mongod's log: %w", err)
	}
	defer logFile.Close() // the child has its own descriptor

	// The process must outlive Launch's context, so it is not tied to it.
	cmd := exec.Command(c.binary, MongodArgs(c.spec, m.dbPath, port, c.replSet)...)
	cmd.Dir = filepath.Dir(m.dbPath)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = detachedProcAttr()

	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", c.binary, err)
	}

	done := make(chan struct{})
	m.cmd, m.done = cmd, done

	go func() {
		m.waitErr = cmd.Wait()
		close(done)
	}()

	c.logger.Info("mongod: started", "pid", cmd.Process.Pid, "port", port, "dbpath", m.dbPath)

	return nil
}

// detachedProcAttr returns process attributes that put a child in a
// process group of its own, so that a Ctrl-C at the terminal reaches only
// mongobench (which then stops the child after its own cleanup), and, on
// Linux, make the kernel send it SIGTERM when mongobench dies without
// stopping it. The fields exist only on some systems (Setpgid on Unix,
// Pdeathsig on Linux), so they are set through reflection to keep this file
// portable; elsewhere the attributes stay empty. (Linux ties Pdeathsig to
// the thread that started the child; Go only ends threads of goroutines
// that exit while locked to them, which mongobench does not do.)
func detachedProcAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{}
	v := reflect.ValueOf(attr).Elem()

	if f := v.FieldByName("Setpgid"); f.IsValid() && f.Kind() == reflect.Bool {
		f.SetBool(true)
	}

	sigterm := reflect.ValueOf(syscall.SIGTERM)
	if f := v.FieldByName("Pdeathsig"); f.IsValid() && f.Type() == sigterm.Type() {
		f.Set(sigterm)
	}

	return attr
}

// waitReady waits until m answers a ping, and returns a client connected
// to it alone. A member that exits because its port was taken meanwhile is
// started again on another port.
func (c *mongodCluster) waitReady(ctx context.Context, m *mongodMember, used map[int]bool) (*mongo.Client, error) {
	for attempt := 1; ; attempt++ {
		client, err := c.connectMember(ctx, m)
		if err == nil {
			c.logger.Info("mongod: ready", "pid", m.cmd.Process.Pid, "port", m.port)
			return client, nil
		}

		if !errors.Is(err, errMongodExited) {
			return nil, err
		}

		log := m.logTail()
		if attempt < mongodBindAttempts && strings.Contains(strings.ToLower(log), "address already in use") {
			c.logger.Info("mongod: port was taken before mongod could bind it; trying another", "port", m.port)

			if err := c.spawn(m, used); err != nil {
				return nil, err
			}

			continue
		}

		msg := fmt.Sprintf("%s (%s) exited during start-up; its log ends with: %s", c.memberName(m), exitStatus(m.waitErr), log)
		if c.spec.Journal != nil && !*c.spec.Journal {
			msg += " (MongoDB 6.1 and later no longer accept --nojournal: drop journal=false)"
		}

		return nil, errors.New(msg)
	}
}

// errMongodExited marks a mongod that exited while it was awaited.
var errMongodExited = errors.New("mongod exited")

// connectMember waits until m's port accepts connections and the server
// there answers a ping and is m itself, and returns a client connected to
// it alone. It returns errMongodExited if m's process exits first.
func (c *mongodCluster) connectMember(ctx context.Context, m *mongodMember) (*mongo.Client, error) {
	tick := time.NewTicker(mongodPollInterval)
	defer tick.Stop()

	var dialer net.Dialer

	uri := "mongodb://" + hostPort(m.port) + "/?directConnection=true"
	warned := false

	for {
		select {
		case <-m.done:
			return nil, errMongodExited
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s: %w", c.memberName(m), context.Cause(ctx))
		case <-tick.C:
		}

		// A cheap probe first: mongod listens only once it is ready.
		dialCtx, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
		conn, err := dialer.DialContext(dialCtx, "tcp", hostPort(m.port))

		cancel()

		if err != nil {
			continue
		}

		_ = conn.Close()

		client, err := Connect(ctx, uri, ConnectOptions{Timeout: mongodConnectTimeout})
		if err != nil {
			// Whatever accepted the connection does not answer (yet);
			// unless mongod has exited, try again.
			continue
		}

		if isMember(ctx, client, m) {
			return client, nil
		}

		disconnect(client)

		// Another server took the port; mongod will fail to bind it and
		// exit, and is then started on another port.
		if !warned {
			c.logger.Info("mongod: another server answers on the port; waiting for mongod to give up", "port", m.port)
			warned = true
		}
	}
}

// mongodConnectTimeout bounds one attempt to connect to a starting mongod;
// attempts are repeated until the start-up's deadline.
const mongodConnectTimeout = 2 * time.Second

// isMember reports whether the server client talks to is m, judged by the
// --dbpath in its command line (getCmdLineOpts). A server that does not say
// (the command is missing or needs privileges) is taken to be m.
func isMember(ctx context.Context, client *mongo.Client, m *mongodMember) bool {
	raw, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "getCmdLineOpts", Value: 1}}).Raw()
	if err != nil {
		return true
	}

	argv, err := raw.LookupErr("argv")
	if err != nil {
		return true
	}

	arr, ok := argv.ArrayOK()
	if !ok {
		return true
	}

	values, err := arr.Values()
	if err != nil {
		return true
	}

	for _, v := range values {
		if s, ok := v.StringValueOK(); ok && (s == m.dbPath || s == "--dbpath="+m.dbPath) {
			return true
		}
	}

	return false
}

// memberName names m in messages: "mongod on port P", with the member's
// number in a replica set.
func (c *mongodCluster) memberName(m *mongodMember) string {
	if c.replSet == "" {
		return fmt.Sprintf("mongod on port %d", m.port)
	}

	return fmt.Sprintf("mongod member %d of %d on port %d", m.index+1, len(c.members), m.port)
}

// logTail returns the end of m's log, on one line.
func (m *mongodMember) logTail() string {
	b, err := os.ReadFile(m.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}

	if len(b) > mongodLogTail {
		b = b[len(b)-mongodLogTail:]
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}

	s := strings.Join(strings.Fields(string(b)), " ")
	if s == "" {
		return "(empty)"
	}

	return s
}

// buildVersion returns the server's version from buildInfo, or "".
func buildVersion(ctx context.Context, client *mongo.Client) string {
	raw, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Raw()
	if err != nil {
		return ""
	}

	return rawString(raw, "version")
}

// disconnect closes a start-up client, bounded so that cleanup never hangs.
func disconnect(client *mongo.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	_ = client.Disconnect(ctx)
}

// memberState is what a replica set member says about itself in hello.
type memberState struct {
	// Err is why the member could not be asked, or nil.
	Err error

	// Primary is hello's isWritablePrimary.
	Primary bool

	// Secondary is hello's secondary.
	Secondary bool
}

// String describes the state for error messages.
func (s memberState) String() string {
	switch {
	case s.Err != nil:
		return "unreachable (" + oneLine(s.Err.Error()) + ")"
	case s.Primary:
		return "primary"
	case s.Secondary:
		return "secondary"
	default:
		return "neither primary nor secondary"
	}
}

// replicaSetReady reports whether a replica set is ready to be measured:
// exactly one member is the writable primary and all others are
// secondaries, so that w:N and majority writes do not wait for an initial
// sync.
func replicaSetReady(states []memberState) bool {
	primaries := 0

	for _, s := range states {
		switch {
		case s.Err != nil:
			return false
		case s.Primary:
			primaries++
		case !s.Secondary:
			return false
		}
	}

	return primaries == 1
}

// waitForReplicaSet asks the n members with hello (through the hello
// function, for member i) until replicaSetReady holds or ctx is done.
func waitForReplicaSet(ctx context.Context, name string, hello func(context.Context, int) (bson.Raw, error), n int) error {
	tick := time.NewTicker(2 * mongodPollInterval)
	defer tick.Stop()

	states := make([]memberState, n)

	for {
		for i := range states {
			raw, err := hello(ctx, i)
			states[i] = memberState{Err: err}

			if err == nil {
				states[i].Primary = rawBool(raw, "isWritablePrimary")
				states[i].Secondary = rawBool(raw, "secondary")
			}
		}

		if replicaSetReady(states) {
			return nil
		}

		select {
		case <-ctx.Done():
			parts := make([]string, n)
			for i, s := range states {
				parts[i] = fmt.Sprintf("member %d %s", i+1, s)
			}

			return fmt.Errorf("replica set %s has no primary with caught-up secondaries (%s): %w",
				name, strings.Join(parts, ", "), context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// rawBool returns the boolean at key in doc, or false.
func rawBool(doc bson.Raw, key string) bool {
	v, err := doc.LookupErr(key)
	if err != nil {
		return false
	}

	b, _ := v.BooleanOK()

	return b
}

// description returns the Launched description of the cluster.
func (c *mongodCluster) description() string {
	name := "mongod"
	if c.version != "" {
		name += " " + c.version
	}

	topology := "standalone"
	if c.replSet != "" {
		topology = fmt.Sprintf("replica set %s of %d members", c.replSet, len(c.members))
	}

	parts := []string{topology}

	if c.spec.StorageEngine != "" {
		parts = append(parts, "storage engine "+c.spec.StorageEngine)
	}

	if j := c.spec.Journal; j != nil {
		journal := "journal off"
		if *j {
			journal = "journal on"
		}

		parts = append(parts, journal)
	}

	if c.spec.CacheSizeGB > 0 {
		parts = append(parts, "WiredTiger cache "+targetspec.FormatGB(c.spec.CacheSizeGB)+" GB")
	}

	if len(c.spec.Args) > 0 {
		parts = append(parts, "extra arguments "+strings.Join(c.spec.Args, " "))
	}

	return fmt.Sprintf("%s (%s) launched by mongobench: %s", name, c.binary, strings.Join(parts, ", "))
}

// notes returns the caveats of the cluster's configuration.
func (c *mongodCluster) notes() []string {
	var notes []string

	if j := c.spec.Journal; j != nil && !*j {
		notes = append(notes, "journaling is off (--nojournal), so writes acknowledged since the last checkpoint are lost if mongod crashes")
	}

	if c.replSet != "" {
		notes = append(notes, fmt.Sprintf("all %d replica set members run on this machine, so they share its CPU, memory and disk, "+
			"and replication crosses only the loopback interface", len(c.members)))
	}

	return notes
}

// stop stops every member at once and removes the temporary directory. With
// reportEarlyExit, a member that had exited before being asked to (a crash
// during the run) is reported as an error.
func (c *mongodCluster) stop(reportEarlyExit bool) error {
	errs := make([]error, len(c.members))

	var wg sync.WaitGroup

	for i, m := range c.members {
		wg.Go(func() {
			errs[i] = c.stopMember(m, reportEarlyExit)
		})
	}

	wg.Wait()

	if err := os.RemoveAll(c.root); err != nil {
		errs = append(errs, fmt.Errorf("remove mongod's temporary directory: %w", err))
	}

	return errors.Join(errs...)
}

// stopMember sends m SIGTERM, waits up to the stop timeout, then sends
// SIGKILL, and returns once the process has been reaped.
func (c *mongodCluster) stopMember(m *mongodMember, reportEarlyExit bool) error {
	if m.cmd == nil {
		return nil
	}

	pid := m.cmd.Process.Pid

	select {
	case <-m.done:
		if reportEarlyExit {
			return fmt.Errorf("%s (pid %d) had exited before mongobench stopped it (%s); see the run's errors",
				c.memberName(m), pid, exitStatus(m.waitErr))
		}

		return nil
	default:
	}

	// Where SIGTERM cannot be sent (Windows), the process is killed at once.
	escalated := false

	if err := m.cmd.Process.Signal(syscall.SIGTERM); err == nil || errors.Is(err, os.ErrProcessDone) {
		if waitDone(m.done, c.tuning.stopTimeout) {
			c.logger.Info("mongod: stopped", "pid", pid, "port", m.port)
			return nil
		}

		escalated = true
	}

	if err := m.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill %s (pid %d): %w", c.memberName(m), pid, err)
	}

	if !waitDone(m.done, mongodKillTimeout) {
		return fmt.Errorf("%s (pid %d) is still running after SIGKILL", c.memberName(m), pid)
	}

	if escalated {
		return fmt.Errorf("%s (pid %d) did not stop within %s of SIGTERM and was killed", c.memberName(m), pid, c.tuning.stopTimeout)
	}

	return nil
}

// exitStatus describes how a process ended, given what Wait returned.
func exitStatus(waitErr error) string {
	if waitErr == nil {
		return "exit status 0"
	}

	return waitErr.Error()
}

// waitDone waits up to d for ch to be closed.
func waitDone(ch <-chan struct{}, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()

	select {
	case <-ch:
		return true
	case <-timer.C:
		return false
	}
}
