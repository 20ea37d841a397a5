package targets

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/base/freeport"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// The test binary doubles as a fake mongod: run with fakeMongodEnv=1, it
// serves the wire protocol with wiretest on the --port it is given, which
// answers ping, hello and buildInfo but not replSetInitiate, until SIGTERM.
const (
	fakeMongodEnv = "MONGOBENCH_FAKE_MONGOD"

	// fakeModeEnv selects a misbehaviour: "exit" (exit at once with an
	// error, as a mongod rejecting an option does), "slow-start" (never
	// listen), "ignore-term" (ignore SIGTERM).
	fakeModeEnv = "MONGOBENCH_FAKE_MONGOD_MODE"

	// fakePIDsEnv names a file each fake appends its pid to.
	fakePIDsEnv = "MONGOBENCH_FAKE_MONGOD_PIDS"

	// fakeArgsFile is written into --dbpath with the arguments received.
	fakeArgsFile = "fake-args"
)

func TestMain(m *testing.M) {
	if os.Getenv(fakeMongodEnv) == "1" {
		os.Exit(runFakeMongod(os.Args[1:]))
	}

	if os.Getenv(serveChildEnv) == "1" {
		os.Exit(runServeChild(os.Args[1:]))
	}

	os.Exit(m.Run())
}

// runFakeMongod is the fake mongod's main function.
func runFakeMongod(args []string) int {
	var port, dbPath string

	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--port":
			port = args[i+1]
		case "--dbpath":
			dbPath = args[i+1]
		}
	}

	if f := os.Getenv(fakePIDsEnv); f != "" {
		pf, err := os.OpenFile(f, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Println("fake mongod:", err)
			return 1
		}

		_, _ = fmt.Fprintln(pf, os.Getpid())
		_ = pf.Close()
	}

	mode := os.Getenv(fakeModeEnv)

	sigs := make(chan os.Signal, 1)
	if mode == "ignore-term" {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	}

	switch mode {
	case "exit":
		fmt.Println("fake mongod: Error parsing command line: unrecognised option '--nojournal'")
		return 2

	case "slow-start":
		select {
		case <-sigs:
			return 0
		case <-time.After(time.Minute):
			return 1
		}
	}

	if err := os.WriteFile(filepath.Join(dbPath, fakeArgsFile), []byte(strings.Join(args, "\n")), 0o600); err != nil {
		fmt.Println("fake mongod:", err)
		return 1
	}

	srv, err := wiretest.Start(wiretest.Config{Addr: "127.0.0.1:" + port})
	if err != nil {
		fmt.Println("fake mongod:", err)
		return 48 // mongod's exit code for network errors
	}

	fmt.Println("fake mongod: waiting for connections on port", port)

	if mode == "ignore-term" {
		time.Sleep(time.Hour)
	}

	<-sigs
	_ = srv.Close()

	return 0
}

// useFakeMongod makes the test binary act as mongod in processes Launch
// starts, in the given mode, and returns its path and the file its pids are
// appended to.
func useFakeMongod(t *testing.T, mode string) (binary, pidsFile string) {
	t.Helper()

	if runtime.GOOS == "windows" {
		t.Skip("the fake mongod relies on Unix signals")
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}

	pidsFile = filepath.Join(t.TempDir(), "pids")

	t.Setenv(fakeMongodEnv, "1")
	t.Setenv(fakeModeEnv, mode)
	t.Setenv(fakePIDsEnv, pidsFile)

	return exe, pidsFile
}

// pidsIn returns the pids the fakes have written to file so far.
func pidsIn(file string) ([]int, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}

	if err != nil {
		return nil, err
	}

	var pids []int

	for f := range strings.FieldsSeq(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("pids file: %w", err)
		}

		pids = append(pids, pid)
	}

	return pids, nil
}

// readPIDs returns the pids the fakes have written so far.
func readPIDs(t *testing.T, file string) []int {
	t.Helper()

	pids, err := pidsIn(file)
	if err != nil {
		t.Fatal(err)
	}

	return pids
}

