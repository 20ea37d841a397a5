package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/base/atomicfile"
	"github.com/mongobench/mongobench/internal/base/units"
	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/results/runlog"
)

// outputs is the output discipline every command that writes files follows
// (run, report, merge, finish, compare --markdown), so that none of them
// loses data it was given or wrote before. Each file a command will write is
// checked and reserved before the command does any work:
//
//   - "-" is standard output, and is never a file;
//   - a path that exists and is not a regular file (a device such as
//     /dev/full, a named pipe, a directory, a symbolic link) is refused:
//     the atomic write's rename would replace it;
//   - a path that is one of the command's inputs is refused, since the
//     output would destroy what it is made from;
//   - the file's directory must be writable;
//   - the path is reserved (atomicfile.Reserve) until the command ends, so
//     that a second mongobench writing the same file is refused at once
//     instead of both interleaving their run logs and losing both runs.
//
// An existing regular file named explicitly (-o FILE) is replaced,
// atomically, once the command has its content: -o says where the output
// goes. Default names are never reused (see addDefaultResults).
//
// Every refusal is exit code 2 with one line naming the flag and the path.
// Reserving a path also sweeps its directory of the temporary files that
// interrupted writes left behind (atomicfile.Sweep).
type outputs struct {
	st     *State
	inputs []string

	// taken are the outputs reserved so far, by flag.
	taken []output
	held  []*atomicfile.Reservation
	swept map[string]bool
}

// output is one file a command writes, and the flag that named it.
type output struct {
	flag, path string
}

// newOutputs starts the outputs of a command whose input files are inputs.
func newOutputs(st *State, inputs ...string) *outputs {
	return &outputs{st: st, inputs: inputs, swept: map[string]bool{}}
}

// release gives up every reservation; the command's files are written.
func (o *outputs) release() {
	for _, r := range o.held {
		r.Release()
	}

	o.held = nil
}

// add checks and reserves the file flag names; "" and "-" (standard
// output) are not files and pass.
func (o *outputs) add(flag, path string) error {
	if path == "" || path == stdoutPath {
		return nil
	}

	if err := o.check(flag, path); err != nil {
		return err
	}

	return o.reserve(flag, path)
}

// check refuses a path that cannot or must not be written.
func (o *outputs) check(flag, path string) error {
	// Other errors (a file where a directory should be) are for
	// checkWritable to say.
	var nr *atomicfile.NotRegularError
	if err := atomicfile.Check(path); errors.As(err, &nr) {
		return badInput("%s %v", flag, nr)
	}

	for _, in := range o.inputs {
		if atomicfile.SameFile(path, in) {
			return badInput("%s %s is also an input (%s): writing it would destroy it; give another file name", flag, path, in)
		}
	}

	for _, t := range o.taken {
		if samePath(t.path, path) {
			return badInput("%s %s is also %s: give each output a file of its own", flag, path, t.flag)
		}
	}

	if err := checkWritable(path); err != nil {
		return badInput("%s %s: %v", flag, path, err)
	}

	return nil
}

// reserve sweeps the path's directory and reserves the path.
func (o *outputs) reserve(flag, path string) error {
	o.sweep(filepath.Dir(path))

	r, err := atomicfile.Reserve(path)

	var busy *atomicfile.BusyError
	if errors.As(err, &busy) {
		return badInput("%s %v", flag, busy)
	}

	if err != nil {
		return badInput("%s %s: %v", flag, path, unwrapPathErr(err))
	}

	o.held = append(o.held, r)
	o.taken = append(o.taken, output{flag, path})

	return nil
}

// sweep removes, once per directory, the temporary files that interrupted
// writes left there, and says so.
func (o *outputs) sweep(dir string) {
	if o.swept[dir] {
		return
	}

	o.swept[dir] = true

	var (
		removed []string
		size    int64
	)

	for _, l := range atomicfile.Sweep(dir, o.st.Now()) {
		if l.Err != nil {
			fmt.Fprintf(o.st.Stderr, "Warning: could not remove %s, left by an interrupted write: %v\n", l.Path, unwrapPathErr(l.Err))
			continue
		}

		removed = append(removed, l.Path)
		size += l.Size
	}

	if len(removed) == 0 {
		return
	}

	what := "1 temporary file"
	if len(removed) > 1 {
		what = fmt.Sprintf("%d temporary files", len(removed))
	}

	fmt.Fprintf(o.st.Stderr, "Removed %s left by interrupted writes (%s): %s\n", what, units.Bytes(size), strings.Join(removed, ", "))
}

