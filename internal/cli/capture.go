package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/base/atomicfile"
	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/capture"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/profiler"
)

// captureFlags are capture's options.
type captureFlags struct {
	out, name, database    string
	keepValues, includeAdm bool
	closed, open           bool
	duration               time.Duration
	loadDocuments          int64
	// shapes is the shape file written beside the workload; fidelity a
	// results file to compare with the shape file.
	shapes, fidelity string
	tolerance        float64
	replay           bool
	speed            float64
	// profile is a URI whose profiler collection is read instead of logs.
	profile, profileDB, profileColl string
	// record is the recording proxy of --upstream (capture from the
	// wire): its recording is captured once it stops.
	record recordFlags

	// fidelityShapes is the shape file of a recording of the --fidelity
	// run, compared with the capture at the proxy (like with like).
	fidelityShapes string
}

// captureName keeps what a workload name and a database name may hold.
var captureName = regexp.MustCompile(`[^A-Za-z0-9_]+`)

func newCaptureCommand(st *State) *cobra.Command {
	var f captureFlags

	c := &cobra.Command{
		Use:   "capture LOG... -o WORKLOAD.yaml | capture --profile URI [--db NAME] -o WORKLOAD.yaml | capture --fidelity RESULTS.json [WORKLOAD.shapes.json]",
		Short: "Turn mongod logs, the profiler or an application's traffic (--upstream) into a workload file",
		Long: `capture reads mongod's JSON logs (logv2, MongoDB 4.4 and later; plain or
gzip-compressed), groups their "Slow query" entries by query shape (the
fields and operators, values removed), prints the shape table (count, share,
and the median and 99th percentile of the server's time from the log) and
writes a workload file with one operation per shape, weighted by its count.

Every value position becomes a generator inferred from the values seen
(constant, choice, integer, float or date range, string length, a key
distribution over the ids requested). No value of the log is copied into
the workload unless --keep-values is given; field, collection and index names
and each operation's structure are. Administration and monitoring commands
(hello, serverStatus, ping, listIndexes, ...) are left out unless
--include-admin; a getMore is part of the find it continues.

A log holds only the operations slower than slowms (100 ms by default): set
slowms 0 (db.setProfilingLevel(0, {slowms: 0})) for a complete capture. See
docs/capture.md.

--profile URI reads the profiler's collection (system.profile) of the
database --db (or the URI's) instead of logs: its documents become the same
operations as the log's entries. The profiler must have been on
(db.setProfilingLevel(2)) while the application ran; a server without it
(FerretDB has none) is refused with exit code 2.

The run phase's load model is inferred from the connections: when no
connection sent an operation before its previous one returned, and the
connections were busy at least half of the time, a closed loop with one
worker per connection, thinking between operations for the median gap the
connections left (think_time); else an open loop at the source's arrival
rate (--closed-loop and --open-loop override; capture prints which and why).
Inserts read before any other operation are the application's load: their
documents are loaded before the run (their number is then the default of
--load-documents for that collection), not operations of the mix.

With --replay the run is instead a replay of the log's timeline, for
mongoreplay's behaviour: each connection's operations in the order they
started and at their times (--speed 2 replays twice as fast), each operation
still the shape's, with generated values.

--upstream URI captures from the wire: a recording proxy listens on
--listen (127.0.0.1:27100 by default), the application connects to it
instead of its server, and every command is recorded (as mongobench record
does) until Ctrl-C or --for; the recording is kept beside the workload
(WORKLOAD.recording.log, or --recording) and captured as a log.

The workload is written atomically; an output that is one of the logs, or that
another mongobench is writing, is refused with exit code 2, and so is a file
that is not a JSON log (naming the file and line). Bad lines inside a log are
skipped and counted.

Beside the workload, capture writes WORKLOAD.shapes.json: the shape table
and the operation each shape became. After a run of the workload,
capture --fidelity RESULTS.json prints captured vs reproduced per shape:
share of operations (points apart) and the captured server time (median,
p99) vs the run's client latency (ratio). The shape file is found beside the
workload the results name, or given as the second argument. When the run
went through a recording proxy too (capture --upstream, as the application
did), --fidelity-shapes RUN.shapes.json adds the comparison taken at the
same point on both sides (the proxy's request-to-reply times): like with
like, where the client latency adds the driver and drops the proxy's hop.`,
		Example: `  mongobench capture /var/log/mongodb/mongod.log -o captured.yaml
  mongobench capture mongod.log.1.gz mongod.log -o captured.yaml --duration 1m
  mongobench capture --profile mongodb://db.example:27017 --db shop -o captured.yaml
  mongobench capture mongod.log -o replay.yaml --replay --speed 2
  mongobench validate captured.yaml && mongobench run captured.yaml -o res.json
  mongobench capture --fidelity res.json
  mongobench capture --fidelity res.json --fidelity-shapes run-recorded.shapes.json
  mongobench capture --upstream mongodb://db.internal:27017 --for 10m -o app.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("fidelity") {
				if len(args) > 1 {
					return badInput("capture --fidelity RESULTS.json takes at most one argument, the shape file; got %d", len(args))
				}

				return nil
			}

			if cmd.Flags().Changed("profile") {
				if len(args) > 0 {
					return badInput("capture --profile URI reads the profiler instead of logs: give no log file with it")
				}

				return nil
			}

			if cmd.Flags().Changed("upstream") {
				if len(args) > 0 {
					return badInput("capture --upstream URI records the application's commands instead of reading logs: give no log file with it")
				}

				return nil
			}

			if len(args) == 0 {
				return badInput("capture needs at least one log file (or --upstream URI, --profile URI, or --fidelity RESULTS.json)")
			}

			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("fidelity") {
				return runFidelity(cmd.Context(), st, args, &f)
			}

			if cmd.Flags().Changed("fidelity-shapes") {
				return badInput("--fidelity-shapes goes with --fidelity RESULTS.json (the run it recorded)")
			}

			if cmd.Flags().Changed("upstream") {
				return captureFromTheWire(cmd.Context(), st, &f, cmd.Flags().Changed)
			}

			return runCapture(cmd.Context(), st, args, &f, cmd.Flags().Changed)
		},
	}

	fl := c.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "workload file to write (required; - for standard output, the table then goes to standard error)")
	fl.BoolVar(&f.keepValues, "keep-values", false, "copy the log's values into the workload (constants and choices of the values seen)")
	fl.BoolVar(&f.includeAdm, "include-admin", false, "keep administration and monitoring commands as runCommand operations")
	fl.StringVar(&f.name, "name", "", "the workload's name (default: the output file's name)")
	fl.StringVar(&f.database, "database", "", "the database the workload owns (default: mongobench_capture_NAME)")
	fl.DurationVar(&f.duration, "duration", 30*time.Second, "the run phase's duration")
	fl.BoolVar(&f.closed, "closed-loop", false, "write a closed-loop phase (a worker per connection seen), whatever the load model inferred")
	fl.BoolVar(&f.open, "open-loop", false, "write an open-loop phase at the source's arrival rate, whatever the load model inferred")
	fl.Int64Var(&f.loadDocuments, "load-documents", 1000, "documents loaded into each collection the operations read, update or delete (0: none); default: the documents the source inserted before any other operation, when it did")
	// The flag chooses the replay load model, and is named after it.
	fl.BoolVar(&f.replay, workload.ModelReplay, false, "write the run as a replay of the log's timeline: each connection's operations in order at their times (values still generated)")
	fl.Float64Var(&f.speed, "speed", 1, "with --replay: how many times faster than recorded to replay (2: twice as fast)")
	fl.StringVar(&f.profile, "profile", "", "read the profiler collection (system.profile) of a server instead of logs: its URI")
	fl.StringVar(&f.profileDB, "db", "", "with --profile: the database whose profile is read (default: the URI's)")
	fl.StringVar(&f.profileColl, "profile-collection", profiler.Collection, "with --profile: the collection read, for a copy of a profile kept in a collection of its own")
	fl.StringVar(&f.shapes, "shapes", "", "shape file to write (default: beside the workload, WORKLOAD.shapes.json; none when -o is -)")
	fl.StringVar(&f.fidelity, "fidelity", "", "compare this results file of a run of the captured workload with the captured shape table (argument: the shape file, if not beside the workload)")
	fl.StringVar(&f.record.upstream, "upstream", "", "capture from the wire: record the commands sent to this server through a proxy (see --listen), then capture the recording")
	fl.StringVar(&f.record.listen, "listen", defaultRecordListen, "with --upstream: where the recording proxy listens (the application connects here)")
	fl.StringVar(&f.record.out, "recording", "", "with --upstream: where the recording is kept (default: beside the workload, WORKLOAD.recording.log)")
	fl.DurationVar(&f.record.lifetime, "for", 0, "with --upstream: stop recording after this long (default: at Ctrl-C)")
	fl.StringVar(&f.fidelityShapes, "fidelity-shapes", "", "with --fidelity: the shape file of a recording of the same run through a recording proxy (capture --upstream): also compare at the proxy, like with like")
	fl.Float64Var(&f.tolerance, "p50-tolerance", 25, "with --fidelity: a shape's run p50 counts as reproduced within this many percent of the captured median")

	return c
}

// runCapture is `mongobench capture`.
func runCapture(ctx context.Context, st *State, logs []string, f *captureFlags, changed func(string) bool) error {
	switch {
	case strings.TrimSpace(f.out) == "":
		return badInput("--out is required: give the workload file to write, or - for standard output")
	case f.duration <= 0:
		return badInput("--duration must be > 0")
	case f.loadDocuments < 0:
		return badInput("--load-documents must be >= 0")
	case (changed("db") || changed("profile-collection")) && f.profile == "":
		return badInput("--db and --profile-collection apply to --profile only")
	case changed("profile") && strings.TrimSpace(f.profile) == "":
		return badInput("--profile needs the server's URI")
	case changed("speed") && !f.replay:
		return badInput("--speed applies to --replay only")
	case f.replay && (f.speed <= 0 || f.speed > 1000):
		return badInput("--speed must be > 0 and at most 1000")
	case f.closed && f.open:
		return badInput("--closed-loop and --open-loop: choose one")
	case f.replay && (f.closed || f.open || changed("duration")):
		return badInput("--replay lasts as long as the log's timeline: --closed-loop, --open-loop and --duration do not apply")
	case changed("name") && !regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`).MatchString(f.name):
		return badInput("--name %q: use letters, digits, _, . and -, starting with a letter or digit", f.name)
	}

	outs := newOutputs(st, logs...)
	defer outs.release()

	if err := outs.add("--out", f.out); err != nil {
		return err
	}

	shapesPath := captureShapesPath(f)
	if shapesPath != "" {
		if err := outs.add("--shapes", shapesPath); err != nil {
			return err
		}
	}

	c := capture.New(capture.Options{KeepValues: f.keepValues, IncludeAdmin: f.includeAdm, Timeline: f.replay})

	if f.profile != "" {
		if err := readProfile(ctx, st, c, f); err != nil {
			return err
		}
	}

	for _, path := range logs {
		st.setStep("reading %s", path)

		if err := c.ReadFile(path); err != nil {
			var fe *capture.FileError
			if errors.As(err, &fe) {
				return badInput("%v", fe)
			}

			return failed("%v", err)
		}
	}

	name := f.name
	if name == "" {
		name = "captured"
		if f.out != stdoutPath {
			name = strings.Trim(captureName.ReplaceAllString(strings.TrimSuffix(filepath.Base(f.out), filepath.Ext(f.out)), "_"), "_")
		}

		if name == "" {
			name = "captured"
		}
	}

	db := f.database
	if db == "" {
		db = "mongobench_capture_" + strings.Trim(captureName.ReplaceAllString(name, "_"), "_")
		db = db[:min(len(db), 63)]
	}

	sources := make([]string, len(logs))
	for i, l := range logs {
		sources[i] = filepath.Base(l)
	}

	if f.profile != "" {
		sources = append(sources, profileSource(f))
	}

	data, shapes, notes, err := c.WorkloadAndShapes(capture.Meta{
		Name: name, Database: db, Duration: f.duration, Closed: f.closed, Open: f.open,
		LoadDocuments: f.loadDocuments, LoadSet: changed("load-documents"), Sources: sources, Replay: f.replay, Speed: f.speed,
	})

	table := st.Stdout
	if f.out == stdoutPath {
		table = st.Stderr
	}

	if werr := c.WriteTable(table); werr != nil {
		return failed("writing the table: %v", werr)
	}

	if werr := c.WriteSummary(st.Stderr); werr != nil {
		return failed("writing the summary: %v", werr)
	}

	for _, n := range notes {
		fmt.Fprintln(st.Stderr, "Note: "+n+".")
	}

	if err == nil && !f.replay {
		if lm, lerr := c.InferLoadModel(capture.Meta{Closed: f.closed, Open: f.open, Replay: f.replay}); lerr == nil {
			fmt.Fprintln(st.Stderr, "Load model: "+lm.Why+".")
		}
	}

	if err != nil {
		return badInput("%v", err)
	}

	if err := writeCaptured(st, f, data); err != nil {
		return err
	}

	if shapesPath == "" {
		return nil
	}

	if err := atomicfile.Write(shapesPath, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")

		return enc.Encode(shapes)
	}); err != nil {
		return failed("writing %s: %v", shapesPath, err)
	}

	fmt.Fprintf(st.Stderr, "Wrote the shape table to %s; after a run: mongobench capture --fidelity RESULTS.json\n", shapesPath)

	return nil
}