// clusterDir returns the only mongod temporary directory under parent.
func clusterDir(t *testing.T, parent string) string {
	t.Helper()

	dirs, err := filepath.Glob(filepath.Join(parent, "mongobench-mongod-*"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("mongod directories under %s: %q, %v; want one", parent, dirs, err)
	}

	return dirs[0]
}

func TestMongodArgs(t *testing.T) {
	base := []string{"--dbpath", "/d/db", "--port", "40001", "--bind_ip", "127.0.0.1", "--nounixsocket"}

	tests := []struct {
		name    string
		spec    MongodSpec
		replSet string
		want    []string
	}{
		{"defaults", MongodSpec{}, "", base},
		{"journal on leaves the default", MongodSpec{Journal: ptr(true)}, "", base},
		{"journal off", MongodSpec{Journal: ptr(false)}, "", append(slices.Clone(base), "--nojournal")},
		{"storage engine", MongodSpec{StorageEngine: "inMemory"}, "", append(slices.Clone(base), "--storageEngine", "inMemory")},
		{"cache size", MongodSpec{CacheSizeGB: 0.25}, "", append(slices.Clone(base), "--wiredTigerCacheSizeGB", "0.25")},
		{"replica set", MongodSpec{ReplicaSet: 3}, "rs", append(slices.Clone(base), "--replSet", "rs")},
		{"replica set count alone does nothing", MongodSpec{ReplicaSet: 3}, "", base},
		{"binary is not an argument", MongodSpec{Binary: "/opt/mongod"}, "", base},
		{
			"everything, extra args last",
			MongodSpec{
				StorageEngine: "wiredTiger", Journal: ptr(false), CacheSizeGB: 1.5, ReplicaSet: 1,
				Args: []string{"--setParameter", "diagnosticDataCollectionEnabled=false", "--quiet"},
			},
			"mongobench",
			append(slices.Clone(base),
				"--storageEngine", "wiredTiger", "--nojournal", "--wiredTigerCacheSizeGB", "1.5", "--replSet", "mongobench",
				"--setParameter", "diagnosticDataCollectionEnabled=false", "--quiet"),
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MongodArgs(tt.spec, "/d/db", 40001, tt.replSet)
			if !slices.Equal(got, tt.want) {
				t.Errorf("MongodArgs =\n %q\nwant\n %q", got, tt.want)
			}
		})
	}
}

func TestReplicaSetConfig(t *testing.T) {
	member := func(id int, host string) bson.D {
		return bson.D{{Key: "_id", Value: int32(id)}, {Key: "host", Value: host}}
	}

	nonVoting := func(id int, host string) bson.D {
		return append(member(id, host), bson.E{Key: "votes", Value: int32(0)}, bson.E{Key: "priority", Value: int32(0)})
	}

	var nine []string
	for i := range 9 {
		nine = append(nine, "127.0.0.1:"+strconv.Itoa(40000+i))
	}

	wantNine := bson.A{}
	for i, h := range nine {
		if i < 7 {
			wantNine = append(wantNine, member(i, h))
		} else {
			wantNine = append(wantNine, nonVoting(i, h))
		}
	}

	tests := []struct {
		name  string
		hosts []string
		want  bson.D
	}{
		{"one member", []string{"127.0.0.1:1"}, bson.D{
			{Key: "_id", Value: "rs"},
			{Key: "members", Value: bson.A{member(0, "127.0.0.1:1")}},
		}},
		{"three members", []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}, bson.D{
			{Key: "_id", Value: "rs"},
			{Key: "members", Value: bson.A{member(0, "127.0.0.1:1"), member(1, "127.0.0.1:2"), member(2, "127.0.0.1:3")}},
		}},
		{"members after the seventh do not vote", nine, bson.D{{Key: "_id", Value: "rs"}, {Key: "members", Value: wantNine}}},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ReplicaSetConfig("rs", tt.hosts)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReplicaSetConfig =\n %v\nwant\n %v", got, tt.want)
			}

			// It must encode as the document replSetInitiate takes.
			if _, err := bson.Marshal(bson.D{{Key: "replSetInitiate", Value: got}}); err != nil {
				t.Errorf("cannot encode: %v", err)
			}
		})
	}
}

