//go:build e2e

package historystore_test

import (
	"context"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/pglaunch/pglaunchtest"
)

// TestStoreFerretDBPostgreSQL runs the store's contract against the target
// `run --target ferretdb-postgres` measures: FerretDB on a private
// PostgreSQL. Without PostgreSQL it is skipped, but fails under CI.
func TestStoreFerretDBPostgreSQL(t *testing.T) {
	pglaunchtest.Require(t)

	spec, err := targets.ParseTargetFlag("ferretdb-postgres")
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	l, err := targets.Launch(ctx, spec, targets.LaunchOptions{})
	if err != nil {
		t.Fatalf("launch ferretdb-postgres: %v", err)
	}

	t.Cleanup(func() {
		if err := l.Stop(); err != nil {
			t.Errorf("stop ferretdb-postgres: %v", err)
		}
	})

	testStore(t, l.URI)
}
