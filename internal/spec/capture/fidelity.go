package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ShapeFormat names the format of a shape file, so that a reader can
// refuse a JSON file that is something else.
const ShapeFormat = "mongobench-capture-shapes/1"

// ShapeFile is the captured shape table, written beside the workload
// (W.shapes.json beside W.yaml). The workload language has no field for
// it (it is strict: an unknown field is an error), and a comment is not
// machine-readable, so the table lives in a file of its own that names the
// workload it belongs to and the SHA-256 of the workload's text: a run
// copies that text into its results (workload.source), so capture
// --fidelity can tell whether the results are of this workload as written.
type ShapeFile struct {
	Format string `json:"format"`
	// Workload is the workload's name; WorkloadSHA256 the SHA-256 of the
	// workload file's bytes as capture wrote them.
	Workload       string `json:"workload"`
	WorkloadSHA256 string `json:"workload_sha256"`
	// Sources are the files (or the server) the capture read.
	Sources []string `json:"sources"`
	// Shapes are the captured shapes, most frequent first.
	Shapes []ShapeEntry `json:"shapes"`
}

// ShapeEntry is one row of the shape table.
type ShapeEntry struct {
	// ID is the shape's key (the first eight hex digits of the SHA-256 of
	// its text).
	ID string `json:"id"`
	// Operation is the name of the workload's operation for this shape;
	// empty when the workload could not hold it (an update command whose
	// statements the log does not show).
	Operation string `json:"operation,omitempty"`
	// Text is the shape: fields and operators, values replaced by ?.
	Text  string `json:"text"`
	Count int64  `json:"count"`
	// Loaded are the shape's operations that became the workload's load
	// step (inserts before any other operation), not operations of its
	// mix: the mix's share is of Count - Loaded.
	Loaded int64 `json:"loaded,omitempty"`
	// P50MS and P99MS are the server's time from the source
	// (durationMillis, whole milliseconds), nearest-rank percentiles.
	P50MS int64 `json:"p50_ms"`
	P99MS int64 `json:"p99_ms"`
	// P50US and P99US are the same in microseconds (three significant
	// digits) when the source gave every operation's time in
	// microseconds (a recording's durationMicros): whole milliseconds
	// are truncated, up to a millisecond low, which at a few ms is far
	// beyond a 25% tolerance. Absent otherwise.
	P50US int64 `json:"p50_us,omitempty"`
	P99US int64 `json:"p99_us,omitempty"`
}

// capturedMS is the captured p-th percentile (50 or 99) in milliseconds:
// from microseconds when the source had them.
func (s *ShapeEntry) capturedMS(p int) float64 {
	ms, us := s.P50MS, s.P50US
	if p == 99 {
		ms, us = s.P99MS, s.P99US
	}

	if us > 0 {
		return float64(us) / 1000
	}

	return float64(ms)
}

func (c *Capture) shapeFile(meta Meta, data []byte, names map[*Shape]string, lead bool) *ShapeFile {
	sum := sha256.Sum256(data)
	sf := &ShapeFile{Format: ShapeFormat, Workload: meta.Name, WorkloadSHA256: hex.EncodeToString(sum[:]), Sources: meta.Sources}

	for _, s := range c.Shapes() {
		e := ShapeEntry{
			ID: s.ID, Operation: names[s], Text: s.Text, Count: s.Count,
			P50MS: s.Percentile(50), P99MS: s.Percentile(99),
		}
		if lead {
			e.Loaded = s.lead
		}

		if us, ok := s.PercentileMicros(50); ok && us > 0 {
			e.P50US = us
			e.P99US, _ = s.PercentileMicros(99)
		}

		sf.Shapes = append(sf.Shapes, e)
	}

	return sf
}

// ParseShapeFile reads a shape file; errors name the file.
func ParseShapeFile(path string, data []byte) (*ShapeFile, error) {
	var sf ShapeFile
	if err := json.Unmarshal(data, &sf); err != nil {
		return nil, fmt.Errorf("%s: not a shape file of mongobench capture: %w", path, err)
	}

	if sf.Format != ShapeFormat {
		return nil, fmt.Errorf("%s: format %q, want %q (a shape file written by mongobench capture beside its workload)", path, sf.Format, ShapeFormat)
	}

	for i, s := range sf.Shapes {
		if s.ID == "" || s.Count < 0 || s.Loaded < 0 || s.Loaded > s.Count {
			return nil, fmt.Errorf("%s: shapes[%d]: needs an id, a count >= 0 and loaded between 0 and the count", path, i)
		}
	}

	return &sf, nil
}