func TestMongodURI(t *testing.T) {
	tests := []struct {
		ports   []int
		replSet string
		want    string
	}{
		{[]int{40001}, "", "mongodb://127.0.0.1:40001/"},
		{[]int{40001}, "mongobench", "mongodb://127.0.0.1:40001/?replicaSet=mongobench"},
		{[]int{40001, 40002, 40003}, "mongobench", "mongodb://127.0.0.1:40001,127.0.0.1:40002,127.0.0.1:40003/?replicaSet=mongobench"},
	}

	for _, tt := range tests {
		if got := mongodURI(tt.ports, tt.replSet); got != tt.want {
			t.Errorf("mongodURI(%v, %q) = %q, want %q", tt.ports, tt.replSet, got, tt.want)
		}
	}
}

func TestReplicaSetReady(t *testing.T) {
	var (
		primary   = memberState{Primary: true}
		secondary = memberState{Secondary: true}
		other     = memberState{}
		down      = memberState{Err: errors.New("connection refused")}
	)

	tests := []struct {
		name   string
		states []memberState
		want   bool
	}{
		{"single primary", []memberState{primary}, true},
		{"primary and secondaries", []memberState{secondary, primary, secondary}, true},
		{"no primary yet", []memberState{secondary, secondary, secondary}, false},
		{"a member still in initial sync", []memberState{primary, other, secondary}, false},
		{"a member unreachable", []memberState{primary, secondary, down}, false},
		{"two primaries", []memberState{primary, primary}, false},
		{"nothing", nil, false},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := replicaSetReady(tt.states); got != tt.want {
				t.Errorf("replicaSetReady(%v) = %v, want %v", tt.states, got, tt.want)
			}
		})
	}
}

func TestWaitForReplicaSet(t *testing.T) {
	reply := func(primary, secondary bool) bson.Raw {
		raw, err := bson.Marshal(bson.D{
			{Key: "isWritablePrimary", Value: primary}, {Key: "secondary", Value: secondary}, {Key: "ok", Value: 1.0},
		})
		if err != nil {
			t.Fatal(err)
		}

		return raw
	}

	// Rounds of hello replies for two members, the last repeating.
	type answer struct {
		primary, secondary bool
		err                error
	}

	refused := errors.New("connection refused")

	tests := []struct {
		name    string
		rounds  [][2]answer
		timeout time.Duration
		want    string // "" for success, else the error's start
	}{
		{"elected after a while", [][2]answer{
			{{err: refused}, {err: refused}},
			{{}, {}},
			{{secondary: true}, {}},
			{{primary: true}, {secondary: true}},
		}, 10 * time.Second, ""},
		{"never elected", [][2]answer{
			{{secondary: true}, {err: refused}},
		}, 300 * time.Millisecond, "replica set rs has no primary with caught-up secondaries " +
			"(member 1 secondary, member 2 unreachable (connection refused)): context deadline exceeded"},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), tt.timeout)
			defer cancel()

			calls := 0
			hello := func(_ context.Context, i int) (bson.Raw, error) {
				round := tt.rounds[min(calls/2, len(tt.rounds)-1)]
				calls++

				a := round[i]
				if a.err != nil {
					return nil, a.err
				}

				return reply(a.primary, a.secondary), nil
			}

			err := waitForReplicaSet(ctx, "rs", hello, 2)

			switch {
			case tt.want == "" && err != nil:
				t.Errorf("waitForReplicaSet = %v, want nil", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("waitForReplicaSet = %v, want %s", err, tt.want)
			case tt.want != "" && !errors.Is(err, context.DeadlineExceeded):
				t.Errorf("waitForReplicaSet = %v, want it to wrap the context's error", err)
			}
		})
	}
}

