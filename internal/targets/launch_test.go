package targets

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/targets/pglaunch"
)

// ptr returns a pointer to v.
func ptr[T any](v T) *T {
	return &v
}

func TestParseTargetFlag(t *testing.T) {
	tests := []struct {
		flag string
		want TargetSpec
	}{
		{"embedded", TargetSpec{Name: "embedded", Kind: KindEmbedded}},
		{" embedded-memory ", TargetSpec{Name: "embedded-memory", Kind: KindEmbeddedMemory}},
		{"embedded:name=fast", TargetSpec{Name: "fast", Kind: KindEmbedded}},
		{"ferretdb-postgres", TargetSpec{Name: "ferretdb-postgres", Kind: KindFerretDBPostgres}},
		{
			"ferretdb-postgres:synchronous_commit=off,fsync=off",
			TargetSpec{
				Name: "ferretdb-postgres:fsync=off,synchronous_commit=off", Kind: KindFerretDBPostgres,
				Settings: map[string]string{"synchronous_commit": "off", "fsync": "off"},
			},
		},
		{
			"ferretdb-postgres: shared_buffers = 256MB , name=big",
			TargetSpec{Name: "big", Kind: KindFerretDBPostgres, Settings: map[string]string{"shared_buffers": "256MB"}},
		},
		{"mongod", TargetSpec{Name: "mongod", Kind: KindMongod, Mongod: &MongodSpec{}}},
		{
			"mongod:storage_engine=wiredTiger,journal=false,cache_size_gb=1,binary=/opt/mongod",
			TargetSpec{
				Name: "mongod:storage_engine=wiredTiger,journal=false,cache_size_gb=1,binary=/opt/mongod", Kind: KindMongod,
				Mongod: &MongodSpec{Binary: "/opt/mongod", StorageEngine: "wiredTiger", Journal: ptr(false), CacheSizeGB: 1},
			},
		},
		{
			"mongod:replica_set=3,name=rs3",
			TargetSpec{Name: "rs3", Kind: KindMongod, Mongod: &MongodSpec{ReplicaSet: 3}},
		},
		{
			"mongod:journal=1,cache_size_gb=0.5,arg=--quiet,arg=--setParameter=diagnosticDataCollectionEnabled=false",
			TargetSpec{
				Name: "mongod:journal=true,cache_size_gb=0.5,arg=--quiet,arg=--setParameter=diagnosticDataCollectionEnabled=false",
				Kind: KindMongod,
				Mongod: &MongodSpec{
					Journal: ptr(true), CacheSizeGB: 0.5,
					Args: []string{"--quiet", "--setParameter=diagnosticDataCollectionEnabled=false"},
				},
			},
		},
		{
			"mongod:storage_engine=inMemory,journal=false,replica_set=1",
			TargetSpec{
				Name: "mongod:storage_engine=inMemory,journal=false,replica_set=1", Kind: KindMongod,
				Mongod: &MongodSpec{StorageEngine: "inMemory", Journal: ptr(false), ReplicaSet: 1},
			},
		},
		{"uri:mongodb://host/", TargetSpec{Name: "uri:mongodb://host/", Kind: KindURI, URI: "mongodb://host/"}},
		{
			"uri:mongodb://bench:s3cret@host/",
			TargetSpec{Name: "uri:mongodb://bench:xxxxx@host/", Kind: KindURI, URI: "mongodb://bench:s3cret@host/"},
		},
		{
			"uri:name=prod,mongodb://bench:s3cret@a:27017,b:27017/?replicaSet=rs0",
			TargetSpec{Name: "prod", Kind: KindURI, URI: "mongodb://bench:s3cret@a:27017,b:27017/?replicaSet=rs0"},
		},
	}

	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			got, err := ParseTargetFlag(tt.flag)
			if err != nil {
				t.Fatal(err)
			}

			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseTargetFlag(%q)\n got %#v (mongod %+v)\nwant %#v (mongod %+v)", tt.flag, got, got.Mongod, tt.want, tt.want.Mongod)
			}
		})
	}
}

