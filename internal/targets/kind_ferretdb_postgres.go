package targets

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/mongobench/mongobench/internal/targets/pglaunch"
)

// KindFerretDBPostgres is FerretDB running inside mongobench on a private
// PostgreSQL server that mongobench launches from the machine's binaries
// (see package pglaunch).
const KindFerretDBPostgres = "ferretdb-postgres"

// ferretDBPostgresKind registers KindFerretDBPostgres.
func ferretDBPostgresKind() Kind {
	return Kind{
		Name:        KindFerretDBPostgres,
		Description: "FerretDB inside mongobench on a private PostgreSQL server launched from this machine's binaries",
		Launched:    true,
		setting: func(t *TargetSpec, k, v string) error {
			if t.Settings == nil {
				t.Settings = map[string]string{}
			}

			t.Settings[k] = v

			return nil
		},
		validate: func(t TargetSpec) error {
			if err := onlyFields(t, false, true, false); err != nil {
				return err
			}

			return validatePostgreSQLSettings(t.Settings)
		},
		launch: launchFerretDBPostgres,
	}
}

// postgreSQLSettingName is the shape of the setting names accepted: lower
// case identifiers, optionally dotted. PostgreSQL itself is case-blind and
// laxer; being strict keeps odd spellings out of postgresql.conf.
var postgreSQLSettingName = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`)

// managedPostgreSQLSettings are set by pglaunch so that it finds its server;
// pglaunch.Start rejects them too, but saying so before anything starts is
// kinder.
var managedPostgreSQLSettings = []string{"listen_addresses", "port", "unix_socket_directories"}

// postgreSQLSettings are the PostgreSQL parameters a ferretdb-postgres
// target may set: those that tune durability, memory, I/O, checkpoints,
// parallelism, planning and autovacuum. Parameters that name programs,
// libraries or files (archive_command, shared_preload_libraries,
// log_directory, ssl_*, include, ...) are left out on purpose: workload
// files are data, and such a parameter would let one run a program or
// write outside the server's temporary directory (see docs/security.md).
var postgreSQLSettings = []string{
	// Durability and the write-ahead log.
	"fsync", "synchronous_commit", "full_page_writes", "wal_level", "wal_buffers", "wal_compression",
	"wal_sync_method", "wal_writer_delay", "wal_writer_flush_after", "wal_log_hints", "wal_init_zero",
	"wal_recycle", "commit_delay", "commit_siblings", "max_wal_size", "min_wal_size",
	// Checkpoints and the background writer.
	"checkpoint_timeout", "checkpoint_completion_target", "checkpoint_flush_after", "bgwriter_delay",
	"bgwriter_lru_maxpages", "bgwriter_lru_multiplier", "bgwriter_flush_after", "backend_flush_after",
	// Memory.
	"shared_buffers", "huge_pages", "temp_buffers", "work_mem", "maintenance_work_mem", "autovacuum_work_mem",
	"hash_mem_multiplier", "effective_cache_size", "max_connections", "max_locks_per_transaction",
	// I/O and parallelism.
	"effective_io_concurrency", "maintenance_io_concurrency", "max_worker_processes", "max_parallel_workers",
	"max_parallel_workers_per_gather", "max_parallel_maintenance_workers",
	// Planning.
	"random_page_cost", "seq_page_cost", "cpu_tuple_cost", "cpu_index_tuple_cost", "cpu_operator_cost",
	"default_statistics_target", "jit", "plan_cache_mode", "enable_seqscan", "enable_indexscan",
	"enable_indexonlyscan", "enable_bitmapscan", "enable_hashjoin", "enable_mergejoin", "enable_nestloop",
	"enable_sort", "enable_hashagg", "enable_material",
	// Autovacuum.
	"autovacuum", "autovacuum_naptime", "autovacuum_max_workers", "autovacuum_vacuum_threshold",
	"autovacuum_vacuum_scale_factor", "autovacuum_vacuum_insert_threshold", "autovacuum_vacuum_insert_scale_factor",
	"autovacuum_analyze_threshold", "autovacuum_analyze_scale_factor", "autovacuum_vacuum_cost_delay",
	"autovacuum_vacuum_cost_limit",
	// Sessions and statistics.
	"deadlock_timeout", "lock_timeout", "statement_timeout", "idle_in_transaction_session_timeout",
	"default_transaction_isolation", "track_io_timing", "track_counts", "track_activities",
}

// postgreSQLValueForbidden are the characters a setting value may not hold:
// besides control characters (newline, NUL, ...), those that end or escape
// a quoted postgresql.conf value.
const postgreSQLValueForbidden = `'"\`

// validatePostgreSQLSettings checks the settings of a ferretdb-postgres
// target, in a stable order so that the same spec always gives the same
// error.
func validatePostgreSQLSettings(settings map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		field := "settings." + k

		switch {
		case !postgreSQLSettingName.MatchString(k):
			return fieldErrorf(field, "invalid PostgreSQL setting name %q: use lower-case letters, digits, '_' and '.'", k)
		case slices.Contains(managedPostgreSQLSettings, k):
			return fieldErrorf(field, "PostgreSQL setting %q is managed by mongobench and cannot be changed", k)
		case !slices.Contains(postgreSQLSettings, k):
			return fieldErrorf(field, "PostgreSQL setting %q is not one mongobench lets a target change (see docs/security.md for the list)", k)
		}

		v := settings[k]

		switch {
		case strings.TrimSpace(v) == "":
			return fieldErrorf(field, "PostgreSQL setting %s has no value", k)
		case strings.ContainsFunc(v, isControl) || strings.ContainsAny(v, postgreSQLValueForbidden):
			return fieldErrorf(field, "PostgreSQL setting %s: the value must be one line without quotes, backslashes or control characters", k)
		}
	}

	return nil
}

// isControl reports whether r is a control character (newline, NUL, ...).
func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f
}

// launchFerretDBPostgres starts a private PostgreSQL and FerretDB on it.
func launchFerretDBPostgres(ctx context.Context, l *Launched, opts LaunchOptions) error {
	// Available explains what is missing and how to install it.
	if err := pglaunch.Available(); err != nil {
		return err
	}

	pgOpts := pglaunch.Options{Settings: l.Spec.Settings, TempDir: opts.TempDir}
	if opts.Logger != nil {
		pgOpts.Logf = func(format string, args ...any) {
			l.logger.Info(fmt.Sprintf(format, args...))
		}
	}

	pg, err := pglaunch.Start(ctx, pgOpts)
	if err != nil {
		return err
	}

	l.postgres = pg

	e, err := StartEmbedded(ctx, EmbeddedOptions{
		PostgreSQLURL: pg.URL(pglaunch.DefaultDatabase),
		Logger:        opts.Logger,
		TempDir:       opts.TempDir,
	})
	if err != nil {
		return err
	}

	l.embedded = e
	l.URI = e.URI()
	l.MaxPoolSize = e.MaxPoolSize()
	l.Notes = e.Notes()

	version := "PostgreSQL"
	if v := pg.Version(); v != "" {
		version += " " + v
	}

	settings := "its default settings"
	if keys := slices.Sorted(maps.Keys(l.Spec.Settings)); len(keys) > 0 {
		pairs := make([]string, len(keys))
		for i, k := range keys {
			pairs[i] = k + "=" + l.Spec.Settings[k]
		}

		settings = strings.Join(pairs, ", ")
	}

	l.Description = fmt.Sprintf("%s on %s launched by mongobench with %s", e.Description(), version, settings)

	return nil
}
