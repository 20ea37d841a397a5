package analysis

import (
	"fmt"
	"math"
	"strconv"

	"github.com/mongobench/mongobench/internal/base/units"
	"github.com/mongobench/mongobench/internal/results/result"
	vd "github.com/mongobench/mongobench/internal/stats/verdict"
)

// CompareAlpha is the significance level of `mongobench compare`.
const CompareAlpha = vd.DefaultAlpha

// CompareMinRuns is the least number of runs a side for which compare can
// establish a difference at CompareAlpha (the Mann-Whitney U test of runs).
var CompareMinRuns = vd.MinSamples(vd.Unpaired, CompareAlpha)

// compareOptions are the verdict options of compare, judged by j: separate
// runs, each one observation of the machine's state (its values are the
// whole run's, from its exact histograms), the runs of two sides
// independent samples. The intervals of one run are not: a slow minute
// makes several slow intervals, and the machine's drift between two runs
// shows in none of them, so that treating intervals as samples called
// identical runs different about a third of the time on a busy machine.
func compareOptions(j Judging) vd.Options {
	return j.options(CompareAlpha, vd.Unpaired, "run")
}

// File is one side of a comparison: one results file, several results
// files of the same workload (a set of repeated runs), or one cell of a
// matrix file (its trials).
type File struct {
	Label string // A, B, … (A is the baseline)
	Path  string
	Res   *result.Result // the first run's results
	Phase *result.Phase  // the first run's main phase
	// Runs are the main phases of the side's runs, one per run (a matrix
	// cell's: one per trial). Each is one sample of the comparison.
	Runs []*result.Phase
}

// RunPhases are the side's runs: Runs, or Phase alone when Runs is empty.
func (f *File) RunPhases() []*result.Phase {
	if len(f.Runs) > 0 {
		return f.Runs
	}

	if f.Phase != nil {
		return []*result.Phase{f.Phase}
	}

	return nil
}

// Label is the short name of the i'th file: A to Z, then F27, F28 and so on.
func Label(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}

	return "F" + strconv.Itoa(i+1)
}

// CompareCell is one metric of one operation in one file.
type CompareCell struct {
	Median float64
	// Lo and Hi bound the median's confidence interval (±Inf with too
	// few intervals, NaN when absent), for charts' whiskers.
	Lo, Hi  float64
	Verdict *vd.Verdict // nil for the baseline and when absent
	Text    string      // the verdict column
}

// CompareRow is one metric of one operation, across the files.
type CompareRow struct {
	Metric CompareMetric
	Cells  []CompareCell // one per file
}

// CompareOp is the comparison of one operation.
type CompareOp struct {
	Name string
	Rows []CompareRow
}

// CompareOperations compares every operation of the files' main phases, in
// the order they first appear, judged by j (its Reference is ignored: the
// first file is the baseline).
func CompareOperations(files []*File, j Judging) []CompareOp {
	var names []string

	seen := map[string]bool{}

	for _, cf := range files {
		for _, p := range cf.RunPhases() {
			for _, o := range p.Operations {
				if !seen[o.Name] {
					seen[o.Name] = true
					names = append(names, o.Name)
				}
			}
		}
	}

	out := make([]CompareOp, 0, len(names))

	for _, name := range names {
		op := CompareOp{Name: name}

		for _, m := range CompareMetrics {
			op.Rows = append(op.Rows, compareMetricRow(files, name, m, j))
		}

		out = append(out, op)
	}

	return out
}

// compareSamples are a side's samples of one operation's metric: one per
// run, the run's value over its whole main phase (latencies from the
// phase's merged histogram, throughput its count over its length). Latency
// metrics skip runs without a successful operation, which measured no
// latency.
func compareSamples(cf *File, op string, m CompareMetric) []vd.Sample {
	var out []vd.Sample

	for i, p := range cf.RunPhases() {
		for j := range p.Operations {
			o := &p.Operations[j]
			if o.Name != op || (m.Latency && o.Count == 0) {
				continue
			}

			out = append(out, vd.Sample{Variant: cf.Label, Round: i, Value: m.Get(o)})
		}
	}

	return out
}