// RunOperation is what the fidelity report needs of one operation of a
// run's measured phase. The caller takes it from a results file, so that
// this package need not know the results contract.
type RunOperation struct {
	Name string
	// Issued is the operations started: successful and failed, since the
	// weights decide how many are started, not how many succeed.
	Issued int64
	// P50US and P99US are the client's latency in microseconds: the
	// service time (from the send) when the run was open loop, so that a
	// queue behind a late schedule is not counted.
	P50US, P99US float64
}

// FidelityRow is one shape of the report.
type FidelityRow struct {
	ShapeEntry
	// CapturedShare is the shape's share of the captured operations the
	// workload holds, RunShare its operation's share of the run's.
	CapturedShare, RunShare float64
	// Ran is false when the run has no operation of this name.
	Ran            bool
	RunP50, RunP99 float64 // milliseconds
}

// Fidelity compares a capture with a run of its workload.
type Fidelity struct {
	// Proxy is whether the run's figures are a recording of the run made
	// at the same point as the capture (CompareShapes), rather than the
	// run's client latencies (CompareRun); it changes only the legend.
	Proxy bool

	Rows []FidelityRow
	// MaxPoints is the largest difference of shares, in percentage points.
	MaxPoints float64
	// Tolerance is the p50 ratio's tolerance in percent; Within of
	// Compared shapes have run p50 / captured p50 inside 1 ± Tolerance/100.
	Tolerance        float64
	Within, Compared int
	// Unresolved are the shapes whose captured p50 is 0 ms: the log's
	// resolution is a millisecond, so no ratio can be formed.
	Unresolved int
	// Loaded are the captured inserts that became the load step.
	Loaded int64
	// Left are the captured operations of shapes the workload does not
	// hold; Extra the run's operations no shape names (added after
	// capture).
	Left  int64
	Extra []string
}

// CompareRun lines a shape file up with a run's operations. tolerance is
// in percent (25 means a run p50 within 25% of the captured median).
func CompareRun(sf *ShapeFile, run []RunOperation, tolerance float64) (*Fidelity, error) {
	f := &Fidelity{Tolerance: tolerance}
	byName := map[string]RunOperation{}

	var runTotal int64

	for _, o := range run {
		byName[o.Name] = o
	}

	var captured int64

	named := map[string]bool{}

	for _, s := range sf.Shapes {
		f.Loaded += s.Loaded

		if s.Operation == "" {
			f.Left += s.Count - s.Loaded

			continue
		}

		named[s.Operation] = true
		captured += s.Count - s.Loaded

		if o, ok := byName[s.Operation]; ok {
			runTotal += o.Issued
		}
	}

	for _, o := range run {
		if !named[o.Name] {
			f.Extra = append(f.Extra, o.Name)
		}
	}

	if runTotal == 0 {
		return nil, errors.New("the run has no operation of the captured workload (is it a run of that workload? its operations are named in the shape file)")
	}

	for _, s := range sf.Shapes {
		if s.Operation == "" {
			continue
		}

		row := FidelityRow{ShapeEntry: s, CapturedShare: float64(s.Count-s.Loaded) / float64(max(captured, 1))}

		if o, ok := byName[s.Operation]; ok {
			row.Ran = true
			row.RunShare = float64(o.Issued) / float64(runTotal)
			row.RunP50, row.RunP99 = o.P50US/1000, o.P99US/1000
		}

		f.MaxPoints = math.Max(f.MaxPoints, 100*math.Abs(row.RunShare-row.CapturedShare))

		switch {
		case !row.Ran || row.RunP50 == 0:
		case s.capturedMS(50) == 0:
			f.Unresolved++
		default:
			f.Compared++

			if math.Abs(row.RunP50/s.capturedMS(50)-1) <= tolerance/100 {
				f.Within++
			}
		}

		f.Rows = append(f.Rows, row)
	}

	return f, nil
}

// CompareShapes lines a shape file up with the shape file of a recording
// of the run, made through a recording proxy as the capture was: both
// latencies are then the proxy's, from a request to its reply, and the
// comparison is like with like (CompareRun's is the client's, which adds
// the driver and drops the proxy's hop). Shapes are matched by id (the
// shape's text: fields and operators), so a shape the run sent in another
// form is named among the run's extra shapes. Loaded operations of either
// side are left out of the shares: the run's load step is its own
// leading inserts, or (when the run's own commands came first) the
// inserts of the shape the capture made its load.
func CompareShapes(sf, run *ShapeFile, tolerance float64) (*Fidelity, error) {
	byID := map[string]string{}

	for _, s := range sf.Shapes {
		byID[s.ID] = s.Operation
	}

	ops := make([]RunOperation, 0, len(run.Shapes))

	for _, s := range run.Shapes {
		issued := s.Count - s.Loaded
		if issued <= 0 {
			continue
		}

		name, ok := byID[s.ID]

		switch {
		case ok && name == "":
			// A captured shape the workload holds as no operation:
			// the captured load's inserts, which the run sends as
			// its load step, or one the capture left out. Neither
			// side's shares have it.
			continue
		case !ok:
			// Not a captured shape: named by its text, so the
			// report says what the run sent instead.
			name = s.ID + " " + s.Text
		}

		ops = append(ops, RunOperation{Name: name, Issued: issued, P50US: 1000 * s.capturedMS(50), P99US: 1000 * s.capturedMS(99)})
	}

	f, err := CompareRun(sf, ops, tolerance)
	if err != nil {
		return nil, fmt.Errorf("the recording of the run has no shape of the capture (is it a recording of a run of this workload?): %w", err)
	}

	f.Proxy = true

	return f, nil
}

