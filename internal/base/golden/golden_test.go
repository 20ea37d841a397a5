package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what Check reports instead of
// failing the real test.
type recorder struct {
	testing.TB

	errors []string
	fatal  bool
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return "TestSomething" }

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// Fatalf records the failure; Check returns right after its only Fatalf.
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = true
	r.Errorf(format, args...)
}

// Fatal is not called by Check on the paths tested here.
func (r *recorder) Fatal(args ...any) {
	r.fatal = true
	r.errors = append(r.errors, fmt.Sprint(args...))
}

// TestCheck checks the three outcomes of Check: equal passes, different
// fails naming the file and the first differing line, and -update writes
// the file and fails.
func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := &recorder{TB: t}
	Check(r, path, []byte("a\nb\n"))

	if len(r.errors) != 0 {
		t.Errorf("equal contents: %q", r.errors)
	}

	r = &recorder{TB: t}
	Check(r, path, []byte("a\nc\n"))

	if len(r.errors) != 1 || !strings.Contains(r.errors[0], path) || !strings.Contains(r.errors[0], "line 2") {
		t.Errorf("different contents: %q, want one error naming %s and line 2", r.errors, path)
	}

	*update = true

	t.Cleanup(func() { *update = false })

	r = &recorder{TB: t}
	Check(r, path, []byte("new\n"))

	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "rewritten; review git diff") {
		t.Errorf("with -update: %q, want one error saying the file was rewritten", r.errors)
	}

	if b, err := os.ReadFile(path); err != nil || string(b) != "new\n" {
		t.Errorf("with -update the file holds %q (%v), want the new contents", b, err)
	}
}