func TestParseTargetFlagErrors(t *testing.T) {
	tests := []struct {
		flag string
		want string
	}{
		{"", `"": no target given (want embedded, embedded-memory, ferretdb-postgres, mongod or uri)`},
		{"sqlite", `"sqlite": unknown target kind "sqlite" (want embedded, embedded-memory, ferretdb-postgres, mongod or uri)`},
		{"Embedded", `"Embedded": unknown target kind "Embedded" (want embedded, embedded-memory, ferretdb-postgres, mongod or uri)`},
		{"mongodb://bench:s3cret@host/", `"mongodb://bench:xxxxx@host/": a connection string needs the uri: prefix, as in uri:mongodb://host/`},
		{"embedded:", `"embedded:": nothing after "embedded:" (drop the colon, or add key=value settings)`},
		{"embedded:fsync=off", `"embedded:fsync=off": embedded targets take no settings other than name, got "fsync"`},
		{"embedded-memory:name=m,x=1", `"embedded-memory:name=m,x=1": embedded-memory targets take no settings other than name, got "x"`},
		{"embedded:name=", `"embedded:name=": setting "name" has no value`},
		{"ferretdb-postgres:fsync", `"ferretdb-postgres:fsync": setting "fsync" is not key=value`},
		{"ferretdb-postgres:=off", `"ferretdb-postgres:=off": setting "=off" is not key=value`},
		{"ferretdb-postgres:fsync=off,,x=1", `"ferretdb-postgres:fsync=off,,x=1": empty setting (two commas in a row, or a comma at the end?)`},
		{"ferretdb-postgres:fsync=off,", `"ferretdb-postgres:fsync=off,": empty setting (two commas in a row, or a comma at the end?)`},
		{"ferretdb-postgres:fsync=off,fsync=on", `"ferretdb-postgres:fsync=off,fsync=on": setting "fsync" is given twice`},
		{"ferretdb-postgres:name=a,name=b", `"ferretdb-postgres:name=a,name=b": setting "name" is given twice`},
		{"ferretdb-postgres:fsync=", `"ferretdb-postgres:fsync=": setting "fsync" has no value`},
		{"ferretdb-postgres:port=5433", `"ferretdb-postgres:port=5433": PostgreSQL setting "port" is managed by mongobench and cannot be changed`},
		{"ferretdb-postgres:Listen_Addresses=*", `"ferretdb-postgres:Listen_Addresses=*": invalid PostgreSQL setting name "Listen_Addresses": use lower-case letters, digits, '_' and '.'`},
		{"ferretdb-postgres:work-mem=4MB", `"ferretdb-postgres:work-mem=4MB": invalid PostgreSQL setting name "work-mem": use lower-case letters, digits, '_' and '.'`},
		{"mongod:journal=maybe", `"mongod:journal=maybe": journal must be true or false, got "maybe"`},
		{"mongod:replica_set=three", `"mongod:replica_set=three": replica_set must be a number of members, got "three"`},
		{"mongod:replica_set=51", `"mongod:replica_set=51": replica_set must be between 0 (standalone) and 50 members, got 51`},
		{"mongod:replica_set=-1", `"mongod:replica_set=-1": replica_set must be between 0 (standalone) and 50 members, got -1`},
		{"mongod:cache_size_gb=lots", `"mongod:cache_size_gb=lots": cache_size_gb must be a number of gigabytes, got "lots"`},
		{"mongod:cache_size_gb=0.1", `"mongod:cache_size_gb=0.1": cache_size_gb must be between 0.25 and 10000, got 0.1`},
		{"mongod:cache_size_gb=20000", `"mongod:cache_size_gb=20000": cache_size_gb must be between 0.25 and 10000, got 20000`},
		{"mongod:cache_size_gb=NaN", `"mongod:cache_size_gb=NaN": cache_size_gb must be a positive number of gigabytes, got NaN`},
		{"mongod:cache_size_gb=-1", `"mongod:cache_size_gb=-1": cache_size_gb must be a positive number of gigabytes, got -1`},
		{
			"mongod:storage_engine=inMemory,cache_size_gb=1",
			`"mongod:storage_engine=inMemory,cache_size_gb=1": cache_size_gb applies to the wiredTiger storage engine only, not to inMemory`,
		},
		{
			"mongod:storage_engine=--inMemory",
			`"mongod:storage_engine=--inMemory": storage_engine "--inMemory" is not a storage engine name (such as wiredTiger or inMemory)`,
		},
		{
			"mongod:engine=wiredTiger",
			`"mongod:engine=wiredTiger": unknown mongod setting "engine" (want storage_engine, journal, cache_size_gb, replica_set, binary, arg or name)`,
		},
		{
			"mongod:storage_engine=wiredTiger,journal=false,cache_size_gb=1,replica_set=3,binary=/opt/mongod",
			`"mongod:storage_engine=wiredTiger,journal=false,cache_size_gb=1,replica_set=3,binary=/opt/mongod": ` +
				`journal=false cannot be combined with replica_set: MongoDB does not run WiredTiger replica set members without a journal`,
		},
		{"mongod:arg=--port=1234", `"mongod:arg=--port=1234": mongod argument "--port" is not allowed in arg: mongobench picks a free port`},
		{"mongod:arg=--fork", `"mongod:arg=--fork": mongod argument "--fork" is not allowed in arg: mongobench must stay the parent of its mongod processes`},
		{"mongod:arg=--nojournal", `"mongod:arg=--nojournal": mongod argument "--nojournal" is not allowed in arg: use journal=false instead`},
		{"mongod:binary=/a,binary=/b", `"mongod:binary=/a,binary=/b": setting "binary" is given twice`},
		{"uri", `"uri": uri targets need a connection string, as in uri:mongodb://host/`},
		{"uri:", `"uri:": uri targets need a connection string, as in uri:mongodb://host/`},
		{"uri:name=prod", `"uri:name=prod": name=... must be followed by a comma and the connection string, as in uri:name=prod,mongodb://host/`},
		{"uri:name=prod,", `"uri:name=prod,": uri targets need a connection string, as in uri:mongodb://host/`},
		{"uri:name=,mongodb://bench:s3cret@host/", `"uri:name=,mongodb://bench:xxxxx@host/": name must not be empty`},
	}

	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			got, err := ParseTargetFlag(tt.flag)
			if err == nil {
				t.Fatalf("ParseTargetFlag(%q) = %+v, want an error", tt.flag, got)
			}

			if err.Error() != tt.want {
				t.Errorf("ParseTargetFlag(%q) error\n got %s\nwant %s", tt.flag, err, tt.want)
			}

			if strings.Contains(err.Error(), "s3cret") || strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("error leaks the password or spans lines: %q", err)
			}

			if !reflect.DeepEqual(got, TargetSpec{}) {
				t.Errorf("ParseTargetFlag returned %+v with its error, want the zero spec", got)
			}
		})
	}
}