func TestDetachedProcAttr(t *testing.T) {
	v := reflect.ValueOf(detachedProcAttr()).Elem()

	if f := v.FieldByName("Setpgid"); f.IsValid() && !f.Bool() {
		t.Error("Setpgid is false: a Ctrl-C at the terminal would reach mongod directly")
	}

	f := v.FieldByName("Pdeathsig")
	if runtime.GOOS == "linux" && (!f.IsValid() || f.Interface() != syscall.SIGTERM) {
		t.Error("Pdeathsig is not SIGTERM: mongod would outlive a killed mongobench")
	}
}

func TestLaunchMongodNotFound(t *testing.T) {
	dir := t.TempDir()

	notExecutable := filepath.Join(dir, "mongod-not-executable")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		binary string
		want   string
	}{
		{"nothing on PATH", "", "no mongod binary found (give one with --mongod-binary or MONGOBENCH_MONGOD, or put mongod on PATH); mongod targets cannot run on this machine"},
		{"missing path", "/nonexistent/mongod", `mongod binary "/nonexistent/mongod" cannot be run: stat /nonexistent/mongod: no such file or directory`},
		{"name not on PATH", "mongod-7.0", `mongod binary "mongod-7.0" cannot be run: executable file not found in $PATH`},
		{"not executable", notExecutable, fmt.Sprintf(`mongod binary %q cannot be run: permission denied`, notExecutable)},
	}

	// An empty PATH directory: no mongod whatever the machine has.
	t.Setenv("PATH", t.TempDir())

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			spec := TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{Binary: tt.binary}}

			l, err := Launch(t.Context(), spec, LaunchOptions{TempDir: parent})
			if err == nil {
				_ = l.Stop()
				t.Fatal("Launch succeeded without a mongod")
			}

			if err.Error() != tt.want {
				t.Errorf("error = %q, want %q", err, tt.want)
			}

			assertEmptyDir(t, parent)
		})
	}
}

func TestLaunchMongodStandalone(t *testing.T) {
	binary, pidsFile := useFakeMongod(t, "")
	parent := t.TempDir()

	spec := TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{
		Binary: binary, StorageEngine: "wiredTiger", Journal: ptr(true), CacheSizeGB: 0.5, Args: []string{"--quiet"},
	}}

	l, err := Launch(t.Context(), spec, LaunchOptions{TempDir: parent})
	if err != nil {
		t.Fatal(err)
	}

	if !regexp.MustCompile(`^mongodb://127\.0\.0\.1:\d+/$`).MatchString(l.URI) {
		t.Errorf("URI = %q, want a standalone on 127.0.0.1", l.URI)
	}

	wantDesc := "mongod 7.0.0 (" + binary + ") launched by mongobench: standalone, storage engine wiredTiger, journal on, " +
		"WiredTiger cache 0.5 GB, extra arguments --quiet"
	if l.Description != wantDesc {
		t.Errorf("Description =\n %q\nwant\n %q", l.Description, wantDesc)
	}

	if l.Notes != nil || l.MaxPoolSize != 0 {
		t.Errorf("Notes = %q, MaxPoolSize = %d; want none, 0", l.Notes, l.MaxPoolSize)
	}

	client := connectLaunched(t, l)

	if _, err := client.Database("bench").Collection("items").InsertOne(t.Context(), bson.D{{Key: "n", Value: 1}}); err != nil {
		t.Errorf("insert: %v", err)
	}

	disconnect(client)

	// The fake got exactly what MongodArgs builds.
	dbPath := filepath.Join(clusterDir(t, parent), "member0", "db")
	port, _ := strconv.Atoi(l.URI[strings.LastIndex(l.URI, ":")+1 : len(l.URI)-1])

	got, err := os.ReadFile(filepath.Join(dbPath, fakeArgsFile))
	if err != nil {
		t.Fatal(err)
	}

	if want := strings.Join(MongodArgs(*spec.Mongod, dbPath, port, ""), "\n"); string(got) != want {
		t.Errorf("mongod got arguments\n %q\nwant\n %q", got, want)
	}

	pids := readPIDs(t, pidsFile)
	if len(pids) != 1 || !processAlive(pids[0]) {
		t.Fatalf("fake mongod pids = %v, want one running", pids)
	}

	if err := l.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	assertGone(t, pids...)
	assertEmptyDir(t, parent)

	if err := l.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TestLaunchMongodReplicaSetInitiateFails uses fakes that do not know
