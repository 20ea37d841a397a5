package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary text to the parser: it must never panic, it
// must return either a spec or errors, never both or neither, and every
// error is one line naming the file.
func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	f.Add([]byte("name: x\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("operations: [{op: find, weight: -1}]\n"))
	f.Add([]byte("name: x\n---\nname: y\n"))
	f.Add([]byte("operations: [{op: insertOne, document: [1, 2]}]\nrun: {rate: 0/s, max_error_rate: .nan}\n"))

	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "workloads", "*.yaml"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		s, errs := Parse("fuzz.yaml", data)
		if (s == nil) == (len(errs) == 0) {
			t.Fatalf("Parse returned spec=%v with %d errors", s != nil, len(errs))
		}

		for _, err := range errs {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Errorf("message does not name the file: %q", err)
			}

			if strings.Contains(err.Error(), "\n") {
				t.Errorf("message is not one line: %q", err)
			}
		}
	})
}