func TestTargetSpecValidate(t *testing.T) {
	tests := []struct {
		name string
		spec TargetSpec
		want string // "" for valid
	}{
		{"embedded", TargetSpec{Kind: KindEmbedded}, ""},
		{"mongod without options", TargetSpec{Kind: KindMongod}, ""},
		{"uri", TargetSpec{Kind: KindURI, URI: "mongodb://h/"}, ""},
		{"inMemory replica set without journal", TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{StorageEngine: "inMemory", Journal: ptr(false), ReplicaSet: 3}}, ""},
		{"no kind", TargetSpec{}, `unknown target kind "" (want embedded, embedded-memory, ferretdb-postgres, mongod or uri)`},
		{"uri without URI", TargetSpec{Kind: KindURI, URI: " "}, "uri targets need a connection string"},
		{"embedded with URI", TargetSpec{Kind: KindEmbedded, URI: "mongodb://h/"}, "embedded targets take no connection string; only uri targets do"},
		{
			"mongod with settings",
			TargetSpec{Kind: KindMongod, Settings: map[string]string{"fsync": "off"}},
			"settings apply to ferretdb-postgres targets (PostgreSQL settings), not to mongod targets",
		},
		{
			"uri with mongod options",
			TargetSpec{Kind: KindURI, URI: "mongodb://h/", Mongod: &MongodSpec{}},
			"mongod options apply to mongod targets only, not to uri targets",
		},
		{
			"multi-line setting",
			TargetSpec{Kind: KindFerretDBPostgres, Settings: map[string]string{"work_mem": "4MB\nfsync = off"}},
			"PostgreSQL setting work_mem: the value must be one line without quotes, backslashes or control characters",
		},
		{
			"custom setting name",
			TargetSpec{Kind: KindFerretDBPostgres, Settings: map[string]string{"auto_explain.log_min_duration": "0"}},
			`PostgreSQL setting "auto_explain.log_min_duration" is not one mongobench lets a target change (see docs/security.md for the list)`,
		},
		{
			"infinite cache",
			TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{CacheSizeGB: math.Inf(1)}},
			"cache_size_gb must be a positive number of gigabytes, got +Inf",
		},
		{
			"binary with NUL",
			TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{Binary: "mon\x00god"}},
			"binary must not contain NUL characters",
		},
		{
			"replSet in args",
			TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{Args: []string{"--replSet", "rs"}}},
			`mongod argument "--replSet" is not allowed in arg: use replica_set instead`,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.spec)

			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("Validate() = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestTargetSpecLabel(t *testing.T) {
	tests := []struct {
		spec TargetSpec
		want string
	}{
		{TargetSpec{Kind: KindEmbedded}, "embedded"},
		{TargetSpec{Name: "fast", Kind: KindEmbedded}, "fast"},
		{TargetSpec{Kind: KindFerretDBPostgres, Settings: map[string]string{"shared_buffers": "1GB", "fsync": "off"}}, "ferretdb-postgres:fsync=off,shared_buffers=1GB"},
		{TargetSpec{Kind: KindMongod}, "mongod"},
		{TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{}}, "mongod"},
		{
			TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{Binary: "/opt/m", ReplicaSet: 3, CacheSizeGB: 2.5, Args: []string{"--quiet"}}},
			"mongod:cache_size_gb=2.5,replica_set=3,binary=/opt/m,arg=--quiet",
		},
		{TargetSpec{Kind: KindURI, URI: "mongodb://u:s3cret@h/?authSource=admin"}, "uri:mongodb://u:xxxxx@h/?authSource=admin"},
	}

	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.spec.Label(); got != tt.want {
				t.Errorf("Label() = %q, want %q", got, tt.want)
			}

			// Labels without a name or password read back as the same target.
			if tt.spec.Name != "" || strings.Contains(tt.want, "xxxxx") {
				return
			}

			back, err := ParseTargetFlag(tt.want)
			if err != nil {
				t.Fatalf("ParseTargetFlag(Label()) = %v", err)
			}

			if back.Label() != tt.want {
				t.Errorf("Label of the parsed label = %q, want %q", back.Label(), tt.want)
			}
		})
	}
}

