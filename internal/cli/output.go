package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/results/runlog"
)

// stdoutPath is the -o value that sends the output to standard output
// instead of a file, as most command-line tools do.
const stdoutPath = "-"

// checkRunFlags rejects flags whose value cannot work, before any time is
// spent starting servers: an empty --uri (which would silently mean the
// embedded server) and empty paths.
func checkRunFlags(changed func(name string) bool, f *runFlags) error {
	if changed("uri") && strings.TrimSpace(f.uri) == "" {
		return badInput("--uri is empty: give a connection string, or leave --uri out to use the embedded server")
	}

	for _, p := range []struct{ name, value string }{{"out", f.out}, {"markdown", f.markdown}} {
		if changed(p.name) && strings.TrimSpace(p.value) == "" {
			return badInput("--%s is empty: give a file name", p.name)
		}
	}

	if f.statsInterval < 0 {
		return badInput("--server-stats-interval must be >= 0 (0 disables the sampling)")
	}

	if f.markdown == stdoutPath {
		return badInput("--markdown - is not supported: give a file name (standard output is for the table, or the results with -o -)")
	}

	if f.report && f.out == stdoutPath {
		return badInput("--report writes the HTML next to the results file, and -o - has none: use -o FILE, or run `mongobench report` on saved results")
	}

	return nil
}

// runOutputs are the files a run writes, reserved before it starts (see
// outputs).
type runOutputs struct {
	*outputs

	// out is the results file, or "-" for standard output.
	out string

	// runLog is a single run's run log; "" for a matrix, whose trials
	// log to the directory trials beside the results file (see
	// bench.TrialsDirFor), under the default name with -o -.
	runLog, trials string
}

// checkRunOutputs runs once the run is planned (matrix says whether it
// compares something) and before it starts: every file the run will write
// is checked and reserved (see outputs), so that a typo in a path, or a
// second run writing the same file, does not cost the whole run. name is
// the results file's name without --out. The caller releases the outputs
// once everything is written.
func checkRunOutputs(st *State, path, name string, matrix bool, f *runFlags) (*runOutputs, error) {
	ro := &runOutputs{outputs: newOutputs(st, path), out: f.out}
	if err := ro.reserveRun(name, matrix, f); err != nil {
		ro.release()
		return nil, err
	}

	return ro, nil
}

// reserveRun reserves the results file (a default name without --out), the
// run log of a single run and the files of --markdown and --report.
func (ro *runOutputs) reserveRun(name string, matrix bool, f *runFlags) error {
	switch {
	case f.out != "" && f.out != stdoutPath:
		if err := ro.add("--out", f.out); err != nil {
			return err
		}

		if !matrix {
			ro.runLog = runlog.PathFor(f.out)
			if err := ro.addRunLog(f.out); err != nil {
				return err
			}
		}
	default:
		// With -o -, a single run's log, or a comparison's trials, still
		// go to the results directory under the default name.
		def, err := ro.addDefaultResults(name, ro.st.Now())
		if err != nil {
			return err
		}

		if f.out == "" {
			ro.out = def
		}

		if !matrix {
			ro.runLog = runlog.PathFor(def)
		} else {
			ro.trials = bench.TrialsDirFor(def)
		}
	}

	if matrix && ro.trials == "" {
		ro.trials = bench.TrialsDirFor(ro.out)
	}

	if ro.trials != "" && exists(filepath.Join(ro.trials, bench.TrialsManifest)) {
		// Its trials would be mixed with this run's, or lost.
		return badInput("%s holds the trials of a comparison that did not end: build its results with `mongobench finish %s`, "+
			"or remove the directory, before running a comparison with this --out", ro.trials, ro.trials)
	}

	if err := ro.add("--markdown", f.markdown); err != nil {
		return err
	}

	if f.report {
		return ro.add("--report", reportPathFor(ro.out))
	}

	return nil
}

// checkWritable makes sure path can be written later: a file can be
// created in its directory (which is created
// if missing, as the final atomic write would). The probe file is removed;
// an existing file at path is left untouched.
func checkWritable(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create its directory: %w", unwrapPathErr(err))
	}

	probe, err := os.CreateTemp(dir, "."+filepath.Base(path)+".probe-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, unwrapPathErr(err))
	}

	name := probe.Name()
	_ = probe.Close()

	return os.Remove(name)
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}

	return err
}

// reportPathFor is where --report writes the HTML: next to the results file.
func reportPathFor(out string) string {
	return strings.TrimSuffix(out, filepath.Ext(out)) + ".html"
}

// tableWriter is where a run prints its summary table: standard output,
// unless the results JSON goes there (-o -), which must stay parseable.
func tableWriter(st *State, f *runFlags) io.Writer {
	if f.out == stdoutPath {
		return st.Stderr
	}

	return st.Stdout
}

// writeResults writes the results file (atomically), or the results JSON to
// standard output with -o -.
func writeResults(st *State, out string, res *result.Result) error {
	if err := writeResultsFile(st, out, res); err != nil {
		return failed("writing results: %v", err)
	}

	return nil
}

// writeResultsFile is writeResults with the error as it came.
func writeResultsFile(st *State, out string, res *result.Result) error {
	if out != stdoutPath {
		return result.WriteFile(out, res)
	}

	if err := result.Encode(st.Stdout, res); err != nil {
		return fmt.Errorf("to standard output: %w", err)
	}

	return nil
}

// resultsWritten says where the results went; the JSON on standard output
// needs no message.
func resultsWritten(st *State, out string) {
	if out != stdoutPath {
		fmt.Fprintf(st.Stderr, "Results written to %s\n", out)
	}
}
