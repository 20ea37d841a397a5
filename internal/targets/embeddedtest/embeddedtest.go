// Package embeddedtest starts the embedded FerretDB a user's run starts, for
// a test, and closes it when the test ends. Tests against this real server
// are preferred to mocks; one helper keeps their start-up (a temporary
// directory of the test's, a bounded start, a checked close) the same in
// every package.
package embeddedtest

import (
	"context"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/targets"
)

// startTimeout bounds the start-up; the embedded server starts in well
// under a second on an idle machine, and a busy one may take many times
// that.
const startTimeout = time.Minute

// Start starts an embedded FerretDB with opts (in a temporary directory of
// the test's when opts.TempDir is empty) and closes it when the test ends,
// failing the test if it does not start or does not close cleanly.
//
// The in-memory SQLite mode (opts.Memory) is faster but hangs on some
// updates (the wire proxy's tests met one); tests that update use files.
func Start(tb testing.TB, opts targets.EmbeddedOptions) *targets.Embedded {
	tb.Helper()

	if opts.TempDir == "" {
		opts.TempDir = tb.TempDir()
	}

	ctx, cancel := context.WithTimeout(tb.Context(), startTimeout)
	defer cancel()

	e, err := targets.StartEmbedded(ctx, opts)
	if err != nil {
		tb.Fatalf("starting the embedded FerretDB: %v", err)
	}

	tb.Cleanup(func() {
		if err := e.Close(); err != nil {
			tb.Errorf("closing the embedded FerretDB: %v", err)
		}
	})

	return e
}
