// Package pglaunchtest starts a private PostgreSQL server for a test, with
// the project's rule for machines without PostgreSQL: the test is skipped,
// unless the CI environment variable is set, where a missing PostgreSQL is a
// broken CI set-up and fails the test.
package pglaunchtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/targets/pglaunch"
)

// startTimeout bounds a test server's start-up; initdb takes about a second.
const startTimeout = 60 * time.Second

// Require skips the test, or fails it under CI, when pglaunch.Available
// reports that PostgreSQL cannot be started on this machine.
func Require(tb testing.TB) {
	tb.Helper()

	if err := pglaunch.Available(); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("PostgreSQL is required under CI: %v", err)
		}

		tb.Skipf("PostgreSQL is not available: %v", err)
	}
}

// Start calls Require, starts a server with opts (logging to the test's log
// when opts.Logf is nil) and stops it when the test ends, failing the test
// if Stop fails.
func Start(tb testing.TB, opts pglaunch.Options) *pglaunch.Server {
	tb.Helper()
	Require(tb)

	if opts.Logf == nil {
		opts.Logf = tb.Logf
	}

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()

	s, err := pglaunch.Start(ctx, opts)
	if err != nil {
		tb.Fatal(err)
	}

	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("stop PostgreSQL: %v", err)
		}
	})

	return s
}