// replSetInitiate: Launch must stop all members and remove their data.
func TestLaunchMongodReplicaSetInitiateFails(t *testing.T) {
	binary, pidsFile := useFakeMongod(t, "")
	parent := t.TempDir()

	spec := TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{Binary: binary, ReplicaSet: 3}}

	l, err := Launch(t.Context(), spec, LaunchOptions{TempDir: parent})
	if err == nil {
		_ = l.Stop()
		t.Fatal("Launch succeeded although replSetInitiate fails")
	}

	want := regexp.MustCompile(`^initiate replica set mongobench on 127\.0\.0\.1:\d+: replSetInitiate: .*no such command: 'replSetInitiate'`)
	if !want.MatchString(err.Error()) {
		t.Errorf("error = %q, want it to match %s", err, want)
	}

	pids := readPIDs(t, pidsFile)
	if len(pids) != 3 {
		t.Errorf("fake mongod pids = %v, want 3", pids)
	}

	assertGone(t, pids...)
	assertEmptyDir(t, parent)
}

func TestLaunchMongodExitsDuringStartup(t *testing.T) {
	tests := []struct {
		name    string
		journal *bool
		want    string // regexp
	}{
		{"default journal", nil, `^mongod on port \d+ \(exit status 2\) exited during start-up; its log ends with: ` +
			`fake mongod: Error parsing command line: unrecognised option '--nojournal'$`},
		{"journal off", ptr(false), `^mongod on port \d+ \(exit status 2\) exited during start-up; its log ends with: ` +
			`fake mongod: Error parsing command line: unrecognised option '--nojournal' ` +
			`\(MongoDB 6\.1 and later no longer accept --nojournal: drop journal=false\)$`},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			binary, pidsFile := useFakeMongod(t, "exit")
			parent := t.TempDir()

			spec := TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{Binary: binary, Journal: tt.journal}}

			l, err := Launch(t.Context(), spec, LaunchOptions{TempDir: parent})
			if err == nil {
				_ = l.Stop()
				t.Fatal("Launch succeeded although mongod exited")
			}

			if !regexp.MustCompile(tt.want).MatchString(err.Error()) {
				t.Errorf("error =\n %q\nwant it to match\n %s", err, tt.want)
			}

			assertGone(t, readPIDs(t, pidsFile)...)
			assertEmptyDir(t, parent)
		})
	}
}