func TestTargetSpecClone(t *testing.T) {
	orig := TargetSpec{
		Kind:     KindMongod,
		Settings: map[string]string{"a": "b"},
		Mongod:   &MongodSpec{Journal: ptr(true), Args: []string{"--quiet"}},
	}

	c := orig.Clone()
	orig.Settings["a"] = "changed"
	*orig.Mongod.Journal = false
	orig.Mongod.Args[0] = "changed"
	orig.Mongod.ReplicaSet = 3

	if c.Settings["a"] != "b" || !*c.Mongod.Journal || c.Mongod.Args[0] != "--quiet" || c.Mongod.ReplicaSet != 0 {
		t.Errorf("clone shares state with the original: %+v, mongod %+v", c, c.Mongod)
	}
}

// launch launches spec under parent and stops it when the test ends,
// failing the test if Stop fails.
func launch(t *testing.T, spec TargetSpec, parent string) *Launched {
	t.Helper()

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	l, err := Launch(ctx, spec, LaunchOptions{TempDir: parent})
	if err != nil {
		t.Fatalf("Launch(%s): %v", spec.Label(), err)
	}

	t.Cleanup(func() {
		if err := l.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})

	return l
}

// connectLaunched connects to l; the caller disconnects with disconnect.
func connectLaunched(t *testing.T, l *Launched) *mongo.Client {
	t.Helper()

	client, err := Connect(t.Context(), l.URI, ConnectOptions{MaxPoolSize: l.MaxPoolSize})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}

	return client
}

