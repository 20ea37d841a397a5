package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/base/atomicfile"

	"github.com/mongobench/mongobench/internal/results/result"
)

// CSV file names written by WriteCSV.
const (
	SummaryCSV   = "summary.csv"
	IntervalsCSV = "intervals.csv"
	BlocksCSV    = "blocks.csv"
)

// WriteCSV exports results to CSV files in dir, created if missing, and
// returns the paths written:
//
//   - summary.csv: one row per run, phase and operation, with every
//     latency figure (µs), the service times when recorded, errors and
//     documents;
//   - intervals.csv: one row per run, phase, interval and operation: the
//     time series;
//   - blocks.csv, only when a phase has growth blocks: one row per block and
//     operation, with the collection's size at the block's end.
//
// A run is a results file of a single run, or one trial of a matrix file
// (variants × targets in rounds), whose target, variant and round columns
// then name its cell; they are empty for a single run. The file column
// names each results file as the report does (Options.Sources, else
// workload and start time). Each file is written atomically, from the
// sanitized results (result.Sanitize).
func (o Options) WriteCSV(dir string, results []*result.Result) ([]string, error) {
	if len(results) == 0 {
		return nil, fmt.Errorf("write CSV to %s: no results", dir)
	}

	results, err := result.SanitizeAll(results)
	if err != nil {
		return nil, fmt.Errorf("write CSV to %s: %w", dir, err)
	}

	labels, err := o.labels(results)
	if err != nil {
		return nil, fmt.Errorf("write CSV to %s: %w", dir, err)
	}

	runs := csvRuns(labels, results)

	files := []struct {
		name  string
		write func(*csv.Writer, []csvRun)
		skip  bool
	}{
		{SummaryCSV, writeSummaryCSV, false},
		{IntervalsCSV, writeIntervalsCSV, false},
		{BlocksCSV, writeBlocksCSV, !hasBlocks(runs)},
	}

	var written []string

	for _, f := range files {
		if f.skip {
			continue
		}

		var buf bytes.Buffer

		w := csv.NewWriter(&buf)
		f.write(w, runs)
		w.Flush()

		if err := w.Error(); err != nil {
			return written, fmt.Errorf("write %s: %w", f.name, err)
		}

		path := filepath.Join(dir, f.name)
		if err := atomicfile.WriteBytes(path, buf.Bytes()); err != nil {
			return written, err
		}

		written = append(written, path)
	}

	return written, nil
}

// labels names each result as the report does.
func (o Options) labels(results []*result.Result) ([]string, error) {
	if len(o.Sources) != 0 && len(o.Sources) != len(results) {
		return nil, fmt.Errorf("%d sources for %d results", len(o.Sources), len(results))
	}

	out := make([]string, len(results))

	for i, r := range results {
		if r == nil {
			return nil, fmt.Errorf("result %d is nil", i+1)
		}

		if len(o.Sources) > 0 {
			out[i] = sourceLabel(o.Sources[i])
		} else {
			out[i] = defaultLabel(r)
		}
	}

	return out, nil
}

func hasBlocks(runs []csvRun) bool {
	for _, run := range runs {
		for _, p := range run.r.Phases {
			if len(p.Blocks) > 0 {
				return true
			}
		}
	}

	return false
}

// latencyHeader names the columns of latencyFields with a prefix.
func latencyHeader(prefix string) []string {
	return []string{prefix + "mean_us", prefix + "p50_us", prefix + "p90_us", prefix + "p95_us", prefix + "p99_us", prefix + "p999_us", prefix + "max_us"}
}

func latencyFields(l result.Latency) []string {
	return []string{f64(l.Mean), f64(l.P50), f64(l.P90), f64(l.P95), f64(l.P99), f64(l.P999), f64(l.Max)}
}

func f64(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func i64(v int64) string { return strconv.FormatInt(v, 10) }

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}

	return t.UTC().Format(time.RFC3339Nano)
}

// errorsField lists error counts as "kind=count;kind=count", most frequent
// first.
func errorsField(errs map[string]int64) string {
	kinds := errorKinds(errs)

	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k + "=" + i64(errs[k])
	}

	return strings.Join(parts, ";")
}

