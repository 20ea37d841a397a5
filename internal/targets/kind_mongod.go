package targets

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// KindMongod is one mongod process, or a replica set of several, launched
// by mongobench from a mongod binary that the command line, the
// environment or PATH provide (never a workload file).
const KindMongod = "mongod"

// mongodKind registers KindMongod.
func mongodKind() Kind {
	return Kind{
		Name:        KindMongod,
		Description: "mongod processes (a standalone or a replica set) launched from a mongod binary given by --mongod-binary, MONGOBENCH_MONGOD or PATH",
		Launched:    true,
		setting: func(t *TargetSpec, k, v string) error {
			if t.Mongod == nil {
				t.Mongod = &MongodSpec{}
			}

			return parseMongodSetting(t.Mongod, k, v)
		},
		// A mongod target always has options, so that --mongod-binary
		// and the launcher fill them in rather than test for nil.
		defaults: func(t *TargetSpec) {
			if t.Mongod == nil {
				t.Mongod = &MongodSpec{}
			}
		},
		validate: func(t TargetSpec) error {
			if err := onlyFields(t, false, false, true); err != nil {
				return err
			}

			if t.Mongod == nil {
				return nil
			}

			return validateMongod(t.Mongod)
		},
		launch: func(ctx context.Context, l *Launched, opts LaunchOptions) error {
			return l.launchMongod(ctx, opts)
		},
	}
}

// parseMongodSetting sets one key=value setting of a mongod flag value.
func parseMongodSetting(m *MongodSpec, k, v string) error {
	switch k {
	case "binary":
		m.Binary = v

	case "storage_engine":
		m.StorageEngine = v

	case "journal":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("journal must be true or false, got %q", v)
		}

		m.Journal = &b

	case "cache_size_gb":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("cache_size_gb must be a number of gigabytes, got %q", v)
		}

		m.CacheSizeGB = f

	case "replica_set":
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("replica_set must be a number of members, got %q", v)
		}

		m.ReplicaSet = n

	case "arg":
		m.Args = append(m.Args, v)

	default:
		return fmt.Errorf("unknown mongod setting %q (want storage_engine, journal, cache_size_gb, replica_set, binary, arg or name)", k)
	}

	return nil
}

// maxReplicaSetMembers is MongoDB's limit on the members of a replica set.
const maxReplicaSetMembers = 50

// Bounds of --wiredTigerCacheSizeGB that mongod accepts.
const (
	minCacheSizeGB = 0.25
	maxCacheSizeGB = 10000
)

// storageEngineName matches plausible storage engine names, so that a typo
// such as "--inMemory" is caught before mongod is started.
var storageEngineName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// managedMongodArgs are the mongod arguments a MongodSpec may not pass in
// Args because mongobench sets them or they have a field of their own, with
// what to do instead.
var managedMongodArgs = map[string]string{
	"--dbpath":                "mongobench sets it to a temporary directory",
	"--port":                  "mongobench picks a free port",
	"--bind_ip":               "mongobench binds to 127.0.0.1 only",
	"--bind_ip_all":           "mongobench binds to 127.0.0.1 only",
	"--replSet":               "use replica_set instead",
	"--fork":                  "mongobench must stay the parent of its mongod processes",
	"--storageEngine":         "use storage_engine instead",
	"--wiredTigerCacheSizeGB": "use cache_size_gb instead",
	"--nojournal":             "use journal=false instead",
	"--journal":               "use journal instead",
	"--nounixsocket":          "mongobench sets it",
	"--unixSocketPrefix":      "mongobench disables the Unix socket",
}

// mongodArgValue is what an allowed option with a value takes: numbers,
// names and booleans, nothing that could be a path or a second option.
type mongodArgValue int

const (
	mongodFlag   mongodArgValue = iota // no value: --quiet
	mongodNumber                       // --slowms=100
	mongodWord                         // --wiredTigerCollectionBlockCompressor=zstd
	mongodParam                        // --setParameter=name=value, name from mongodParameters
)

// mongodOptions are the mongod options Args may pass, each written as one
// argument (--name or --name=value). They tune performance and diagnostics
// only: options that name files or programs (--config, --keyFile,
// --logpath, --pidfilepath, --auditPath, TLS files, ...), that open the
// server to the network, or that change authentication are not in the
// list, because workload files are data (see docs/security.md).
var mongodOptions = map[string]mongodArgValue{
	"--quiet":                               mongodFlag,
	"--notablescan":                         mongodFlag,
	"--directoryperdb":                      mongodFlag,
	"--wiredTigerDirectoryForIndexes":       mongodFlag,
	"--slowms":                              mongodNumber,
	"--slowOpSampleRate":                    mongodNumber,
	"--profile":                             mongodNumber,
	"--oplogSize":                           mongodNumber,
	"--syncdelay":                           mongodNumber,
	"--journalCommitInterval":               mongodNumber,
	"--maxConns":                            mongodNumber,
	"--wiredTigerCollectionBlockCompressor": mongodWord,
	"--wiredTigerJournalCompressor":         mongodWord,
	"--wiredTigerIndexPrefixCompression":    mongodWord,
	"--setParameter":                        mongodParam,
}

