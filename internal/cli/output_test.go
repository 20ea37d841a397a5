package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/results/runlog"
)

// TestRunFlagErrorsBeforeRun checks that flags which cannot work, and output
// paths that cannot be written, exit with code 2 before any server starts,
// instead of being ignored or failing after the whole run.
func TestRunFlagErrorsBeforeRun(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()

	aFile := filepath.Join(dir, "plain-file")
	if err := os.WriteFile(aFile, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"empty uri", []string{"--uri", ""}, "--uri is empty"},
		{"blank uri", []string{"--uri", "  "}, "--uri is empty"},
		{"empty out", []string{"-o", ""}, "--out is empty"},
		{"out is a directory", []string{"-o", dir}, "is a directory"},
		{"out under a file", []string{"-o", filepath.Join(aFile, "r.json")}, "cannot create its directory"},
		{"markdown to stdout", []string{"--markdown", "-"}, "--markdown - is not supported"},
		{"report with stdout results", []string{"-o", "-", "--report"}, "--report writes the HTML next to the results file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			code, stdout, stderr := runMain(t, append([]string{"run", "testdata/small.yaml"}, tc.args...)...)
			if code != ExitBadInput {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitBadInput, stdout, stderr)
			}

			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr does not contain %q:\n%s", tc.want, stderr)
			}

			if strings.Contains(stderr, "started embedded FerretDB") || strings.Contains(stderr, "Server:") {
				t.Errorf("a server was started for bad input:\n%s", stderr)
			}

			if lines := errorLines(stderr); len(lines) != 1 {
				t.Errorf("want one Error: line, got %d:\n%s", len(lines), stderr)
			}

			assertNoStackTrace(t, stdout+stderr)
		})
	}
}

// TestRunReportPathIsChecked checks that --report's HTML file, written
// after the run next to the results, is checked before the run too.
func TestRunReportPathIsChecked(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "r.html"), 0o755); err != nil {
		t.Fatal(err)
	}

	code, _, stderr := runMain(t, "run", "testdata/small.yaml", "-o", filepath.Join(dir, "r.json"), "--report")
	if code != ExitBadInput || !strings.Contains(stderr, "--report "+filepath.Join(dir, "r.html")+" is a directory") {
		t.Errorf("exit code %d, want %d and a message about r.html:\n%s", code, ExitBadInput, stderr)
	}

	if _, err := os.Stat(filepath.Join(dir, "r.json")); err == nil {
		t.Errorf("a results file was written although the run was refused")
	}

	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the writability probe left files behind: %v", entries)
	}
}

// TestRunOutStdout checks `run -o -`: the results JSON alone on standard
// output (so it can be piped), the table and messages on standard error,
// and no file named "-".
func TestRunOutStdout(t *testing.T) {
	t.Parallel()

	code, stdout, stderr := runMain(t, "run", "testdata/small.yaml", "-o", "-", "--no-explain", "--server-stats-interval", "0")
	if code != ExitOK {
		t.Fatalf("exit code %d, want %d\nstderr:\n%s", code, ExitOK, stderr)
	}

	if _, err := os.Stat("-"); err == nil {
		t.Errorf(`a file named "-" was written`)
	}

	path := filepath.Join(t.TempDir(), "from-stdout.json")
	if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}

	res, err := result.Read(context.Background(), path)
	if err != nil {
		t.Fatalf("standard output is not a results file: %v\nstdout starts with:\n%.300s", err, stdout)
	}

	if res.Workload.Name != "small" {
		t.Errorf("workload name %q, want small", res.Workload.Name)
	}

	for _, want := range []string{"report_error", "ops/s"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the summary table is not on standard error (no %q):\n%s", want, stderr)
		}
	}

	if strings.Contains(stderr, "Results written to") {
		t.Errorf("stderr claims a results file was written:\n%s", stderr)
	}

	// The run log goes to the results directory under the default name,
	// and is said so; removed here so the test leaves nothing behind.
	_, log, ok := strings.Cut(stderr, "Run log written to ")
	log, _, _ = strings.Cut(log, "\n")

	if !ok || !strings.HasPrefix(log, filepath.Join("results", "small-")) || !strings.HasSuffix(log, runlog.Suffix) {
		t.Fatalf("stderr does not name the run log in the results directory:\n%s", stderr)
	}

	if err := os.Remove(log); err != nil {
		t.Errorf("the run log named: %v", err)
	}

	_ = os.Remove("results") // only if empty: other tests may write there
}

// TestReportStdout checks `report -o -`: the HTML page on standard output.
func TestReportStdout(t *testing.T) {
	t.Parallel()

	code, stdout, stderr := runMain(t, "report", reportQuickstart, "-o", "-")
	if code != ExitOK {
		t.Fatalf("exit code %d, want %d\nstderr:\n%s", code, ExitOK, stderr)
	}

	if !strings.HasPrefix(stdout, "<!DOCTYPE html>") || !strings.Contains(stdout, "</html>") {
		t.Errorf("standard output is not the HTML page: %.200q", stdout)
	}

	if strings.Contains(stderr, "Report written to") {
		t.Errorf("stderr claims a file was written:\n%s", stderr)
	}

	if _, err := os.Stat("-"); err == nil {
		t.Errorf(`a file named "-" was written`)
	}
}
