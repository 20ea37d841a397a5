package result

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeResult writes r to dir/name and returns the path.
func writeResult(t *testing.T, dir, name string, r *Result) string {
	t.Helper()

	path := filepath.Join(dir, name)
	if err := WriteFile(path, r); err != nil {
		t.Fatal(err)
	}

	return path
}

// writeText writes text to dir/name and returns the path.
func writeText(t *testing.T, dir, name, text string) string {
	t.Helper()

	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	return path
}

// TestReadAll reads good files, a directory of them and broken files in
// one call: the good ones are returned in order with the argument that
// named them, every broken one is an error naming its file, and the
// reading goes on past them.
func TestReadAll(t *testing.T) {
	dir := t.TempDir()
	a := writeResult(t, dir, "a.json", cleanResult(t))

	runs := filepath.Join(dir, "runs")
	if err := os.Mkdir(runs, 0o700); err != nil {
		t.Fatal(err)
	}

	// Name order, not creation order.
	r2 := writeResult(t, runs, "2.json", cleanResult(t))
	r1 := writeResult(t, runs, "1.json", cleanResult(t))
	writeText(t, runs, "notes.txt", "not a results file")

	empty := cleanResult(t)
	empty.Phases, empty.Operations = nil, nil
	noPhases := writeResult(t, dir, "empty.json", empty)
	notJSON := writeText(t, dir, "broken.json", "{")
	missing := filepath.Join(dir, "missing.json")

	emptyDir := filepath.Join(dir, "none")
	if err := os.Mkdir(emptyDir, 0o700); err != nil {
		t.Fatal(err)
	}

	got, err := ReadAll(context.Background(), []string{a, missing, runs, notJSON, noPhases, emptyDir}, ReadOptions{Dirs: true})
	if err != nil {
		t.Fatal(err)
	}

	if want := []string{a, r1, r2}; !slices.Equal(got.Paths(), want) {
		t.Errorf("read %v, want %v", got.Paths(), want)
	}

	if args := []string{got.Files[0].Arg, got.Files[1].Arg, got.Files[2].Arg}; !slices.Equal(args, []string{a, runs, runs}) {
		t.Errorf("arguments %v", args)
	}

	if len(got.Results()) != 3 || got.Results()[1] != got.Files[1].Result {
		t.Errorf("Results() does not follow Files")
	}

	wantErrs := []string{missing, notJSON + " is not valid JSON", "results file " + noPhases + ": the file has no phases", "directory " + emptyDir + " holds no results file"}
	if len(got.Errors) != len(wantErrs) {
		t.Fatalf("errors %v, want %d", got.Errors, len(wantErrs))
	}

	for i, want := range wantErrs {
		if !strings.Contains(got.Errors[i].Error(), want) {
			t.Errorf("error %d = %q, want it to contain %q", i, got.Errors[i], want)
		}
	}

	if got.Total != 7 {
		t.Errorf("Total = %d, want 7 (three read, four not)", got.Total)
	}

	if err := got.Err(); err == nil || err.Error() != "4 of 7 results files could not be read" {
		t.Errorf("Err() = %v", err)
	}

	if len(got.Warnings) != 0 {
		t.Errorf("warnings about good files: %v", got.Warnings)
	}

	// AllowEmpty reads the file without phases.
	got, err = ReadAll(context.Background(), []string{noPhases}, ReadOptions{AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}

	if len(got.Files) != 1 || len(got.Errors) != 0 {
		t.Errorf("AllowEmpty: read %v, errors %v", got.Paths(), got.Errors)
	}

	// Without Dirs a directory is a path that cannot be read as a file.
	got, err = ReadAll(context.Background(), []string{runs}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if len(got.Files) != 0 || len(got.Errors) != 1 || !strings.Contains(got.Errors[0].Error(), runs) {
		t.Errorf("a directory without Dirs: files %v, errors %v", got.Paths(), got.Errors)
	}

	if got.Err() == nil {
		t.Error("Err() = nil with an error")
	}
}

// TestReadAllWarnings: an inconsistent file is read with a warning, or
// refused with Strict; a run that did not complete is read with a warning
// either way.
func TestReadAllWarnings(t *testing.T) {
	dir := t.TempDir()

	tampered := cleanResult(t)
	tampered.Phases[1].Operations[0].Count++
	bad := writeResult(t, dir, "tampered.json", tampered)

	stopped := cleanResult(t)
	stopped.Status, stopped.StatusReason = StatusInterrupted, "Ctrl-C"
	interrupted := writeResult(t, dir, "interrupted.json", stopped)

	got, err := ReadAll(context.Background(), []string{bad, interrupted}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if len(got.Files) != 2 || len(got.Errors) != 0 {
		t.Fatalf("read %v, errors %v", got.Paths(), got.Errors)
	}

	want := []string{bad + " is inconsistent (", interrupted + " is from a run that was interrupted"}
	if len(got.Warnings) != 2 || !strings.HasPrefix(got.Warnings[0], want[0]) || got.Warnings[1] != want[1] {
		t.Errorf("warnings %q, want %q", got.Warnings, want)
	}

	got, err = ReadAll(context.Background(), []string{bad, interrupted}, ReadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}

	if len(got.Files) != 1 || len(got.Errors) != 1 || !strings.HasPrefix(got.Errors[0].Error(), bad+": inconsistent results file: phase") {
		t.Errorf("strict: read %v, errors %v", got.Paths(), got.Errors)
	}

	if len(got.Warnings) != 1 || got.Warnings[0] != want[1] {
		t.Errorf("strict: warnings %q", got.Warnings)
	}

	// A matrix says which of its trials did not complete.
	trial := cleanResult(t)
	trial.Status = StatusAborted
	m := writeResult(t, dir, "matrix.json", matrixOf(trial))

	got, err = ReadAll(context.Background(), []string{m}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if len(got.Warnings) != 1 || got.Warnings[0] != m+": matrix trial 0 (uri · a · round 1) is from a run that was aborted" {
		t.Errorf("matrix: warnings %q", got.Warnings)
	}
}

// TestReadAllInjectedReader reads through the function a command passes
// (merge reads run logs too), and stops at a cancelled context naming the
// file being read.
func TestReadAllInjectedReader(t *testing.T) {
	var asked []string

	want := cleanResult(t)
	read := func(_ context.Context, path string) (*Result, error) {
		asked = append(asked, path)
		if path == "x.log" {
			return want, nil
		}

		return nil, errors.New("unknown form")
	}

	got, err := ReadAll(context.Background(), []string{"x.log", "y.bin"}, ReadOptions{Read: read})
	if err != nil {
		t.Fatal(err)
	}

	if !slices.Equal(asked, []string{"x.log", "y.bin"}) || len(got.Files) != 1 || got.Files[0].Result != want {
		t.Errorf("asked %v, read %v", asked, got.Paths())
	}

	if len(got.Errors) != 1 || got.Errors[0].Error() != "y.bin: unknown form" {
		t.Errorf("errors %v, want the reader's error naming y.bin", got.Errors)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancelling := func(_ context.Context, _ string) (*Result, error) {
		cancel()
		return nil, context.Canceled
	}

	got, err = ReadAll(ctx, []string{"first.json", "second.json"}, ReadOptions{Read: cancelling})
	if err == nil || !strings.Contains(err.Error(), "interrupted while reading first.json") || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v", err)
	}

	if got == nil || got.Total != 1 {
		t.Errorf("cancelled: read on past the cancellation: %+v", got)
	}
}
