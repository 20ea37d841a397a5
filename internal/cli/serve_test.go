package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeDataDirRefusals checks that --data-dir is refused, as bad input
// naming the flag, for a kind whose data does not live in such a
// directory, and that a directory that does not exist fails the start
// without creating it.
func TestServeDataDirRefusals(t *testing.T) {
	code, _, stderr := runMain(t, "serve", "--target", "ferretdb-postgres", "--data-dir", t.TempDir())
	if code != ExitBadInput || !strings.Contains(stderr, "--data-dir: only the embedded and embedded-memory kinds") {
		t.Errorf("exit %d, stderr %q; want %d and a message naming --data-dir", code, stderr, ExitBadInput)
	}

	missing := filepath.Join(t.TempDir(), "missing")

	code, _, stderr = runMain(t, "serve", "--data-dir", missing, "--for", "1s")
	if code != ExitFailed || !strings.Contains(stderr, "data directory") {
		t.Errorf("exit %d, stderr %q; want %d and a message about the data directory", code, stderr, ExitFailed)
	}

	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("the missing data directory was created (stat: %v)", err)
	}
}