// profileSource names the profile read, without the URI (which may hold
// a password): database and collection.
func profileSource(f *captureFlags) string {
	db := f.profileDB
	if db == "" {
		db = profiler.Database(f.profile)
	}

	return db + "." + f.profileColl
}

// readProfile reads the profiler collection of --profile into c.
func readProfile(ctx context.Context, st *State, c *capture.Capture, f *captureFlags) error {
	st.setStep("reading %s", profileSource(f))

	source := profileSource(f)

	_, err := profiler.Read(ctx, f.profile, profiler.Options{DB: f.profileDB, Coll: f.profileColl}, func(doc []byte, n int) error {
		if bad := c.ProfileDoc(doc, n); bad != "" {
			c.ProfileBad(source, n, bad)
		}

		return nil
	})

	var (
		ue      *targets.URIError
		missing *profiler.MissingError
	)

	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue), errors.As(err, &missing), errors.Is(err, profiler.ErrNoDatabase):
		return badInput("--profile: %v", err)
	default:
		return failed("--profile: %s", redact.Error(err, f.profile))
	}
}

// captureShapesPath is where the shape file goes: --shapes, else beside the
// workload (W.shapes.json for W.yaml), else (a workload on standard
// output) nowhere.
func captureShapesPath(f *captureFlags) string {
	switch {
	case f.shapes != "":
		return f.shapes
	case f.out == stdoutPath:
		return ""
	default:
		return shapesBeside(f.out)
	}
}

