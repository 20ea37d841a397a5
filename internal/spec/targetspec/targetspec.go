// Package targetspec holds the declarative description of a target: the
// fields a workload file's targets list and a --target flag write. It is
// part of the spec layer so that the workload file can be parsed without
// the launcher; which kinds exist, and what each accepts, is the registry
// of package targets, which checks a Spec (targets.Validate) and starts it.
// Nothing here names a kind: a kind is known only in its registry file.
package targetspec

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mongobench/mongobench/internal/base/redact"
)

// Spec describes one target: where a run's load goes, and for launched
// targets how the server is configured, so that a run can compare server
// configurations side by side. The YAML tags are the workload file's.
type Spec struct {
	// Name labels the target in the matrix of results. Empty means the
	// label Label derives from the kind and the settings.
	Name string `yaml:"name" json:"name,omitempty"`

	// Kind names a kind of package targets' registry (targets.Kinds).
	Kind string `yaml:"kind" json:"kind"`

	// URI is the connection string of a kind that connects to an existing
	// deployment; other kinds take none. It may hold a password, so it is
	// never printed as is, nor written to results files.
	URI string `yaml:"uri" json:"-"`

	// Settings are server configuration parameters of a kind that takes
	// them (PostgreSQL parameters such as synchronous_commit or fsync for
	// FerretDB on PostgreSQL). Other kinds take none.
	Settings map[string]string `yaml:"settings" json:"settings,omitempty"`

	// Mongod configures a kind that launches mongod; nil means a
	// standalone mongod from PATH with its default configuration. Other
	// kinds take none.
	Mongod *Mongod `yaml:"mongod" json:"mongod,omitempty"`
}

// Mongod configures the mongod processes of a target that launches them.
// The zero value is one standalone mongod found on PATH, with mongod's
// defaults.
type Mongod struct {
	// Binary is the mongod program to run: a path, or a name looked up in
	// PATH. Empty means "mongod" from PATH. It comes from the command line
	// (--target mongod:binary=..., --mongod-binary) or the environment
	// (MONGOBENCH_MONGOD), never from a workload file, which is data: a
	// workload's binary is read only to be refused (see docs/security.md).
	Binary string `yaml:"binary" json:"binary,omitempty"`

	// StorageEngine is passed as --storageEngine (e.g. "wiredTiger" or
	// "inMemory"); empty leaves mongod's default, WiredTiger.
	StorageEngine string `yaml:"storage_engine" json:"storage_engine,omitempty"`

	// Journal, when false, disables journaling with --nojournal. MongoDB 6.1
	// and later no longer accept --nojournal and refuse to start with it;
	// nil and true leave journaling at mongod's default (on).
	Journal *bool `yaml:"journal" json:"journal,omitempty"`

	// CacheSizeGB is passed as --wiredTigerCacheSizeGB when positive (0.25
	// to 10000); zero leaves mongod's default of about half the RAM.
	CacheSizeGB float64 `yaml:"cache_size_gb" json:"cache_size_gb,omitempty"`

	// ReplicaSet is the number of replica set members to launch, all on
	// this machine; 0 means a standalone mongod. A replica set of one
	// member is a replica set nonetheless (oplog, transactions, change
	// streams). Members after the seventh do not vote, as MongoDB requires.
	ReplicaSet int `yaml:"replica_set" json:"replica_set,omitempty"`

	// Args are further command-line arguments for every mongod, appended
	// after mongobench's own. Arguments that mongobench sets itself
	// (--dbpath, --port, --bind_ip, --replSet, ...) or that have a field
	// of their own here are rejected, and so is --fork.
	Args []string `yaml:"args" json:"args,omitempty"`
}

// FieldError is a problem with one field of a target spec. Field is the
// field's path within the target as a workload file writes it ("uri",
// "settings.fsync", "mongod.args[1]"), so that workload validation can
// point at the file's line; the message itself reads the same for a
// --target flag.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// Validator checks a spec against the registry of kinds, returning a
// *FieldError for a problem with one field. The spec layer cannot see the
// registry (it lives above, with the launcher), so whoever can passes one
// in: targets.Validate.
type Validator func(Spec) error

// Target returns the spec as a workload file may give it to the launcher:
// without a mongod binary, since a workload names no programs (the binary
// comes from the command line or the environment).
func (t Spec) Target() Spec {
	out := Spec{Name: t.Name, Kind: t.Kind, URI: t.URI, Settings: t.Settings}

	if m := t.Mongod; m != nil {
		out.Mongod = &Mongod{
			StorageEngine: m.StorageEngine, Journal: m.Journal,
			CacheSizeGB: m.CacheSizeGB, ReplicaSet: m.ReplicaSet, Args: m.Args,
		}
	}

	return out
}

// Label returns the target's label in the matrix: Name if set, otherwise
// the kind followed by its settings in the --target syntax, e.g.
// "ferretdb-postgres:fsync=off,synchronous_commit=off" or
// "mongod:journal=false,replica_set=3". A target with a connection string
// shows it with the password masked. It reads the fields a kind's
// validation let through, so it needs no knowledge of the kinds.
func (t Spec) Label() string {
	if t.Name != "" {
		return t.Name
	}

	if t.URI != "" {
		return t.Kind + ":" + redact.URI(t.URI)
	}

	var settings []string

	for _, k := range slices.Sorted(maps.Keys(t.Settings)) {
		settings = append(settings, k+"="+t.Settings[k])
	}

	if t.Mongod != nil {
		settings = append(settings, t.Mongod.Settings()...)
	}

	if len(settings) == 0 {
		return t.Kind
	}

	return t.Kind + ":" + strings.Join(settings, ",")
}

// Settings returns the options that differ from the defaults as key=value
// strings in the --target syntax, in a fixed order.
func (m *Mongod) Settings() []string {
	var out []string

	if m.StorageEngine != "" {
		out = append(out, "storage_engine="+m.StorageEngine)
	}

	if m.Journal != nil {
		out = append(out, "journal="+strconv.FormatBool(*m.Journal))
	}

	if m.CacheSizeGB > 0 {
		out = append(out, "cache_size_gb="+FormatGB(m.CacheSizeGB))
	}

	if m.ReplicaSet > 0 {
		out = append(out, "replica_set="+strconv.Itoa(m.ReplicaSet))
	}

	if m.Binary != "" {
		out = append(out, "binary="+m.Binary)
	}

	for _, a := range m.Args {
		out = append(out, "arg="+a)
	}

	return out
}

// FormatGB formats a size in gigabytes as mongod takes it: "1", "0.5".
func FormatGB(gb float64) string {
	return strconv.FormatFloat(gb, 'f', -1, 64)
}

// Clone returns a deep copy of t, so that a launched target's spec does not
// change when the caller's maps and slices do.
func (t Spec) Clone() Spec {
	t.Settings = maps.Clone(t.Settings)

	if t.Mongod != nil {
		m := *t.Mongod
		m.Args = slices.Clone(m.Args)

		if m.Journal != nil {
			j := *m.Journal
			m.Journal = &j
		}

		t.Mongod = &m
	}

	return t
}
