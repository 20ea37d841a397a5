// Package report turns results files into an HTML report and CSV exports.
//
// The HTML report is one self-contained file that works offline: the chart
// library (uPlot, vendored under assets/ with its licence) and the page's
// script and style are inlined, and the charts are drawn in the browser
// from data embedded in the page as JSON. The page holds no web address, so
// opening it never touches the network. Everything the charts show is also
// in the page's tables, which need no script.
//
// Like every reader of results, the report uses nothing but the results
// files.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/base/atomicfile"

	"github.com/mongobench/mongobench/internal/results/result"
)

// Options adjust a report. The zero value is valid.
type Options struct {
	// Sources names the file each result was read from, in the same
	// order; a run is labelled by its file when known, else by its
	// workload and start time.
	Sources []string

	// Generated is shown as the time the report was made; zero leaves it
	// out (so that the same results always give the same page).
	Generated time.Time

	// DescribeTargetKind says in one sentence what serves the load for a
	// target kind a results file names, or "" for a kind it does not
	// know; the page shows it beside the target. The report does not know
	// the kinds itself, their registry being the launcher's (the command
	// passes it in); nil shows no description.
	DescribeTargetKind func(kind string) string
}

// WriteFile writes the HTML report of results to path: the page goes to a
// temporary file in the same directory, which is then renamed over path,
// so a failed write never leaves a partial report. Missing parent
// directories are created.
func (o Options) WriteFile(path string, results []*result.Result) error {
	var buf bytes.Buffer
	if err := o.Render(&buf, results); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}

	return atomicfile.WriteBytes(path, buf.Bytes())
}

// Render writes the HTML report of results to w. The results are
// sanitized first (result.Sanitize), so the page never holds a password.
func (o Options) Render(w io.Writer, results []*result.Result) error {
	results, err := result.SanitizeAll(results)
	if err != nil {
		return err
	}

	p, err := o.newPage(results)
	if err != nil {
		return err
	}

	return pageTmpl.Execute(w, p)
}

// page is what the template renders.
type page struct {
	Title     string
	Generated string
	Runs      []*runView

	// Matrix is the comparison of variants or targets with verdicts, from
	// the first comparison run among the results (nil when there is none).
	Matrix *matrixView

	// Files compares the results files when there are several (nil
	// otherwise).
	Files *picturesView

	UplotVersion string
	LibraryJS    template.JS
	LibraryCSS   template.CSS
	PageJS       template.JS
	PageCSS      template.CSS

	// Data is the charts' data, embedded in the page as JSON.
	Data pageData
}

type pageData struct {
	Charts []*chart `json:"charts"`
}

// matrixView is a comparison run: its tables of verdicts and its
// comparison block, from the analysis model.
type matrixView struct {
	Tables []tableView
	Blocks []blockView

	// Pictures are the matrix's charts; Verification its write
	// verification, per cell.
	Pictures     *picturesView
	Verification []verificationRow
}

// verificationRow is one line of a write verification table.
type verificationRow struct {
	Target       string
	Variant      string
	Collection   string
	Trials       string
	Acknowledged string
	Present      string
	Lost         string
	Bad          bool
}

func newVerificationRows(vs []result.Verification) []verificationRow {
	var rows []verificationRow

	for _, v := range vs {
		rows = append(rows, verificationRow{
			Target: v.Target, Variant: v.Variant, Collection: v.Collection,
			Trials: groupDigits(int64(v.Trials)), Acknowledged: groupDigits(v.Acknowledged),
			Present: groupDigits(v.Present), Lost: groupDigits(v.Lost), Bad: v.Lost > 0,
		})
	}

	return rows
}

func (o Options) newPage(results []*result.Result) (*page, error) {
	if len(results) == 0 {
		return nil, errors.New("no results to report")
	}

	if len(o.Sources) != 0 && len(o.Sources) != len(results) {
		return nil, fmt.Errorf("%d sources for %d results", len(o.Sources), len(results))
	}

	p := &page{
		UplotVersion: uplotVersion,
		LibraryJS:    libraryJS(),
		LibraryCSS:   template.CSS(uplotCSS), //nolint:gosec // the vendored library's own style sheet
		PageJS:       template.JS(pageJS),    //nolint:gosec // the page's own script, embedded
		PageCSS:      template.CSS(pageCSS),  //nolint:gosec // the page's own style sheet, embedded
		Data:         pageData{Charts: []*chart{}},
	}

	if !o.Generated.IsZero() {
		p.Generated = formatTime(o.Generated)
	}

	var names, labels []string

	for i, r := range results {
		if r == nil {
			return nil, fmt.Errorf("result %d is nil", i+1)
		}

		label := defaultLabel(r)
		if len(o.Sources) > 0 {
			label = sourceLabel(o.Sources[i])
		}

		if p.Matrix == nil {
			p.Matrix = newMatrixView(r)
			if p.Matrix != nil {
				p.Matrix.Pictures = newMatrixPictures(r)
				p.Matrix.Verification = newVerificationRows(r.Matrix.Verifications())
				p.Data.Charts = append(p.Data.Charts, p.Matrix.Pictures.charts()...)
			}
		}

		labels = append(labels, label)

		v := newRunView(i+1, label, r, o.DescribeTargetKind)
		p.Runs = append(p.Runs, v)
		p.Data.Charts = append(p.Data.Charts, v.charts()...)

		if !slices.Contains(names, r.Workload.Name) {
			names = append(names, r.Workload.Name)
		}
	}

	p.Files = newFilesPictures(results, shortLabels(labels))
	p.Data.Charts = append(p.Data.Charts, p.Files.charts()...)

	p.Title = "mongobench report: " + strings.Join(names, ", ")

	return p, nil
}

// charts returns every chart of a run, in page order.
func (v *runView) charts() []*chart {
	var out []*chart

	for _, p := range v.Phases {
		out = append(out, p.Charts...)

		if p.Blocks != nil {
			out = append(out, p.Blocks.Charts...)
		}

		for _, bg := range p.Background {
			if bg.Chart != nil {
				out = append(out, bg.Chart)
			}
		}
	}

	if v.Server != nil {
		out = append(out, v.Server.Charts...)
	}

	return out
}
