package result

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadFile feeds arbitrary bytes to the results file reader and to
// Check: they must never panic, every error must be one line naming the
// file, and what they accept must be writable again (no NaN, no infinity).
func FuzzReadFile(f *testing.F) {
	// One real results file; larger ones make each new input's
	// minimization too slow for a short fuzzing run.
	if data, err := os.ReadFile(filepath.Join("testdata", "golden.json")); err == nil {
		f.Add(data)
	}

	f.Add([]byte(`{"schema_version": 1}`))
	f.Add([]byte(`{"schema_version": 1, "phases": [{"name": "run", "operations": [{"name": "a", "count": -1}]}]}`))
	f.Add([]byte(`{"schema_version": 99}`))
	f.Add([]byte(`{"schema_version": "1"}`))
	f.Add([]byte("not json\n"))
	f.Add([]byte(`{"schema_version": 1, "kind": "matrix", "matrix": {"verdicts": [{"target": "*", "targets": [{"target": "a", "variant": "b"}], "variants": []}]}}`))

	dir := f.TempDir()

	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}

		r, err := Read(context.Background(), path)
		if err != nil {
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, path) {
				t.Fatalf("error is not one line naming the file: %q", msg)
			}

			return
		}

		for _, e := range r.Check() {
			if strings.Contains(e.Error(), "\n") {
				t.Fatalf("Check error is not one line: %q", e)
			}
		}

		if _, err := Marshal(r); err != nil {
			t.Fatalf("a results file that was read cannot be written again: %v", err)
		}
	})
}