// insertAndFind writes two documents and reads one back.
func insertAndFind(t *testing.T, client *mongo.Client) {
	t.Helper()

	coll := client.Database("bench").Collection("items")

	docs := []any{
		bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: int32(1)}},
		bson.D{{Key: "_id", Value: "b"}, {Key: "n", Value: int32(2)}},
	}
	if _, err := coll.InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}

	var got struct {
		ID string `bson:"_id"`
		N  int32  `bson:"n"`
	}
	if err := coll.FindOne(t.Context(), bson.D{{Key: "n", Value: int32(2)}}).Decode(&got); err != nil {
		t.Fatal(err)
	}

	if got.ID != "b" || got.N != 2 {
		t.Errorf("found %+v, want {b 2}", got)
	}
}

// processAlive reports whether process pid exists (and is not a zombie of
// ours: children are reaped by their launcher).
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	alive := p.Signal(syscall.Signal(0)) == nil
	_ = p.Release()

	return alive
}

// assertGone fails the test if any of pids still runs, or if the test
// process has any child process left (which would become an orphan).
func assertGone(t *testing.T, pids ...int) {
	t.Helper()

	for _, pid := range pids {
		if processAlive(pid) {
			t.Errorf("process %d is still running", pid)
		}
	}

	if children := childProcesses(t); len(children) > 0 {
		t.Errorf("child processes left: %v", children)
	}
}

// childProcesses lists the test process's children on Linux, zombies
// included (an unreaped child is a leak too); elsewhere it returns nil.
// The tests that launch processes do not run in parallel, so any child is
// theirs.
func childProcesses(t *testing.T) []string {
	t.Helper()

	if runtime.GOOS != "linux" {
		return nil
	}

	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}

	self := strconv.Itoa(os.Getpid())

	var children []string

	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile
		}

		// "pid (comm) state ppid ...", where comm may hold spaces.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}

		if f := strings.Fields(string(b[i+1:])); len(f) >= 2 && f[1] == self {
			children = append(children, strings.TrimSpace(string(b[:i+1]))+" "+f[0])
		}
	}

	return children
}

