package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Results files of the report package's tests: a real quickstart run and a
// fixture with every section.
var (
	reportQuickstart = filepath.Join("..", "report", "testdata", "quickstart.json")
	reportFull       = filepath.Join("..", "report", "testdata", "full.json")
)

// requireReportCommand fails clearly while the command is not registered.
func requireReportCommand(t *testing.T) {
	t.Helper()

	root := newRootCommand(newCLIRun().st)
	if c, _, err := root.Find([]string{"report"}); err != nil || c == root {
		t.Fatal("the report command is not registered: add newReportCommand(st) to root.AddCommand in root.go")
	}
}

func TestReportCommand(t *testing.T) {
	requireReportCommand(t)

	dir := t.TempDir()
	out := filepath.Join(dir, "out", "r.html")
	csvDir := filepath.Join(dir, "csv")

	code, stdout, stderr := runMain(t, "report", reportQuickstart, reportFull, "-o", out, "--csv", csvDir)
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", code, stderr)
	}

	if stdout != "" {
		t.Errorf("stdout = %q, want nothing", stdout)
	}

	for _, want := range []string{"Report written to " + out, "CSV written to " + csvDir + " (summary.csv, intervals.csv, blocks.csv)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}

	for _, want := range []string{"<!DOCTYPE html>", filepath.ToSlash(reportQuickstart), filepath.ToSlash(reportFull), `id="r1"`, `id="r2"`, "Made by mongobench report on "} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %q", want)
		}
	}

	for _, name := range []string{"summary.csv", "intervals.csv", "blocks.csv"} {
		if info, err := os.Stat(filepath.Join(csvDir, name)); err != nil || info.Size() == 0 {
			t.Errorf("%s: %v (empty or missing)", name, err)
		}
	}
}

func TestReportCommandDefaults(t *testing.T) {
	requireReportCommand(t)

	quick, err := filepath.Abs(reportQuickstart)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	t.Chdir(dir)

	code, _, stderr := runMain(t, "report", quick)
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", code, stderr)
	}

	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Errorf("no report.html in the working directory: %v", err)
	}

	if !strings.Contains(stderr, "Report written to report.html") {
		t.Errorf("stderr does not say where the report went:\n%s", stderr)
	}

	// --csv alone writes only the CSV files.
	if err := os.Remove(filepath.Join(dir, "report.html")); err != nil {
		t.Fatal(err)
	}

	code, _, stderr = runMain(t, "report", quick, "--csv", "export")
	if code != ExitOK {
		t.Fatalf("--csv: exit %d, want 0\nstderr:\n%s", code, stderr)
	}

	if _, err := os.Stat(filepath.Join(dir, "report.html")); !os.IsNotExist(err) {
		t.Errorf("--csv alone wrote report.html (stat: %v)", err)
	}

	if _, err := os.Stat(filepath.Join(dir, "export", "blocks.csv")); !os.IsNotExist(err) {
		t.Errorf("blocks.csv written for results without blocks (stat: %v)", err)
	}

	if !strings.Contains(stderr, "CSV written to export (summary.csv, intervals.csv)") {
		t.Errorf("stderr does not say where the CSV files went:\n%s", stderr)
	}
}

func TestReportCommandBadInput(t *testing.T) {
	requireReportCommand(t)

	dir := t.TempDir()

	notJSON := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(notJSON, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}

	notResults := filepath.Join(dir, "other.json")
	if err := os.WriteFile(notResults, []byte(`{"name": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}

	missing := filepath.Join(dir, "missing.json")

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"missing", []string{reportQuickstart, missing}, []string{missing, "1 of 2 results files could not be read"}},
		{"not JSON", []string{notJSON}, []string{notJSON + " is not valid JSON"}},
		{"not results", []string{notResults, missing}, []string{notResults + " has no schema_version", missing, "2 of 2"}},
		{"no files", nil, []string{"requires at least 1 arg"}},
		{"empty csv", []string{reportQuickstart, "--csv", ""}, []string{"--csv needs a directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.html")

			code, _, stderr := runMain(t, append([]string{"report", "-o", out}, tc.args...)...)
			if code != ExitBadInput {
				t.Errorf("exit %d, want %d\nstderr:\n%s", code, ExitBadInput, stderr)
			}

			for _, want := range tc.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}

			assertNoStackTrace(t, stderr)

			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a report was written despite bad input (stat: %v)", err)
			}
		})
	}
}

// TestReportWarnsOnCorruptHistogram reports a results file one of whose
// histograms was damaged: the report is still written, but a warning names
// the file, as compare's does (report used to say nothing).
func TestReportWarnsOnCorruptHistogram(t *testing.T) {
	data, err := os.ReadFile(reportQuickstart)
	if err != nil {
		t.Fatal(err)
	}

	const good = `"histogram": "HISTF`

	if !strings.Contains(string(data), good) {
		t.Fatalf("%s has no histogram to damage", reportQuickstart)
	}

	dir := t.TempDir()
	damaged := filepath.Join(dir, "damaged.json")

	if err := os.WriteFile(damaged, []byte(strings.Replace(string(data), good, `"histogram": "XXXXX`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}

	code, _, stderr := runMain(t, "report", damaged, "-o", filepath.Join(dir, "r.html"))
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", code, stderr)
	}

	if !strings.Contains(stderr, "Warning: "+damaged+" is inconsistent (") || !strings.Contains(stderr, "read anyway; first: ") {
		t.Errorf("no warning about the damaged histogram:\n%s", stderr)
	}

	code, _, stderr = runMain(t, "report", reportQuickstart, "-o", filepath.Join(dir, "ok.html"))
	if code != ExitOK || strings.Contains(stderr, "Warning") {
		t.Errorf("an intact file: exit %d, stderr:\n%s", code, stderr)
	}
}
