package result

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadAllRecursive reads a tree of results files, leaving out hidden
// directories and a comparison's NAME.trials, and says of every error
// which file it is about and which argument named it.
func TestReadAllRecursive(t *testing.T) {
	dir := t.TempDir()

	for _, d := range []string{"nightly/2026", ".cache", "cmp.trials", "empty"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}

	a := writeResult(t, dir, "a.json", cleanResult(t))
	deep := writeResult(t, filepath.Join(dir, "nightly/2026"), "b.json", cleanResult(t))
	writeResult(t, filepath.Join(dir, ".cache"), "hidden.json", cleanResult(t))
	writeResult(t, filepath.Join(dir, "cmp.trials"), "trial.json", cleanResult(t))
	broken := writeText(t, filepath.Join(dir, "nightly"), "broken.json", "{")
	empty := filepath.Join(dir, "empty")

	got, err := ReadAll(context.Background(), []string{dir, empty}, ReadOptions{Dirs: true, Recursive: true})
	if err != nil {
		t.Fatal(err)
	}

	if want := []string{a, deep}; !slices.Equal(got.Paths(), want) {
		t.Errorf("read %v, want %v", got.Paths(), want)
	}

	if len(got.Errors) != 2 {
		t.Fatalf("errors %v, want the broken file and the empty directory", got.Errors)
	}

	var fe *FileError
	if !errors.As(got.Errors[0], &fe) || fe.Path != broken || fe.Arg != dir {
		t.Errorf("error about the broken file: %#v, want a FileError with Path %s and Arg %s", got.Errors[0], broken, dir)
	}

	if !errors.As(got.Errors[1], &fe) || fe.Path != empty || !errors.Is(got.Errors[1], ErrNoResultsFiles) {
		t.Errorf("error about the empty directory: %v, want a FileError wrapping ErrNoResultsFiles", got.Errors[1])
	}

	// Without Recursive, only the directory's own files.
	got, err = ReadAll(context.Background(), []string{dir}, ReadOptions{Dirs: true})
	if err != nil {
		t.Fatal(err)
	}

	if want := []string{a}; !slices.Equal(got.Paths(), want) {
		t.Errorf("not recursive: read %v, want %v", got.Paths(), want)
	}
}

// TestCleanKeepsWhatRunWrote: a file as WriteFile writes it comes back
// byte for byte, so a copy kept in a store is what run wrote; a file that
// holds a password (as an older mongobench could write) comes back masked,
// and is read as the file is.
func TestCleanKeepsWhatRunWrote(t *testing.T) {
	path := writeResult(t, t.TempDir(), "run.json", cleanResult(t))

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	got, err := Clean(data)
	if err != nil {
		t.Fatal(err)
	}

	if !bytes.Equal(got, data) {
		t.Errorf("Clean changed a file WriteFile wrote (%d bytes to %d)", len(data), len(got))
	}

	const canary = "Canary-S3cr3t-xyzzy"

	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}

	doc["target"].(map[string]any)["uri"] = "mongodb://bob:" + canary + "@h:27017/"

	old, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}

	got, err = Clean(old)
	if err != nil {
		t.Fatal(err)
	}

	if bytes.Contains(got, []byte(canary)) || !strings.Contains(string(got), "mongodb://bob:xxxxx@h:27017/") {
		t.Errorf("Clean left the password, or lost the URI:\n%s", got)
	}

	if again, err := Clean(got); err != nil || !bytes.Equal(again, got) {
		t.Errorf("Clean of a cleaned file changed it (%v)", err)
	}

	fromFile, err := Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}

	parsed, err := Parse("stored", got)
	if err != nil {
		t.Fatal(err)
	}

	if parsed.Target.URI != "mongodb://bob:xxxxx@h:27017/" || !parsed.StartedAt.Equal(fromFile.StartedAt) || len(parsed.Phases) != len(fromFile.Phases) {
		t.Errorf("the cleaned file reads as %+v", parsed.Target)
	}

	if _, err := Clean([]byte("{")); err == nil {
		t.Error("Clean took a file that is not JSON")
	}

	if _, err := Parse("stored run", []byte(`{"a": 1}`)); err == nil || !strings.Contains(err.Error(), "stored run") {
		t.Errorf("Parse of a foreign document: %v, want an error naming it", err)
	}
}
