package targets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/spec/targetspec"
	"github.com/mongobench/mongobench/internal/targets/pglaunch"
)

// TargetSpec describes one target (see package targetspec, where the
// workload file's parser can reach it without the launcher).
type TargetSpec = targetspec.Spec

// MongodSpec configures the mongod processes of a mongod target.
type MongodSpec = targetspec.Mongod

// ParseTargetFlag parses the value of a --target flag into a TargetSpec:
// a kind, optionally followed by a colon and comma-separated key=value
// settings, as in
//
//	embedded
//	embedded-memory
//	ferretdb-postgres
//	ferretdb-postgres:synchronous_commit=off,fsync=off
//	mongod:storage_engine=wiredTiger,journal=false,cache_size_gb=1,binary=/opt/mongod
//	mongod:replica_set=3,name=rs3
//	uri:mongodb://host/
//
// Among the settings, name=... sets the target's Name; for uri targets it
// comes first, as in uri:name=prod,mongodb://host/. The settings of a
// ferretdb-postgres target are PostgreSQL parameters; those of a mongod
// target are storage_engine, journal, cache_size_gb, replica_set, binary
// and arg (repeatable, one mongod argument each, e.g. arg=--quiet). Without
// name=, Name is set to the target's Label, such as
// "ferretdb-postgres:fsync=off,synchronous_commit=off".
//
// The spec is validated as by Validate. An error is a single line that
// starts with the quoted flag value (its password, if any, masked), so that
// callers can prefix it with the flag's name.
func ParseTargetFlag(s string) (TargetSpec, error) {
	spec, err := parseTargetFlag(s)
	if err != nil {
		return TargetSpec{}, fmt.Errorf("%q: %w", displayFlag(s), err)
	}

	return spec, nil
}

// parseTargetFlag does ParseTargetFlag's work; its errors lack the flag.
func parseTargetFlag(s string) (TargetSpec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return TargetSpec{}, fmt.Errorf("no target given (want %s)", KindList())
	}

	kind, rest, hasRest := strings.Cut(s, ":")
	kind = strings.TrimSpace(kind)

	k, ok := LookupKind(kind)
	if !ok {
		if strings.Contains(s, "://") {
			return TargetSpec{}, fmt.Errorf("a connection string needs the %s: prefix, as in %s:mongodb://host/", KindURI, KindURI)
		}

		return TargetSpec{}, errUnknownKind(kind)
	}

	rest = strings.TrimSpace(rest)
	spec := TargetSpec{Kind: kind}

	switch {
	case k.flag != nil:
		if err := k.flag(&spec, rest); err != nil {
			return TargetSpec{}, err
		}

	case hasRest && rest == "":
		return TargetSpec{}, fmt.Errorf("nothing after %q (drop the colon, or add key=value settings)", kind+":")

	case hasRest:
		if err := parseSettings(&spec, rest); err != nil {
			return TargetSpec{}, err
		}
	}

	if k.defaults != nil {
		k.defaults(&spec)
	}

	if err := Validate(spec); err != nil {
		return TargetSpec{}, err
	}

	if spec.Name == "" {
		spec.Name = spec.Label()
	}

	return spec, nil
}

// parseSettings fills spec from the comma-separated key=value settings of
// a non-uri flag value.
func parseSettings(spec *TargetSpec, rest string) error {
	seen := map[string]bool{}

	kind, _ := LookupKind(spec.Kind)

	setting := kind.setting
	if setting == nil {
		setting = errNoSettings
	}

	for item := range strings.SplitSeq(rest, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return errors.New("empty setting (two commas in a row, or a comma at the end?)")
		}

		k, v, ok := strings.Cut(item, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)

		if !ok || k == "" {
			return fmt.Errorf("setting %q is not key=value", item)
		}

		if seen[k] && k != "arg" {
			return fmt.Errorf("setting %q is given twice", k)
		}

		seen[k] = true

		if v == "" {
			return fmt.Errorf("setting %q has no value", k)
		}

		if k == "name" {
			spec.Name = v
			continue
		}

		if err := setting(spec, k, v); err != nil {
			return err
		}
	}

	return nil
}

// displayFlag returns a --target value fit for an error message: a
// connection string in it has its password masked.
func displayFlag(s string) string {
	if i := strings.Index(s, "mongodb"); i >= 0 && strings.Contains(s[i:], "://") {
		return s[:i] + redact.URI(s[i:])
	}

	if strings.Contains(s, "://") {
		return redact.URI(s)
	}

	return s
}

// Validate reports whether the spec describes a target Launch can try, as
// its kind in the registry checks it: a known kind with only the fields
// that kind takes, a mongodb:// or mongodb+srv:// connection string,
// PostgreSQL settings from the allowed list with one-line values, and
// mongod options from the allowed list within the ranges mongod accepts.
// It does not look for programs on this machine; Launch does. The error is
// one line, without the target's name and without the connection string;
// it is a *FieldError naming the offending field. It is a
// targetspec.Validator, for workload validation.
func Validate(t TargetSpec) error {
	kind, ok := LookupKind(t.Kind)
	if !ok {
		return errUnknownKind(t.Kind)
	}

	return kind.validate(t)
}

