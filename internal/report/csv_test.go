package report

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

// readCSV reads a CSV file into rows of name → value.
func readCSV(t *testing.T, path string) (header []string, rows []map[string]string) {
	t.Helper()

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}

	if len(recs) == 0 {
		t.Fatalf("%s is empty", path)
	}

	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, v := range rec {
			row[recs[0][i]] = v
		}

		rows = append(rows, row)
	}

	return recs[0], rows
}

func TestReportCSV(t *testing.T) {
	results := readInputs(t, quickstartJSON, fullJSON)
	dir := filepath.Join(t.TempDir(), "export")

	written, err := Options{Sources: []string{"quick.json", "full.json"}}.WriteCSV(dir, results)
	if err != nil {
		t.Fatal(err)
	}

	want := []string{filepath.Join(dir, SummaryCSV), filepath.Join(dir, IntervalsCSV), filepath.Join(dir, BlocksCSV)}
	if !slices.Equal(written, want) {
		t.Errorf("written %v, want %v", written, want)
	}

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}

	if len(entries) != 3 {
		t.Errorf("%d files in the directory, want 3 (temporary files left behind?)", len(entries))
	}

	// summary.csv: one row per file, phase and operation.
	head, rows := readCSV(t, want[0])

	wantRows := 0
	for _, r := range results {
		for _, p := range r.Phases {
			wantRows += len(p.Operations)
		}
	}

	if len(rows) != wantRows {
		t.Errorf("summary.csv has %d rows, want %d", len(rows), wantRows)
	}

	for _, col := range []string{
		"file", "phase", "operation", "count", "ops_per_sec", "mean_us", "p50_us", "p90_us", "p95_us", "p99_us",
		"p999_us", "max_us", "errors_total", "errors", "docs", "service_p99_us", "decode", "us_per_doc",
	} {
		if !slices.Contains(head, col) {
			t.Errorf("summary.csv lacks column %s", col)
		}
	}

	get := findRow(rows, map[string]string{"file": "full.json", "phase": "run", "operation": "get"})
	if get == nil {
		t.Fatal("summary.csv has no row for full.json run get")
	}

	full := results[1]
	op := full.Phases[2].Operations[0]

	for col, want := range map[string]string{
		"count": "1700", "errors_total": "6", "errors": "timeout=4;network=2", "model": "ramping-rate",
		"p99_us": f64(op.LatencyUS.P99), "service_p50_us": f64(op.ServiceLatencyUS.P50), "excluded": "false",
	} {
		if get[col] != want {
			t.Errorf("summary.csv full.json run get %s = %q, want %q", col, get[col], want)
		}
	}

	if scan := findRow(rows, map[string]string{"file": "full.json", "operation": "scan"}); scan == nil || scan["decode"] != "struct" || scan["us_per_doc"] != "480.5" {
		t.Errorf("summary.csv scan row = %v, want decode struct and us_per_doc 480.5", scan)
	}

	if warm := findRow(rows, map[string]string{"phase": "warm"}); warm == nil || warm["excluded"] != "true" {
		t.Errorf("summary.csv warm row = %v, want excluded", warm)
	}

	// intervals.csv: one row per file, phase, interval and operation.
	_, rows = readCSV(t, want[1])

	wantRows = 0
	for _, r := range results {
		for _, p := range r.Phases {
			for _, iv := range p.Intervals {
				wantRows += len(iv.Operations)
			}
		}
	}

	if len(rows) != wantRows {
		t.Errorf("intervals.csv has %d rows, want %d", len(rows), wantRows)
	}

	iv := findRow(rows, map[string]string{"file": "full.json", "phase": "run", "interval": "3", "operation": "get"})
	if iv == nil || iv["count"] != "0" || iv["errors_total"] != "6" || iv["elapsed_s"] != "4" || iv["end"] != "2025-03-04T10:00:11Z" {
		t.Errorf("intervals.csv full.json run interval 3 get = %v", iv)
	}

	// blocks.csv: one row per block and operation.
	_, rows = readCSV(t, want[2])
	if len(rows) != 6 {
		t.Errorf("blocks.csv has %d rows, want 6", len(rows))
	}

	b := findRow(rows, map[string]string{"block_index": "2", "operation": "search"})
	if b == nil || b["complete"] != "false" || b["documents"] != "3000" || b["p50_us"] != "9000" || b["collection"] != "errors" {
		t.Errorf("blocks.csv block 2 search = %v", b)
	}
}

func findRow(rows []map[string]string, match map[string]string) map[string]string {
next:
	for _, row := range rows {
		for k, v := range match {
			if row[k] != v {
				continue next
			}
		}

		return row
	}

	return nil
}

func TestReportCSVWithoutBlocks(t *testing.T) {
	results := readInputs(t, quickstartJSON)
	dir := t.TempDir()

	if _, err := (Options{}).WriteCSV(dir, results); err != nil {
		t.Fatal(err)
	}

	if _, err := os.Stat(filepath.Join(dir, BlocksCSV)); !os.IsNotExist(err) {
		t.Errorf("blocks.csv written without blocks (stat: %v)", err)
	}

	// Without sources, runs are named by workload and start.
	_, rows := readCSV(t, filepath.Join(dir, SummaryCSV))
	if len(rows) == 0 || rows[0]["file"] != "quickstart 2026-11-22 01:18:35Z" {
		t.Errorf("file column = %q, want the workload and start time", rows[0]["file"])
	}

	if _, err := (Options{}).WriteCSV(dir, nil); err == nil {
		t.Error("no error for no results")
	}

	if _, err := (Options{}).WriteCSV(dir, []*result.Result{nil}); err == nil {
		t.Error("no error for a nil result")
	}
}