// Write prints the report: per shape the captured and the run's share of
// operations and their difference in points, the captured median and 99th
// percentile of the server's time and the run's p50 and p99 latency with
// their ratio (run / captured), then the one-line summary.
func (f *Fidelity) Write(w io.Writer) error {
	var b strings.Builder

	fmt.Fprintf(&b, "%-8s  %8s  %7s  %6s  %8s  %8s  %6s  %8s  %8s  %6s  %s\n",
		"shape", "captured", "run", "points", "cap p50", "run p50", "ratio", "cap p99", "run p99", "ratio", "operation")

	for _, r := range f.Rows {
		// A shape that did not run has a share of 0: its difference is
		// its whole captured share.
		run, p50, p99, r50, r99 := "-", "-", "-", "-", "-"
		points := fmt.Sprintf("%+.1f", 100*(r.RunShare-r.CapturedShare))

		if r.Ran {
			run = fmt.Sprintf("%.1f%%", 100*r.RunShare)
			p50, p99 = fmt.Sprintf("%.2f", r.RunP50), fmt.Sprintf("%.2f", r.RunP99)
			r50, r99 = ratio(r.RunP50, r.capturedMS(50)), ratio(r.RunP99, r.capturedMS(99))
		}

		fmt.Fprintf(&b, "%-8s  %7.1f%%  %7s  %6s  %8s  %8s  %6s  %8s  %8s  %6s  %s\n",
			r.ID, 100*r.CapturedShare, run, points, capturedText(r.P50MS, r.P50US), p50, r50, capturedText(r.P99MS, r.P99US), p99, r99, r.Operation)
	}

	if f.Proxy {
		b.WriteString("Shares are of the operations the workload holds; times in ms, both taken at the recording proxy, from a request\n" +
			"to its reply (durationMicros): captured = the application's, run = the run's, recorded the same way (like with like).\n")
	} else {
		b.WriteString("Shares are of the operations the workload holds; times in ms: captured = the server's time from the source\n" +
			"(durationMillis, whole ms, or a recording's durationMicros), run = the client's latency (includes the round trip and the driver).\n")
	}

	if f.Unresolved > 0 {
		fmt.Fprintf(&b, "%d shapes took under 1 ms on the server (0 ms in the log): no ratio.\n", f.Unresolved)
	}

	if f.Loaded > 0 {
		fmt.Fprintf(&b, "%d captured inserts ran before any other operation: the workload loads their documents before the run; left out of the shares.\n", f.Loaded)
	}

	if f.Left > 0 {
		fmt.Fprintf(&b, "%d captured operations are of shapes the workload does not hold; left out of the shares.\n", f.Left)
	}

	switch {
	case len(f.Extra) > 0 && f.Proxy:
		fmt.Fprintf(&b, "Shapes the run sent that the capture has not (another form of a query, or the run's own commands), left out: %s.\n", strings.Join(f.Extra, "; "))
	case len(f.Extra) > 0:
		fmt.Fprintf(&b, "Operations of the run that no shape names (added after capture), left out: %s.\n", strings.Join(f.Extra, ", "))
	}

	fmt.Fprintf(&b, "mix within %.1f points, p50 within %g%% for %d of %d shapes\n", f.MaxPoints, f.Tolerance, f.Within, f.Compared)

	_, err := io.WriteString(w, b.String())

	return err
}

func ratio(run, captured float64) string {
	if captured <= 0 {
		return "-"
	}

	return fmt.Sprintf("%.2f", run/captured)
}

// capturedText is a captured time: whole milliseconds from a log, or
// milliseconds with decimals from a recording's microseconds.
func capturedText(ms, us int64) string {
	if us > 0 {
		return fmt.Sprintf("%.2f", float64(us)/1000)
	}

	return strconv.FormatInt(ms, 10)
}
