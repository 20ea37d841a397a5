package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHistoryStoreBadInput: flags that cannot go together, and a file
// that is not a results file, are bad input said before any server is
// reached (the store URI names a port where nothing listens, which would
// exit 1).
func TestHistoryStoreBadInput(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	notResults := filepath.Join(dir, "other.json")

	if err := os.WriteFile(notResults, []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}

	const nowhere = "mongodb://127.0.0.1:1/h?serverSelectionTimeoutMS=200"

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"history", "import", dir}, "--store URI is required"},
		{[]string{"history", "import", "--store", nowhere}, "requires at least 1 arg"},
		{[]string{"history", "import", "--store", nowhere, notResults}, "no schema_version"},
		{[]string{"history", "--store", nowhere, dir}, "name no PATH"},
		{[]string{"history", "--store-db", "x", dir}, "--store-db needs --store"},
		{[]string{"history", "--store", "mongodb://127.0.0.1:1/admin"}, "system database"},
		{[]string{"history", "--store", "mongodb://127.0.0.1:1/a", "--store-db", "b"}, "differ"},
		{[]string{"run", "../../workloads/ycsb/c.yaml", "--uri", nowhere, "--history-store", "mongodb://127.0.0.1:1/admin"}, "--history-store"},
	} {
		code, _, stderr := runMain(t, c.args...)
		if code != ExitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d naming %q", c.args, code, stderr, ExitBadInput, c.want)
		}

		assertNoStackTrace(t, stderr)
	}
}