// maxNameTries bounds the numeric suffixes addDefaultResults tries.
const maxNameTries = 1000

// addDefaultResults picks and reserves the results file of a run given no
// --out: results/NAME-<UTC time to the millisecond>.json, or with -2, -3, ...
// before .json when that name is taken: its results file or run log exists,
// or another run holds it. Two runs started together thus never share a
// file, and a default name never replaces an earlier run's. Its run log is
// reserved with it.
func (o *outputs) addDefaultResults(name string, started time.Time) (string, error) {
	base := filepath.Join("results", name+"-"+started.UTC().Format("20060102T150405.000Z"))

	for i := 1; i <= maxNameTries; i++ {
		path := base + ".json"
		if i > 1 {
			path = fmt.Sprintf("%s-%d.json", base, i)
		}

		if i == 1 {
			if err := o.check("the default results file", path); err != nil {
				return "", err
			}
		}

		if exists(path) || exists(runlog.PathFor(path)) {
			continue
		}

		n := len(o.held)

		err := o.reserve("the default results file", path)
		if err == nil {
			err = o.reserve("the run log", runlog.PathFor(path))
		}

		if err == nil && !exists(path) && !exists(runlog.PathFor(path)) {
			return path, nil
		}

		// Taken meanwhile: give up what this name reserved.
		for _, r := range o.held[n:] {
			r.Release()
		}

		o.held, o.taken = o.held[:n], o.taken[:n]
	}

	return "", badInput("no free results file name in results/ for %s after %d tries; give one with -o", name, maxNameTries)
}

// addRunLog reserves a single run's run log next to the results file out,
// refusing one an earlier run left with measurements but without results
// (killed before it wrote them): replacing it would lose that run, which
// mongobench finish can still rebuild. A log that measured nothing (a run
// that failed while setting up) is replaced.
func (o *outputs) addRunLog(out string) error {
	log := runlog.PathFor(out)

	if err := o.add("the run log of --out", log); err != nil {
		return err
	}

	if exists(log) && !exists(out) && loggedMeasurements(log) {
		return badInput("the run log %s of an earlier run has no results file %s: rebuild them with `mongobench finish %s`, or remove it",
			log, out, log)
	}

	return nil
}

// loggedMeasurements reports whether the run log at path holds an interval
// of a measured phase (not a load step), reading up to the first one. A log
// that cannot be read counts as holding some: it is kept.
func loggedMeasurements(path string) bool {
	f, err := os.Open(path) //nolint:gosec // the run log of the user's --out
	if err != nil {
		return true
	}
	defer f.Close()

	r := bufio.NewReader(f)
	load := map[int]bool{}

	for {
		line, err := r.ReadBytes('\n')

		var rec struct {
			Type  string `json:"type"`
			Phase int    `json:"phase"`
			Model string `json:"model"`
		}

		if json.Unmarshal(line, &rec) == nil {
			switch rec.Type {
			case "phase":
				load[rec.Phase] = rec.Model == "load"
			case "interval":
				if !load[rec.Phase] {
					return true
				}
			}
		}

		if err != nil {
			return false
		}
	}
}

// exists reports whether something is at path (a link counts, even a
// dangling one).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// samePath reports whether a and b are the same path, or name the same
// existing file.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}

	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)

	return (err1 == nil && err2 == nil && aa == bb) || atomicfile.SameFile(a, b)
}

// keptRunLog is the message of a run whose results file could not be
// written: the run log (or a comparison's trials directory, log) holds the
// whole run, and finish rebuilds the results from it once the cause (a full
// disk, a file size limit) is gone.
func keptRunLog(out, log string, err error) error {
	if log == "" {
		return failed("writing results: %v", err)
	}

	what := "the run log " + log + " holds"
	dir := strings.HasSuffix(filepath.Clean(log), bench.TrialsSuffix)

	if dir {
		what = "the trials' run logs in " + log + " hold"
	}

	finish := "mongobench finish " + log
	if out != stdoutPath && out != finishPathFor(log, dir) {
		finish += " -o " + out
	}

	return failed("writing results: %v\nKept: %s the whole run; `%s` writes the results file from it", err, what, finish)
}
