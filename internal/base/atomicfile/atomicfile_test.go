package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "out.txt")

	if err := WriteBytes(path, []byte("one")); err != nil {
		t.Fatal(err)
	}

	// A failing write leaves the previous content and no temporary file.
	boom := errors.New("boom")

	err := Write(path, func(w io.Writer) error {
		_, _ = w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error = %v, want boom", err)
	}

	data, err := os.ReadFile(path)
	if err != nil || string(data) != "one" {
		t.Fatalf("content %q (%v), want the old content", data, err)
	}

	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left %d entries, want only out.txt", len(entries))
	}

	if err := WriteBytes(path, []byte("two")); err != nil {
		t.Fatal(err)
	}

	if data, _ := os.ReadFile(path); string(data) != "two" {
		t.Errorf("content %q, want two", data)
	}
}