func compareMetricRow(files []*File, op string, m CompareMetric, j Judging) CompareRow {
	var samples []vd.Sample
	for _, cf := range files {
		samples = append(samples, compareSamples(cf, op, m)...)
	}

	byLabel := map[string]vd.Verdict{}
	for _, v := range vd.CompareTo(samples, files[0].Label, m.Dir, compareOptions(j)) {
		byLabel[v.Variant] = v
	}

	row := CompareRow{Metric: m, Cells: make([]CompareCell, len(files))}
	_, haveBase := byLabel[files[0].Label]

	for i, cf := range files {
		v, ok := byLabel[cf.Label]

		switch {
		case !ok:
			row.Cells[i] = CompareCell{Median: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Text: "no data"}
		case i == 0:
			row.Cells[i] = CompareCell{Median: v.Median, Lo: v.Lo, Hi: v.Hi}
		case !haveBase:
			row.Cells[i] = CompareCell{Median: v.Median, Lo: v.Lo, Hi: v.Hi, Text: "no baseline data"}
		default:
			row.Cells[i] = CompareCell{Median: v.Median, Lo: v.Lo, Hi: v.Hi, Verdict: &v, Text: v.Text}
		}
	}

	return row
}

// OpNames are the names of the compared operations.
func OpNames(ops []CompareOp) []string {
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.Name
	}

	return names
}

// Table is a table of figures and verdicts, the one model every output
// renders: the terminal and Markdown in package cli, HTML in package
// report. Keeping the model apart from its rendering is what makes the
// outputs say the same thing.
type Table struct {
	// Title names what the table is about (an operation, a metric).
	Title string

	// Header holds the column names.
	Header []string

	// Numeric marks, per column, columns of values (right-aligned) rather
	// than words.
	Numeric []bool

	// Rows hold one cell per column.
	Rows [][]TableCell
}

// TableCell is one cell of a Table: its text and, for a verdict, its kind,
// so that a renderer can mark differences without parsing the text.
type TableCell struct {
	Text string

	// IsVerdict tells whether Kind applies: Kind's zero value is a real
	// kind (inconclusive).
	IsVerdict bool
	Kind      vd.Kind
}

// TextRows returns the table's cells as text, row by row.
func (t Table) TextRows() [][]string {
	out := make([][]string, len(t.Rows))

	for i, r := range t.Rows {
		row := make([]string, len(r))
		for j, c := range r {
			row[j] = c.Text
		}

		out[i] = row
	}

	return out
}

// CompareTable is the table of one operation: a row per metric, with the
// baseline's value, then every other file's value and verdict.
func CompareTable(files []*File, op CompareOp) Table {
	t := Table{Title: op.Name, Header: []string{"metric", files[0].Label + " (baseline)"}}
	for _, cf := range files[1:] {
		t.Header = append(t.Header, cf.Label, cf.Label+" vs "+files[0].Label)
	}

	// The baseline and every other file's value are numbers; the metric
	// and verdict columns are words.
	t.Numeric = make([]bool, len(t.Header))
	for i := range t.Numeric {
		t.Numeric[i] = i == 1 || (i >= 2 && i%2 == 0)
	}

	for _, r := range op.Rows {
		row := []TableCell{{Text: r.Metric.Name}, {Text: FormatValue(r.Metric, r.Cells[0].Median)}}
		for i := 1; i < len(files); i++ {
			c := r.Cells[i]
			vc := TableCell{Text: c.Text}

			if c.Verdict != nil {
				vc.IsVerdict, vc.Kind = true, c.Verdict.Kind
			}

			row = append(row, TableCell{Text: FormatValue(r.Metric, c.Median)}, vc)
		}

		t.Rows = append(t.Rows, row)
	}

	return t
}

// CompareNote explains how the numbers of a comparison were formed.
func CompareNote(files []*File) string {
	runs := len(files[0].RunPhases())
	for _, f := range files[1:] {
		runs = min(runs, len(f.RunPhases()))
	}

	note := fmt.Sprintf(`Each run is one sample: its value is the whole main phase's (percentiles from
its merged histogram), and a side's value is the median over its runs.
Verdicts compare each side's runs with %s's: the ratio (Hodges-Lehmann) with
its %g%% confidence interval from the Mann-Whitney U test; a difference when
the interval excludes 1 and the change is at least %s (smaller: "no
meaningful difference"); inconclusive below %d runs a side.`, files[0].Label, 100*(1-CompareAlpha),
		strconv.FormatFloat(100*vd.DefaultMinEffect, 'f', -1, 64)+"%", CompareMinRuns)
	if runs < CompareMinRuns {
		note += fmt.Sprintf(`
One run a side is one observation of the machine's state each: the drift
between runs (a busy neighbour, a warm cache) is not measured, so no verdict
can tell it from a change in the code. Repeat each side %d times or more and
give each side as a directory or a comma-separated list of results files.`, CompareMinRuns)
	}

	return note
}

// Legend describes a compared file in one line.
func Legend(cf *File, baseline bool) string {
	runs := len(cf.RunPhases())

	what := fmt.Sprintf("%d intervals", len(cf.Phase.Intervals))
	if runs > 1 {
		what = fmt.Sprintf("%d runs", runs)
	}

	s := fmt.Sprintf("%s  %s  (workload %q, phase %q, %s, started %s)",
		cf.Label, cf.Path, cf.Res.Workload.Name, cf.Phase.Name, what,
		cf.Res.StartedAt.UTC().Format("2006-01-02 15:04:05Z"))
	if baseline {
		s += "  baseline"
	}

	return s
}