// shapesBeside is the shape file of a workload file.
func shapesBeside(workloadPath string) string {
	return strings.TrimSuffix(workloadPath, filepath.Ext(workloadPath)) + ".shapes.json"
}

// runFidelity is `mongobench capture --fidelity RESULTS.json [SHAPES]`.
func runFidelity(ctx context.Context, st *State, args []string, f *captureFlags) error {
	if f.tolerance <= 0 {
		return badInput("--p50-tolerance must be > 0 (percent)")
	}

	res, err := result.Read(ctx, f.fidelity)
	if err != nil {
		return badInput("--fidelity %s: %v", f.fidelity, err)
	}

	ph := res.MainPhase()
	if ph == nil || res.Matrix != nil {
		return badInput("--fidelity %s: no run phase (capture --fidelity reads the results of one run, not a comparison)", f.fidelity)
	}

	shapesPath := ""
	if len(args) == 1 {
		shapesPath = args[0]
	} else {
		if res.Workload.File == "" {
			return badInput("--fidelity %s: the results name no workload file, so the shape file cannot be found: give it as the argument", f.fidelity)
		}

		shapesPath = shapesBeside(res.Workload.File)
	}

	data, err := os.ReadFile(shapesPath)
	if err != nil {
		return badInput("shape file: %v (capture writes it beside the workload; give its path as the argument)", err)
	}

	sf, err := capture.ParseShapeFile(shapesPath, data)
	if err != nil {
		return badInput("%v", err)
	}

	// The run's recording is read before anything is printed, so that a
	// bad file is refused without half a report.
	var recorded *capture.ShapeFile

	if f.fidelityShapes != "" {
		data, err := os.ReadFile(f.fidelityShapes)
		if err != nil {
			return badInput("--fidelity-shapes: %v", err)
		}

		if recorded, err = capture.ParseShapeFile(f.fidelityShapes, data); err != nil {
			return badInput("--fidelity-shapes: %v", err)
		}
	}

	if res.Workload.Source != "" {
		sum := sha256.Sum256([]byte(res.Workload.Source))
		if hex.EncodeToString(sum[:]) != sf.WorkloadSHA256 {
			fmt.Fprintf(st.Stderr, "Note: the run's workload is not the file capture wrote (edited since, or another workload); operations are matched by name.\n")
		}
	}

	runOps := make([]capture.RunOperation, 0, len(ph.Operations))

	for _, o := range ph.Operations {
		if o.Unit != "" {
			continue
		}

		ro := capture.RunOperation{Name: o.Name, Issued: o.Count, P50US: o.LatencyUS.P50, P99US: o.LatencyUS.P99}
		for _, n := range o.Errors {
			ro.Issued += n
		}

		if o.ServiceLatencyUS != nil {
			ro.P50US, ro.P99US = o.ServiceLatencyUS.P50, o.ServiceLatencyUS.P99
		}

		runOps = append(runOps, ro)
	}

	fid, err := capture.CompareRun(sf, runOps, f.tolerance)
	if err != nil {
		return badInput("--fidelity %s with %s: %v", f.fidelity, shapesPath, err)
	}

	if recorded == nil {
		if err := fid.Write(st.Stdout); err != nil {
			return failed("writing the report: %v", err)
		}

		return nil
	}

	proxy, err := capture.CompareShapes(sf, recorded, f.tolerance)
	if err != nil {
		return badInput("--fidelity-shapes %s with %s: %v", f.fidelityShapes, shapesPath, err)
	}

	fmt.Fprintln(st.Stdout, "At the client (the run's latency, from results):")

	if err := fid.Write(st.Stdout); err != nil {
		return failed("writing the report: %v", err)
	}

	fmt.Fprintln(st.Stdout, "\nAt the proxy (both recorded through a recording proxy; like with like):")

	if err := proxy.Write(st.Stdout); err != nil {
		return failed("writing the report: %v", err)
	}

	return nil
}

// writeCaptured writes the workload and says what it holds.
func writeCaptured(st *State, f *captureFlags, data []byte) error {
	values := "no value of the logs is copied into it"
	if f.keepValues {
		values = "values of the logs ARE copied into it (--keep-values)"
	}

	if f.out == stdoutPath {
		if _, err := st.Stdout.Write(data); err != nil {
			return failed("writing the workload: %v", err)
		}

		fmt.Fprintf(st.Stderr, "Wrote the workload to standard output; %s.\n", values)

		return nil
	}

	if err := atomicfile.Write(f.out, func(w io.Writer) error {
		_, err := w.Write(data)

		return err
	}); err != nil {
		return failed("writing %s: %v", f.out, err)
	}

	fmt.Fprintf(st.Stderr, "Wrote %s; %s. Check it with: mongobench validate %s\n", f.out, values, f.out)

	return nil
}
