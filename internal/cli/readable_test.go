package cli

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

// readChecked reads a results file and fails on any problem Check finds.
func readChecked(t *testing.T, path string) *result.Result {
	t.Helper()

	r, err := result.Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}

	if errs := r.Check(); len(errs) > 0 {
		t.Errorf("Check found %d problems; first: %v", len(errs), errs[0])
	}

	if err := r.CheckContents(); err != nil {
		t.Errorf("CheckContents: %v", err)
	}

	return r
}

// assertReadable passes a results file through compare (with itself),
// report -o and report --csv.
func assertReadable(t *testing.T, dir, res string) {
	t.Helper()

	readChecked(t, res)

	code, stdout, stderr := runMain(t, "compare", res, res)
	if code != 0 || !strings.Contains(stdout, "Results files:") || !strings.Contains(stdout, "B vs A") {
		t.Errorf("compare: exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	assertNoStackTrace(t, stdout+stderr)

	html := filepath.Join(dir, "report.html")
	csvDir := filepath.Join(dir, "csv")

	code, stdout, stderr = runMain(t, "report", res, "-o", html, "--csv", csvDir)
	if code != 0 {
		t.Fatalf("report: exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	if fi, err := os.Stat(html); err != nil || fi.Size() == 0 {
		t.Errorf("report wrote no page: %v", err)
	}

	for _, name := range []string{"summary.csv", "intervals.csv"} {
		rows := readCSVRows(t, filepath.Join(csvDir, name))
		if len(rows) < 2 {
			t.Errorf("%s has %d rows, want a header and data rows", name, len(rows))
		}
	}
}

// readCSVRows reads a CSV file whole.
func readCSVRows(t *testing.T, path string) [][]string {
	t.Helper()

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}

	return rows
}