func writeSummaryCSV(w *csv.Writer, runs []csvRun) {
	head := []string{
		"file", "target", "variant", "round", "workload", "server", "status", "phase", "model", "excluded", "phase_duration_s", "operation",
		"count", "ops_per_sec",
	}
	head = append(head, latencyHeader("")...)
	head = append(head, "errors_total", "errors", "docs", "clamped")
	head = append(head, latencyHeader("service_")...)
	head = append(head, "decode", "us_per_doc")
	_ = w.Write(head)

	for _, run := range runs {
		r := run.r
		for _, p := range r.Phases {
			for _, o := range p.Operations {
				row := []string{
					run.label, run.target, run.variant, run.round, r.Workload.Name, r.Target.ServerVersion, r.Status, p.Name, p.Model,
					strconv.FormatBool(p.Excluded), f64(p.DurationS), o.Name, i64(o.Count), f64(o.OpsPerSec),
				}
				row = append(row, latencyFields(o.LatencyUS)...)
				row = append(row, i64(errorTotal(o.Errors)), errorsField(o.Errors), i64(o.Docs), i64(o.Clamped))

				if o.ServiceLatencyUS != nil {
					row = append(row, latencyFields(*o.ServiceLatencyUS)...)
				} else {
					row = append(row, make([]string, 7)...)
				}

				perDoc := ""
				if o.Decode != "" && o.Docs > 0 {
					perDoc = f64(o.USPerDoc)
				}

				row = append(row, o.Decode, perDoc)
				_ = w.Write(row)
			}
		}
	}
}

func writeIntervalsCSV(w *csv.Writer, runs []csvRun) {
	_ = w.Write([]string{
		"file", "target", "variant", "round", "phase", "interval", "start", "end", "elapsed_s", "operation", "count", "ops_per_sec",
		"mean_us", "p50_us", "p90_us", "p99_us", "max_us", "errors_total", "errors", "docs",
	})

	for _, run := range runs {
		for _, p := range run.r.Phases {
			for n, iv := range p.Intervals {
				for _, o := range iv.Operations {
					l := o.LatencyUS
					_ = w.Write([]string{
						run.label, run.target, run.variant, run.round, p.Name, strconv.Itoa(n), ts(iv.Start), ts(iv.End), f64(iv.ElapsedS),
						o.Name, i64(o.Count), f64(o.OpsPerSec), f64(l.Mean), f64(l.P50), f64(l.P90), f64(l.P99), f64(l.Max),
						i64(errorTotal(o.Errors)), errorsField(o.Errors), i64(o.Docs),
					})
				}
			}
		}
	}
}

func writeBlocksCSV(w *csv.Writer, runs []csvRun) {
	head := []string{
		"file", "target", "variant", "round", "phase", "block_index", "complete", "start", "end", "duration_s", "collection", "documents",
		"data_bytes", "storage_bytes", "index_bytes", "size_note", "operation", "count", "ops_per_sec",
	}
	head = append(head, latencyHeader("")...)
	head = append(head, "errors_total", "errors", "docs")
	_ = w.Write(head)

	for _, run := range runs {
		for _, p := range run.r.Phases {
			for _, b := range p.Blocks {
				c := b.Collection

				note := c.Note
				if c.Error != "" {
					note = c.Error
				}

				for _, o := range b.Operations {
					row := []string{
						run.label, run.target, run.variant, run.round, p.Name, strconv.Itoa(b.Index), strconv.FormatBool(b.Complete),
						ts(b.Start), ts(b.End), f64(b.DurationS), c.Name, i64(c.Documents),
						i64(c.DataBytes), i64(c.StorageBytes), i64(c.IndexBytes), note, o.Name, i64(o.Count), f64(o.OpsPerSec),
					}
					row = append(row, latencyFields(o.LatencyUS)...)
					row = append(row, i64(errorTotal(o.Errors)), errorsField(o.Errors), i64(o.Docs))
					_ = w.Write(row)
				}
			}
		}
	}
}

// csvRun is one run as the CSV files list it: a results file of a single
// run, or one trial of a matrix file with its cell.
type csvRun struct {
	label                  string
	r                      *result.Result
	target, variant, round string
}

// csvRuns lists the runs of the results: each single run as it is, each
// matrix as its trials, in the matrix's order.
func csvRuns(labels []string, results []*result.Result) []csvRun {
	var out []csvRun

	for i, r := range results {
		if r.Matrix == nil {
			out = append(out, csvRun{label: labels[i], r: r})
			continue
		}

		for _, tr := range r.Matrix.Trials {
			if tr.Result != nil {
				out = append(out, csvRun{
					label: labels[i], r: tr.Result,
					target: tr.Target, variant: tr.Variant, round: strconv.Itoa(tr.Round),
				})
			}
		}
	}

	return out
}