// mongodParameters are the server parameters --setParameter may set.
var mongodParameters = []string{
	"diagnosticDataCollectionEnabled", "ttlMonitorEnabled", "transactionLifetimeLimitSeconds",
	"maxTransactionLockRequestTimeoutMillis", "storageEngineConcurrentReadTransactions",
	"storageEngineConcurrentWriteTransactions", "wiredTigerConcurrentReadTransactions",
	"wiredTigerConcurrentWriteTransactions", "internalQueryExecYieldIterations", "internalQueryExecYieldPeriodMS",
}

var (
	mongodNumberValue = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
	mongodWordValue   = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
)

// MongodOptions returns the mongod options a mongod target's args may
// pass, sorted, and MongodParameters the parameters --setParameter may set.
func MongodOptions() []string {
	out := make([]string, 0, len(mongodOptions))
	for k := range mongodOptions {
		out = append(out, k)
	}

	slices.Sort(out)

	return out
}

// MongodParameters returns the server parameters a mongod target's
// --setParameter may set, sorted.
func MongodParameters() []string {
	return slices.Sorted(slices.Values(mongodParameters))
}

// validateMongodArg checks one argument of MongodSpec.Args against the
// allow-list.
func validateMongodArg(a string) error {
	name, value, hasValue := strings.Cut(a, "=")
	if why, ok := managedMongodArgs[name]; ok {
		return fmt.Errorf("mongod argument %q is not allowed in arg: %s", name, why)
	}

	kind, ok := mongodOptions[name]
	if !ok {
		return fmt.Errorf("mongod argument %q is not one mongobench passes on (allowed: %s; see docs/security.md)",
			name, strings.Join(MongodOptions(), ", "))
	}

	switch {
	case kind == mongodFlag && hasValue:
		return fmt.Errorf("mongod argument %s takes no value", name)
	case kind != mongodFlag && !hasValue:
		return fmt.Errorf("mongod argument %s needs a value, written as one argument: %s=VALUE", name, name)
	case kind == mongodNumber && !mongodNumberValue.MatchString(value):
		return fmt.Errorf("mongod argument %s takes a number, got %q", name, value)
	case kind == mongodWord && !mongodWordValue.MatchString(value):
		return fmt.Errorf("mongod argument %s takes a word of letters, digits and '_', got %q", name, value)
	case kind == mongodParam:
		param, pv, _ := strings.Cut(value, "=")
		if !slices.Contains(mongodParameters, param) {
			return fmt.Errorf("mongod parameter %q is not one mongobench sets (allowed: %s)", param, strings.Join(MongodParameters(), ", "))
		}

		if !mongodWordValue.MatchString(pv) {
			return fmt.Errorf("mongod parameter %s takes a number, true or false, got %q", param, pv)
		}
	}

	return nil
}

// validateMongod checks a mongod target's options.
func validateMongod(m *MongodSpec) error {
	if m.ReplicaSet < 0 || m.ReplicaSet > maxReplicaSetMembers {
		return fieldErrorf("mongod.replica_set", "replica_set must be between 0 (standalone) and %d members, got %d", maxReplicaSetMembers, m.ReplicaSet)
	}

	if m.StorageEngine != "" && !storageEngineName.MatchString(m.StorageEngine) {
		return fieldErrorf("mongod.storage_engine", "storage_engine %q is not a storage engine name (such as wiredTiger or inMemory)", m.StorageEngine)
	}

	wiredTiger := m.StorageEngine == "" || m.StorageEngine == "wiredTiger"

	switch c := m.CacheSizeGB; {
	case math.IsNaN(c) || math.IsInf(c, 0) || c < 0:
		return fieldErrorf("mongod.cache_size_gb", "cache_size_gb must be a positive number of gigabytes, got %v", c)
	case c > 0 && (c < minCacheSizeGB || c > maxCacheSizeGB):
		return fieldErrorf("mongod.cache_size_gb", "cache_size_gb must be between %v and %v, got %v", minCacheSizeGB, maxCacheSizeGB, c)
	case c > 0 && !wiredTiger:
		return fieldErrorf("mongod.cache_size_gb", "cache_size_gb applies to the wiredTiger storage engine only, not to %s", m.StorageEngine)
	}

	if m.Journal != nil && !*m.Journal && m.ReplicaSet > 0 && wiredTiger {
		return &FieldError{Field: "mongod.journal", Err: errors.New("journal=false cannot be combined with replica_set: MongoDB does not run WiredTiger replica set members without a journal")}
	}

	if strings.ContainsRune(m.Binary, 0) {
		return &FieldError{Field: "mongod.binary", Err: errors.New("binary must not contain NUL characters")}
	}

	for i, a := range m.Args {
		if err := validateMongodArg(a); err != nil {
			return &FieldError{Field: fmt.Sprintf("mongod.args[%d]", i), Err: err}
		}
	}

	return nil
}
