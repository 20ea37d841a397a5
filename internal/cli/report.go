package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/report"
	"github.com/mongobench/mongobench/internal/results/result"
)

// defaultReportFile is where `mongobench report` writes without -o.
const defaultReportFile = "report.html"

// reportFlags are the options of `mongobench report`.
type reportFlags struct {
	out    string
	csvDir string
}

func newReportCommand(st *State) *cobra.Command {
	var f reportFlags

	c := &cobra.Command{
		Use:   "report RESULTS.json...",
		Short: "Write an HTML report (and CSV files) from results files",
		Long: `report reads results files written by run and writes one self-contained HTML
page: run metadata, the comparison block that ends the run (as run printed
it), per-operation latency tables, latency percentiles and throughput over
time, growth blocks by collection size, background job rates, query plans
and findings grouped by collection and cause, server counters and errors,
one section per file. Several files are also compared as compare does (its
block and tables, from the same analysis).
The page works offline: its chart library is embedded and it loads nothing
from the network.

With --csv DIR it also writes summary.csv (per file, phase and operation),
intervals.csv (the time series) and, when there are growth blocks, blocks.csv.
--csv without -o writes only the CSV files.

Results files of variants or several targets (matrix files) are shown with
their matrix of verdicts; in the CSV files each of their trials is a run, named
by the target, variant and round columns.

It exits with code 2 if a results file cannot be read or holds no
measurements (no phases, or a matrix without trials).`,
		Example: `  mongobench report results/quickstart-20250304T100000Z.json
  mongobench report results/*.json -o compare.html
  mongobench report results/run.json --csv export/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := f.out
			if out == "" && !cmd.Flags().Changed("csv") {
				out = defaultReportFile
			}

			if cmd.Flags().Changed("out") && f.out == "" {
				return badInput("--out is empty: give a file name, or - for standard output")
			}

			if cmd.Flags().Changed("csv") && f.csvDir == "" {
				return badInput("--csv needs a directory")
			}

			return writeReport(st, args, out, f.csvDir)
		},
	}

	fl := c.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "HTML report file, - for standard output (default "+defaultReportFile+", none with only --csv)")
	fl.StringVar(&f.csvDir, "csv", "", "also write summary.csv, intervals.csv and blocks.csv to this directory")

	return c
}

// writeReport is `mongobench report`: out and csvDir may each be empty.
func writeReport(st *State, paths []string, out, csvDir string) error {
	ctx, stop := interruptContext(st)
	defer stop()

	o := newOutputs(st, paths...)
	defer o.release()

	if err := o.add("--out", out); err != nil {
		return err
	}

	if csvDir != "" {
		for _, name := range []string{report.SummaryCSV, report.IntervalsCSV, report.BlocksCSV} {
			if err := o.add("--csv", filepath.Join(csvDir, name)); err != nil {
				return err
			}
		}
	}

	// A file that parses but holds no measurements ("phases": null) is
	// refused rather than shown as an empty page; a hand-edited or
	// damaged file is still shown, but not without saying so.
	files, err := readResultsFiles(ctx, st, paths, result.ReadOptions{})
	if err != nil {
		return err
	}

	if err := files.Err(); err != nil {
		return badInput("%v; no report written", err)
	}

	results := files.Results()
	opts := reportOptions(st, files.Paths())

	if out == stdoutPath {
		if err := renderToStdout(st, opts, results); err != nil {
			return err
		}
	} else if out != "" {
		if err := opts.WriteFile(out, results); err != nil {
			return failed("%v", err)
		}

		fmt.Fprintf(st.Stderr, "Report written to %s\n", out)
	}

	if csvDir != "" {
		written, err := opts.WriteCSV(csvDir, results)
		if err != nil {
			return failed("%v", err)
		}

		names := make([]string, len(written))
		for i, p := range written {
			names[i] = filepath.Base(p)
		}

		fmt.Fprintf(st.Stderr, "CSV written to %s (%s)\n", csvDir, strings.Join(names, ", "))
	}

	return nil
}

// renderToStdout writes the HTML report to standard output (-o -). The page
// is rendered completely first, so that a failure prints no half page.
func renderToStdout(st *State, opts report.Options, results []*result.Result) error {
	var buf bytes.Buffer
	if err := opts.Render(&buf, results); err != nil {
		return failed("%v", err)
	}

	if _, err := st.Stdout.Write(buf.Bytes()); err != nil {
		return failed("writing the report to standard output: %v", err)
	}

	return nil
}