// MatrixCells returns what `mongobench compare` compares of a matrix
// results file (variants × targets in rounds): one entry per cell, a
// target and a variant, in the matrix's order of targets, then variants.
// A cell's samples are the intervals of its trials' main phases, round
// after round, so that intervals pair by index with another cell of the
// same design (same round, same interval); its runs, the samples of the
// verdicts, are its trials. Cells without trials (a target that failed)
// are left out. label gives the i'th cell its column label.
func MatrixCells(path string, res *result.Result, label func(i int) string) ([]*File, error) {
	m := res.Matrix
	if err := res.CheckContents(); err != nil {
		return nil, fmt.Errorf("results file %s: %w", path, err)
	}

	var out []*File

	for _, t := range m.Targets {
		for _, v := range m.Variants {
			cf := matrixCell(path, m, t.Name, v)
			if cf == nil {
				continue
			}

			cf.Label = label(len(out))
			out = append(out, cf)
		}
	}

	if len(out) == 0 {
		return nil, fmt.Errorf("results file %s: no matrix cell has measured intervals", path)
	}

	return out, nil
}

// matrixCell gathers the trials of one target and variant, in round order,
// into a File whose phase holds their main phases' intervals; nil when
// there are none.
func matrixCell(path string, m *result.Matrix, targetName, variant string) *File {
	var (
		first *result.Result
		phase result.Phase
		runs  []*result.Phase
	)

	seen := map[string]bool{}

	for round := 1; round <= m.Rounds; round++ {
		for _, tr := range m.Trials {
			if tr.Target != targetName || tr.Variant != variant || tr.Round != round || tr.Result == nil {
				continue
			}

			main := tr.Result.MainPhase()
			if main == nil || len(main.Intervals) == 0 {
				continue
			}

			if first == nil {
				first = tr.Result
				phase.Name = main.Name
			}

			runs = append(runs, main)

			for _, o := range main.Operations {
				if !seen[o.Name] {
					seen[o.Name] = true
					phase.Operations = append(phase.Operations, result.Operation{Name: o.Name})
				}
			}

			phase.Intervals = append(phase.Intervals, main.Intervals...)
		}
	}

	if first == nil {
		return nil
	}

	return &File{
		Path:  fmt.Sprintf("%s [%s · %s]", path, targetName, variant),
		Res:   first,
		Phase: &phase,
		Runs:  runs,
	}
}

// MatrixTables are the tables of a matrix, per operation and metric: the
// variants × targets, each cell the median over trials and the verdict
// against the best variant of the same target (or, with one variant, the
// best target).
func MatrixTables(m *result.Matrix) []Table {
	cell := map[[4]string]result.CellVerdict{}

	var ops []string

	seenOp := map[string]bool{}

	for _, mv := range m.Verdicts {
		if !seenOp[mv.Operation] {
			seenOp[mv.Operation] = true
			ops = append(ops, mv.Operation)
		}

		for _, cv := range mv.Variants {
			cell[[4]string{mv.Target, mv.Operation, mv.Metric, cv.Variant}] = cv
		}
	}

	var out []Table

	for _, op := range ops {
		for _, metric := range MatrixMetrics {
			unit := "ops/s"
			if metric.Name != "throughput" {
				unit = "latency"
			}

			t := Table{Title: fmt.Sprintf("%s — %s (%s)", op, metric.Name, unit), Header: []string{"variant"}}
			for _, tg := range m.Targets {
				t.Header = append(t.Header, tg.Name)
			}

			t.Numeric = make([]bool, len(t.Header))

			for _, v := range m.Variants {
				row := []TableCell{{Text: v}}

				for _, tg := range m.Targets {
					cv, ok := cell[[4]string{tg.Name, op, metric.Name, v}]
					if cross, found := cell[[4]string{CrossTarget, op, metric.Name, tg.Name}]; found && len(m.Variants) == 1 {
						cv, ok = cross, true
					}

					if !ok {
						row = append(row, TableCell{Text: "-"})
						continue
					}

					val := fmt.Sprintf("%.1f", cv.Median)
					if metric.Name != "throughput" {
						val = units.Micros(cv.Median)
					}

					row = append(row, TableCell{Text: val + " — " + cv.Text, IsVerdict: true, Kind: cv.Kind})
				}

				t.Rows = append(t.Rows, row)
			}

			out = append(out, t)
		}
	}

	return out
}