// LaunchOptions tunes Launch. The zero value is ready to use.
type LaunchOptions struct {
	// Logger receives progress records about launched servers (where they
	// live, when they are ready, when they stop) and FerretDB's own log
	// records, which are plentiful at INFO and DEBUG. Nil discards all.
	Logger *slog.Logger

	// TempDir is the parent directory of the launched servers' temporary
	// directories; empty means os.TempDir(). When mongobench runs as root,
	// PostgreSQL runs as the postgres user, which must be able to enter
	// every directory on this path.
	TempDir string

	// DataDir, for the embedded kinds only, is an existing directory the
	// server keeps its files in and leaves in place when it stops, so that
	// a server killed by a durability check can be started again on the
	// same data (`mongobench serve --data-dir`). Empty: a fresh temporary
	// directory, removed at Stop.
	DataDir string

	// mongod tunes the start and stop of mongod targets; the zero value
	// is what a run uses (tests of this package shorten the stop timeout
	// or hand out a taken port).
	mongod mongodTuning
}

// Launched is a running target: a server mongobench started for the run,
// or, for a uri target, an existing deployment that it merely names. Stop it
// when the run ends. Its methods are safe for concurrent use.
type Launched struct {
	// Spec is the target as launched (a copy of what was given to Launch).
	Spec TargetSpec

	// URI is the connection string to give to Connect. It may hold a
	// password for uri targets; print redact.URI(URI) instead.
	URI string

	// Description is a one-line, human-readable account of what serves
	// the load, fit for printing: it never holds a password.
	Description string

	// Notes are plain-language caveats about the target for the run's
	// output, one sentence each.
	Notes []string

	// MaxPoolSize is the connection pool cap to pass to
	// ConnectOptions.MaxPoolSize; 0 means the driver's default.
	MaxPoolSize uint64

	logger   *slog.Logger
	embedded *Embedded
	postgres *pglaunch.Server
	mongod   *mongodCluster

	stopOnce sync.Once
	stopErr  error
}

// Launch starts the target spec describes and returns once it accepts
// connections:
//
//   - embedded and embedded-memory start FerretDB in-process on SQLite
//     (see StartEmbedded);
//   - ferretdb-postgres launches a private PostgreSQL from the machine's
//     binaries with spec.Settings (see package pglaunch), then FerretDB
//     in-process on top of it;
//   - mongod launches mongod processes from spec.Mongod.Binary or PATH: a
//     standalone, or a replica set that it initiates and waits for (see
//     MongodArgs and ReplicaSetConfig);
//   - uri starts nothing and connects to nothing; the deployment is used as
//     it is.
//
// Launched servers listen on 127.0.0.1 only, on free ports, and keep their
// data in temporary directories under opts.TempDir. ctx bounds only the
// start-up: once Launch has returned, the servers run until Stop, so that
// cancelling the run's context on Ctrl-C does not pull them from under the
// cleanup. When the start-up fails or ctx is cancelled, Launch stops
// everything it had started and removes its directories before it returns
// the error, which is one line without the target's name.
func Launch(ctx context.Context, spec TargetSpec, opts LaunchOptions) (*Launched, error) {
	if err := Validate(spec); err != nil {
		return nil, err
	}

	if ctx.Err() != nil {
		return nil, fmt.Errorf("launch %s target: %w", spec.Kind, context.Cause(ctx))
	}

	l := &Launched{Spec: spec.Clone(), logger: opts.Logger}
	if l.logger == nil {
		l.logger = slog.New(slog.DiscardHandler)
	}

	kind, _ := LookupKind(spec.Kind) // Validate found it

	if opts.DataDir != "" && spec.Kind != KindEmbedded && spec.Kind != KindEmbeddedMemory {
		return nil, fmt.Errorf("launch %s target: a data directory of one's own is for the %s and %s kinds only", spec.Kind, KindEmbedded, KindEmbeddedMemory)
	}

	err := kind.launch(ctx, l, opts)
	if err == nil {
		return l, nil
	}

	if stopErr := l.Stop(); stopErr != nil {
		return nil, fmt.Errorf("%w (cleaning up also failed: %s)", err, oneLine(stopErr.Error()))
	}

	return nil, err
}

// Annotate fills in what a launched server cannot tell about itself
// through the protocol (see Embedded.Annotate); for other targets it
// returns info unchanged.
func (l *Launched) Annotate(info ServerInfo) ServerInfo {
	if l.embedded != nil {
		return l.embedded.Annotate(info)
	}

	return info
}

// Stop stops what Launch started and removes its temporary directories:
// FerretDB first, then PostgreSQL (fast shutdown, escalating to SIGKILL;
// see pglaunch.Server.Stop) or the mongod processes (SIGTERM, up to 10
// seconds' wait, then SIGKILL). It returns only once the processes have
// been reaped. For a uri target it does nothing. Stop is idempotent and
// safe to call concurrently, e.g. from a signal handler while the run's
// own cleanup also calls it: later calls wait for the first one and return
// its result.
func (l *Launched) Stop() error {
	l.stopOnce.Do(func() {
		var errs []error

		if l.embedded != nil {
			if err := l.embedded.Close(); err != nil {
				errs = append(errs, err)
			}
		}

		if l.postgres != nil {
			if err := l.postgres.Stop(); err != nil {
				errs = append(errs, err)
			}
		}

		if l.mongod != nil {
			if err := l.mongod.stop(true); err != nil {
				errs = append(errs, err)
			}
		}

		l.stopErr = errors.Join(errs...)
	})

	return l.stopErr
}