func TestLaunchEmbedded(t *testing.T) {
	tests := []struct {
		kind      string
		desc      string
		wantNotes []string // each must appear in some note
	}{
		{KindEmbedded, "SQLite, file-backed", nil},
		{KindEmbeddedMemory, "SQLite, in-memory", []string{"deadlocks on updates that modify documents", "one operation per database at a time"}},
	}

	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			parent := t.TempDir()

			l, err := Launch(t.Context(), TargetSpec{Kind: tt.kind}, LaunchOptions{TempDir: parent})
			if err != nil {
				t.Fatal(err)
			}

			if !strings.HasPrefix(l.URI, "mongodb://127.0.0.1:") || !strings.Contains(l.Description, tt.desc) {
				t.Errorf("URI %q, Description %q; want a loopback URI and %q", l.URI, l.Description, tt.desc)
			}

			if len(l.Notes) < len(tt.wantNotes) {
				t.Errorf("Notes = %q, want notes about %q", l.Notes, tt.wantNotes)
			}

			for _, want := range tt.wantNotes {
				if !strings.Contains(strings.Join(l.Notes, "\n"), want) {
					t.Errorf("Notes = %q, want one saying %q", l.Notes, want)
				}
			}

			if l.Spec.Label() != tt.kind || l.MaxPoolSize != 0 {
				t.Errorf("Label = %q, MaxPoolSize = %d; want %q, 0", l.Spec.Label(), l.MaxPoolSize, tt.kind)
			}

			client := connectLaunched(t, l)
			insertAndFind(t, client)

			info, err := Describe(t.Context(), client)
			if err != nil {
				t.Fatal(err)
			}

			if info = l.Annotate(info); info.Product != ProductFerretDB || info.Backend != "SQLite" {
				t.Errorf("Describe+Annotate = %s (backend %q), want FerretDB on SQLite", info.Summary(), info.Backend)
			}

			disconnect(client)

			if err := l.Stop(); err != nil {
				t.Fatalf("Stop: %v", err)
			}

			assertEmptyDir(t, parent)

			if err := l.Stop(); err != nil {
				t.Errorf("second Stop: %v", err)
			}
		})
	}
}

// requirePostgreSQL skips the test when PostgreSQL cannot be launched here,
// or fails it when the CI environment variable is set.
func requirePostgreSQL(t *testing.T) {
	t.Helper()

	if err := pglaunch.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL is required under CI: %v", err)
		}

		t.Skipf("PostgreSQL is not available: %v", err)
	}
}

// reachableTempDir returns a per-test directory that the postgres user can
// enter, for when the tests run as root and PostgreSQL runs as postgres.
func reachableTempDir(t *testing.T) string {
	t.Helper()

	dir := t.TempDir()

	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	return dir
}

