package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/bench"
	"github.com/mongobench/mongobench/internal/result"
	"github.com/mongobench/mongobench/internal/runlog"
	"github.com/mongobench/mongobench/internal/target"
	"github.com/mongobench/mongobench/internal/workload"
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

	if f.markdown == stdoutPath {
		return badInput("--markdown - is not supported: give a file name (standard output is for the table, or the results with -o -)")
	}

	if f.report && f.out == stdoutPath {
		return badInput("--report writes the HTML next to the results file, and -o - has none: use -o FILE, or run `mongobench report` on saved results")
	}

	return nil
}

// checkRunOutputs runs once the workload and targets are known and before
// the run starts: flags that do not apply to this run are errors, and every
// file the run will write is checked to be writable, so that a typo in a
// path does not cost the whole run.
func checkRunOutputs(st *State, spec *workload.Spec, variants int, targets []target.TargetSpec, f *runFlags) error {
	matrix := variants > 1 || len(targets) > 1 || trialRounds(spec, f, variants, len(targets)) > 1
	if f.markdown != "" && !matrix && !hasRunBlocks(spec) {
		return badInput("--markdown applies to runs with variants, several targets or several rounds, growth blocks, or a compared sequence (run.compare_by); this run has none of them (use `mongobench compare --markdown` to compare results files)")
	}

	if err := checkDurationApplies(spec, f); err != nil {
		return err
	}

	out := resultsPath(f.out, spec.Name, st.Now())
	paths := []struct{ flag, path string }{{"--out", out}, {"--markdown", f.markdown}}

	if f.report {
		paths = append(paths, struct{ flag, path string }{"--report", reportPathFor(out)})
	}

	if !matrix {
		paths = append(paths, struct{ flag, path string }{"the run log of --out", runLogPath(out, spec.Name, st.Now())})
	} else if dir := trialsDirPath(out, spec.Name, st.Now()); fileExists(filepath.Join(dir, bench.TrialsManifest)) {
		// Its trials would be mixed with this run's, or lost.
		return badInput("%s holds the trials of a comparison that did not end: build its results with `mongobench finish %s`, "+
			"or remove the directory, before running a comparison with this --out", dir, dir)
	}

	for _, p := range paths {
		if p.path == "" || p.path == stdoutPath {
			continue
		}

		if err := checkWritable(p.path); err != nil {
			return badInput("%s %s: %v", p.flag, p.path, err)
		}
	}

	return nil
}

// checkWritable makes sure path can be written later: it is not a
// directory, and a file can be created in its directory (which is created
// if missing, as the final atomic write would). The probe file is removed;
// an existing file at path is left untouched.
func checkWritable(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return errors.New("is a directory; give a file name")
	}

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
	if out != stdoutPath {
		if err := result.WriteFile(out, res); err != nil {
			return failed("writing results: %v", err)
		}

		return nil
	}

	data, err := result.Marshal(res)
	if err != nil {
		return failed("writing results: %v", err)
	}

	if _, err := st.Stdout.Write(data); err != nil {
		return failed("writing results to standard output: %v", err)
	}

	return nil
}

// runLogPath is where a single run streams its run log: next to the
// results file, or with -o - in the results directory under the default
// results name.
func runLogPath(out, name string, started time.Time) string {
	if out == stdoutPath {
		out = resultsPath("", name, started)
	}

	return runlog.PathFor(out)
}

// trialsDirPath is where a comparison keeps its trials' run logs as they
// complete: beside the results file (results/foo.trials for
// results/foo.json), or with -o - under the default results name.
func trialsDirPath(out, name string, started time.Time) string {
	if out == stdoutPath {
		out = resultsPath("", name, started)
	}

	return bench.TrialsDirFor(out)
}

// fileExists reports whether path names an existing file or directory.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// resultsWritten says where the results went; the JSON on standard output
// needs no message.
func resultsWritten(st *State, out string) {
	if out != stdoutPath {
		fmt.Fprintf(st.Stderr, "Results written to %s\n", out)
	}
}

// checkDurationApplies refuses --duration on a workload none of whose
// phases is timed by a duration (they end after max_operations, growth
// blocks or stages), where it would be silently ignored.
func checkDurationApplies(spec *workload.Spec, f *runFlags) error {
	if f.duration <= 0 {
		return nil
	}

	phases, _ := spec.PhaseList()
	for _, p := range phases {
		if p.Duration > 0 {
			return nil
		}
	}

	return badInput("--duration applies to phases timed by a duration, and no phase of %s is (they end by max_operations, blocks or stages)", spec.Name)
}
