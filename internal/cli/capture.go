package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/base/atomicfile"
	"github.com/mongobench/mongobench/internal/spec/capture"
)

// captureFlags are capture's options.
type captureFlags struct {
	out, name, database    string
	keepValues, includeAdm bool
	closed                 bool
	duration               time.Duration
	loadDocuments          int64
}

// captureName keeps what a workload name and a database name may hold.
var captureName = regexp.MustCompile(`[^A-Za-z0-9_]+`)

func newCaptureCommand(st *State) *cobra.Command {
	var f captureFlags

	c := &cobra.Command{
		Use:   "capture LOG... -o WORKLOAD.yaml",
		Short: "Turn mongod logs into a workload file",
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

The workload is written atomically; an output that is one of the logs, or that
another mongobench is writing, is refused with exit code 2, and so is a file
that is not a JSON log (naming the file and line). Bad lines inside a log are
skipped and counted.`,
		Example: `  mongobench capture /var/log/mongodb/mongod.log -o captured.yaml
  mongobench capture mongod.log.1.gz mongod.log -o captured.yaml --duration 1m
  mongobench validate captured.yaml && mongobench run captured.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCapture(st, args, &f, cmd.Flags().Changed)
		},
	}

	fl := c.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "workload file to write (required; - for standard output, the table then goes to standard error)")
	fl.BoolVar(&f.keepValues, "keep-values", false, "copy the log's values into the workload (constants and choices of the values seen)")
	fl.BoolVar(&f.includeAdm, "include-admin", false, "keep administration and monitoring commands as runCommand operations")
	fl.StringVar(&f.name, "name", "", "the workload's name (default: the output file's name)")
	fl.StringVar(&f.database, "database", "", "the database the workload owns (default: mongobench_capture_NAME)")
	fl.DurationVar(&f.duration, "duration", 30*time.Second, "the run phase's duration")
	fl.BoolVar(&f.closed, "closed-loop", false, "write a closed-loop phase (a worker per connection seen) instead of the log's arrival rate")
	fl.Int64Var(&f.loadDocuments, "load-documents", 1000, "documents loaded into each collection the operations read, update or delete (0: none)")

	return c
}

// runCapture is `mongobench capture`.
func runCapture(st *State, logs []string, f *captureFlags, changed func(string) bool) error {
	switch {
	case strings.TrimSpace(f.out) == "":
		return badInput("--out is required: give the workload file to write, or - for standard output")
	case f.duration <= 0:
		return badInput("--duration must be > 0")
	case f.loadDocuments < 0:
		return badInput("--load-documents must be >= 0")
	case changed("name") && !regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`).MatchString(f.name):
		return badInput("--name %q: use letters, digits, _, . and -, starting with a letter or digit", f.name)
	}

	outs := newOutputs(st, logs...)
	defer outs.release()

	if err := outs.add("--out", f.out); err != nil {
		return err
	}

	c := capture.New(capture.Options{KeepValues: f.keepValues, IncludeAdmin: f.includeAdm})

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

	data, notes, err := c.Workload(capture.Meta{
		Name: name, Database: db, Duration: f.duration, Closed: f.closed,
		LoadDocuments: f.loadDocuments, Sources: sources,
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

	if err != nil {
		return badInput("%v", err)
	}

	return writeCaptured(st, f, data)
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