func TestLaunchFerretDBPostgres(t *testing.T) {
	requirePostgreSQL(t)

	parent := reachableTempDir(t)
	spec := TargetSpec{Kind: KindFerretDBPostgres, Settings: map[string]string{"synchronous_commit": "off", "fsync": "off"}}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	l, err := Launch(ctx, spec, LaunchOptions{TempDir: parent})
	if err != nil {
		t.Fatal(err)
	}

	for _, want := range []string{"embedded FerretDB", "PostgreSQL", "launched by mongobench with fsync=off, synchronous_commit=off"} {
		if !strings.Contains(l.Description, want) {
			t.Errorf("Description = %q, want it to contain %q", l.Description, want)
		}
	}

	if l.Spec.Label() != "ferretdb-postgres:fsync=off,synchronous_commit=off" {
		t.Errorf("Label = %q", l.Spec.Label())
	}

	if len(l.Notes) == 0 || !strings.Contains(l.Notes[0], "PostgreSQL") {
		t.Errorf("Notes = %q, want a note about PostgreSQL", l.Notes)
	}

	for setting, want := range spec.Settings {
		got, err := l.postgres.Psql(ctx, "postgres", "SHOW "+setting)
		if err != nil || got != want {
			t.Errorf("SHOW %s = %q, %v; want %q", setting, got, err, want)
		}
	}

	client := connectLaunched(t, l)
	insertAndFind(t, client)

	info, err := Describe(ctx, client)
	if err != nil {
		t.Fatal(err)
	}

	if info = l.Annotate(info); info.Product != ProductFerretDB || info.Backend != "PostgreSQL" {
		t.Errorf("Describe+Annotate = %s (backend %q), want FerretDB on PostgreSQL", info.Summary(), info.Backend)
	}

	disconnect(client)

	pid := l.postgres.PID()

	if err := l.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	assertGone(t, pid)
	assertEmptyDir(t, parent)

	if err := l.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestLaunchFerretDBPostgresBadSetting(t *testing.T) {
	requirePostgreSQL(t)

	parent := reachableTempDir(t)
	spec := TargetSpec{Kind: KindFerretDBPostgres, Settings: map[string]string{"no_such_setting": "1"}}

	l, err := Launch(t.Context(), spec, LaunchOptions{TempDir: parent})
	if err == nil {
		_ = l.Stop()
		t.Fatal("Launch accepted a setting PostgreSQL does not know")
	}

	if !strings.Contains(err.Error(), "no_such_setting") {
		t.Errorf("error = %v, want it to quote PostgreSQL's complaint", err)
	}

	assertEmptyDir(t, parent)
}

func TestLaunchURI(t *testing.T) {
	// Nothing listens there: Launch must not connect.
	uri := "mongodb://bench:s3cret@" + closedPort(t) + "/?authSource=admin"

	l := launch(t, TargetSpec{Kind: KindURI, URI: uri}, t.TempDir())

	if l.URI != uri {
		t.Errorf("URI = %q, want the one given", l.URI)
	}

	if strings.Contains(l.Description, "s3cret") || !strings.Contains(l.Description, "existing deployment at mongodb://bench:xxxxx@") {
		t.Errorf("Description = %q, want the redacted URI", l.Description)
	}

	if strings.Contains(l.Spec.Label(), "s3cret") {
		t.Errorf("Label = %q shows the password", l.Spec.Label())
	}

	if l.Notes != nil || l.MaxPoolSize != 0 {
		t.Errorf("Notes = %q, MaxPoolSize = %d; want none", l.Notes, l.MaxPoolSize)
	}

	if info := l.Annotate(ServerInfo{Product: ProductMongoDB}); info.Backend != "" {
		t.Errorf("Annotate changed a uri target's info: %+v", info)
	}
}

func TestLaunchRefusals(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name    string
		ctx     context.Context
		spec    TargetSpec
		wantErr error  // checked with errors.Is when set
		want    string // exact message when set
	}{
		{
			"invalid spec", context.Background(),
			TargetSpec{Kind: "sqlite"},
			nil,
			`unknown target kind "sqlite" (want embedded, embedded-memory, ferretdb-postgres, mongod or uri)`,
		},
		{"canceled embedded", canceled, TargetSpec{Kind: KindEmbedded}, context.Canceled, "launch embedded target: context canceled"},
		{"canceled embedded-memory", canceled, TargetSpec{Kind: KindEmbeddedMemory}, context.Canceled, ""},
		{"canceled ferretdb-postgres", canceled, TargetSpec{Kind: KindFerretDBPostgres}, context.Canceled, ""},
		{"canceled mongod", canceled, TargetSpec{Kind: KindMongod}, context.Canceled, ""},
		{"canceled uri", canceled, TargetSpec{Kind: KindURI, URI: "mongodb://h/"}, context.Canceled, ""},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()

			l, err := Launch(tt.ctx, tt.spec, LaunchOptions{TempDir: parent})
			if err == nil {
				_ = l.Stop()
				t.Fatal("Launch succeeded")
			}

			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error = %v, want %v", err, tt.wantErr)
			}

			if tt.want != "" && err.Error() != tt.want {
				t.Errorf("error = %q, want %q", err, tt.want)
			}

			assertEmptyDir(t, parent)
		})
	}
}

// TestLaunchedStopConcurrent covers Stop called from a signal path while
// the run's own cleanup calls it too.
func TestLaunchedStopConcurrent(t *testing.T) {
	parent := t.TempDir()

	l, err := Launch(t.Context(), TargetSpec{Kind: KindEmbedded}, LaunchOptions{TempDir: parent})
	if err != nil {
		t.Fatal(err)
	}

	errs := make(chan error, 4)
	for range cap(errs) {
		go func() { errs <- l.Stop() }()
	}

	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Errorf("Stop: %v", err)
		}
	}

	assertEmptyDir(t, parent)
}
