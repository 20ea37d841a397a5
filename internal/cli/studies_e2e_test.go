//go:build e2e

// Every bundled study run end to end (minutes under -race): the end-to-end
// CI step runs it; the README's test command validates the studies.

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStudiesSmoke runs every study end to end on the embedded default at
// its smallest size, as the CI smoke test of the study library.
func TestStudiesSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every study on an embedded FerretDB")
	}

	for _, f := range studyFiles(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")

		t.Run(name, func(t *testing.T) {
			requireStudyStacks(t, f)

			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}

			small := smallestSize(t, string(text))
			if small == string(text) && !strings.Contains(small, "# size") {
				t.Logf("%s has no size markers; running it as is", name)
			}

			dir := t.TempDir()
			path := filepath.Join(dir, name+".yaml")

			if err := os.WriteFile(path, []byte(small), 0o600); err != nil {
				t.Fatal(err)
			}

			out := filepath.Join(dir, "results.json")

			args := []string{"run", path, "--out", out, "--no-explain", "--server-stats-interval", "0", "--quiet"}
			if hasTimedPhase(t, path) {
				// --duration is refused where no phase is timed by one.
				args = append(args, "--duration", "1s")
			}

			code, stdout, stderr := runMain(t, args...)
			if code != 0 {
				t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}

			assertNoStackTrace(t, stdout+stderr)

			if _, err := os.Stat(out); err != nil {
				t.Errorf("no results file: %v", err)
			}
		})
	}
}