// TestLaunchMongodInterrupted covers Ctrl-C (a cancelled context) and a
// deadline while mongod processes are starting.
func TestLaunchMongodInterrupted(t *testing.T) {
	tests := []struct {
		name    string
		members int
		timeout time.Duration // 0: cancel once all fakes run
		wantErr error
	}{
		{"cancel standalone", 0, 0, context.Canceled},
		{"cancel replica set", 3, 0, context.Canceled},
		{"deadline", 2, time.Second, context.DeadlineExceeded},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			binary, pidsFile := useFakeMongod(t, "slow-start")
			parent := t.TempDir()

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()

			if tt.timeout > 0 {
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			} else {
				// Cancel once every fake runs, so that all of them have
				// to be stopped.
				go func() {
					defer cancel()

					for ctx.Err() == nil {
						if pids, _ := pidsIn(pidsFile); len(pids) >= max(1, tt.members) {
							return
						}

						time.Sleep(20 * time.Millisecond)
					}
				}()
			}

			spec := TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{Binary: binary, ReplicaSet: tt.members}}

			start := time.Now()

			l, err := Launch(ctx, spec, LaunchOptions{TempDir: parent})
			if err == nil {
				_ = l.Stop()
				t.Fatal("Launch succeeded although no mongod ever listened")
			}

			if !errors.Is(err, tt.wantErr) || !strings.HasPrefix(err.Error(), "start mongod: ") {
				t.Errorf("error = %v, want start mongod: %v", err, tt.wantErr)
			}

			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("Launch returned %s after the start", d)
			}

			// At a deadline, a fake may be stopped before it wrote its
			// pid; assertGone also checks that no child is left.
			pids := readPIDs(t, pidsFile)
			if len(pids) == 0 || len(pids) > max(1, tt.members) || (tt.timeout == 0 && len(pids) != max(1, tt.members)) {
				t.Errorf("fake mongod pids = %v, want %d", pids, max(1, tt.members))
			}

			assertGone(t, pids...)
			assertEmptyDir(t, parent)
		})
	}
}

func TestMongodStopEscalatesToSIGKILL(t *testing.T) {
	binary, pidsFile := useFakeMongod(t, "ignore-term")
	parent := t.TempDir()

	l, err := Launch(t.Context(), TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{Binary: binary}},
		LaunchOptions{TempDir: parent, mongod: mongodTuning{stopTimeout: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}

	pids := readPIDs(t, pidsFile)

	err = l.Stop()

	want := regexp.MustCompile(`^mongod on port \d+ \(pid \d+\) did not stop within 300ms of SIGTERM and was killed$`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Errorf("Stop = %v, want it to match %s", err, want)
	}

	assertGone(t, pids...)
	assertEmptyDir(t, parent)
}

// TestMongodCrashedDuringRun covers a mongod that died before Stop: Stop
// says so and still cleans up.
func TestMongodCrashedDuringRun(t *testing.T) {
	binary, pidsFile := useFakeMongod(t, "")
	parent := t.TempDir()

	l, err := Launch(t.Context(), TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{Binary: binary}}, LaunchOptions{TempDir: parent})
	if err != nil {
		t.Fatal(err)
	}

	pids := readPIDs(t, pidsFile)

	p, err := os.FindProcess(pids[0])
	if err != nil {
		t.Fatal(err)
	}

	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}

	<-l.mongod.members[0].done

	err = l.Stop()

	want := regexp.MustCompile(`^mongod on port \d+ \(pid \d+\) had exited before mongobench stopped it \(signal: killed\); see the run's errors$`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Errorf("Stop = %v, want it to match %s", err, want)
	}

	assertGone(t, pids...)
	assertEmptyDir(t, parent)
}

// TestMongodPortTaken covers a port that is taken between being picked
// and mongod binding it: the member starts again on another port.
func TestMongodPortTaken(t *testing.T) {
	binary, pidsFile := useFakeMongod(t, "")
	parent := t.TempDir()

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()

	takenPort := taken.Addr().(*net.TCPAddr).Port

	calls := 0
	pickPort := func() (int, error) {
		calls++
		if calls == 1 {
			return takenPort, nil
		}

		return freeport.Loopback()
	}

	l, err := Launch(t.Context(), TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{Binary: binary}},
		LaunchOptions{TempDir: parent, mongod: mongodTuning{pickPort: pickPort}})
	if err != nil {
		t.Fatal(err)
	}

	if strings.Contains(l.URI, ":"+strconv.Itoa(takenPort)+"/") {
		t.Errorf("URI = %q uses the taken port", l.URI)
	}

	pids := readPIDs(t, pidsFile)
	if len(pids) != 2 {
		t.Errorf("fake mongod pids = %v, want 2 (one failed bind, one retry)", pids)
	}

	if err := l.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	assertGone(t, pids...)
	assertEmptyDir(t, parent)
}
