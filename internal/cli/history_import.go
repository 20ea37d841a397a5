package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/analysis/history"
	"github.com/mongobench/mongobench/internal/base/inputfile"
	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/lab/historystore"
	"github.com/mongobench/mongobench/internal/results/result"
)

// historySource is where `history` reads its runs: the store --store names,
// or the results files args name (results/ by default). done closes it.
func historySource(ctx context.Context, args []string, store, storeDB string) (src history.Source, done func(), err error) {
	if store == "" {
		if storeDB != "" {
			return nil, nil, badInput("--store-db needs --store")
		}

		if len(args) == 0 {
			args = []string{"results"}
		}

		return history.Files{Paths: args}, func() {}, nil
	}

	if len(args) > 0 {
		return nil, nil, badInput("--store reads the runs from the store: name no PATH (history import --store URI PATH... adds files to it)")
	}

	s, err := openStore(ctx, store, storeDB, false)
	if err != nil {
		return nil, nil, err
	}

	return s, func() { _ = s.Close(context.Background()) }, nil
}

// openStore opens the history store, an unusable URI or a database that is
// not a store being bad input. Its messages hold no password.
func openStore(ctx context.Context, uri, db string, create bool) (*historystore.Store, error) {
	s, err := historystore.Open(ctx, uri, db, create)

	switch {
	case err == nil:
		return s, nil
	case ctx.Err() != nil:
		return nil, failed("interrupted while opening the history store")
	case historystore.IsInputError(err):
		return nil, badInput("--store: %s", redact.Error(err, uri))
	default:
		return nil, failed("--store: %s", redact.Error(err, uri))
	}
}

// historyImportFlags are the options of `mongobench history import`.
type historyImportFlags struct {
	store   string
	storeDB string
}

func newHistoryImportCommand(st *State) *cobra.Command {
	var f historyImportFlags

	c := &cobra.Command{
		Use:   "import --store URI PATH...",
		Short: "Add results files to a history store shared in a MongoDB database",
		Long: `import adds the runs of results files (files, or directories of them and
their subdirectories) to the history store in the MongoDB database --store names
(the database from the URI's path, --store-db, or mongobench_history), so that
'mongobench history --store URI' shows one history to every machine that
imports into it. Each run is one document holding its results file as run
wrote it; its id is the SHA-256 of the file's content, so importing a file
again adds nothing. Runs that cannot be part of a history (matrix files, runs
that did not complete) are skipped with the reason.

The store is created only in an empty database, and mongobench writes only to a
database that is empty or already a store: it refuses any other, and never
drops, updates or overwrites anything.

Exit codes: 0 imported; 2 bad input (a flag, a file named that is not a results
file, a database that is not a store); 1 the server failed or interrupted.`,
		Example: `  mongobench history import --store mongodb://ci-db.example.net/bench_history results/
  mongobench history --store mongodb://ci-db.example.net/bench_history --fail-on-regression 'p99 +10%'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return runHistoryImport(st, args, &f)
		},
	}

	fl := c.Flags()
	fl.StringVar(&f.store, "store", "", "MongoDB connection string of the history store (required)")
	fl.StringVar(&f.storeDB, "store-db", "", "the store's database, when the URI names none (default "+historystore.DefaultDatabase+")")

	return c
}

func runHistoryImport(st *State, args []string, f *historyImportFlags) error {
	ctx, stop := interruptContext(st)
	defer stop()

	if f.store == "" {
		return badInput("history import: --store URI is required")
	}

	// The files are read first, so that bad input is said before the
	// store is touched; the reader keeps each file's bytes, which are what
	// the store holds.
	content := map[string][]byte{}
	read := func(ctx context.Context, path string) (*result.Result, error) {
		data, err := inputfile.Read(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("read results file: %w", err)
		}

		content[path] = data

		return result.Parse(path, data)
	}

	runs, skipped, err := history.Load(ctx, history.Files{Paths: args, Read: read})

	switch {
	case ctx.Err() != nil:
		return failed("interrupted while reading results files")
	case err != nil:
		return badInput("%v", err)
	}

	s, err := openStore(ctx, f.store, f.storeDB, true)
	if err != nil {
		return err
	}

	defer func() { _ = s.Close(context.Background()) }()

	// The same file named twice is one run.
	slices.SortStableFunc(runs, func(a, b history.Run) int { return strings.Compare(a.File, b.File) })
	runs = slices.CompactFunc(runs, func(a, b history.Run) bool { return a.File == b.File })

	added, present := 0, 0

	for _, r := range runs {
		ok, err := s.Add(ctx, r.File, content[r.File])

		switch {
		case ctx.Err() != nil:
			return failed("interrupted after importing %d runs (already present %d)", added, present)
		case err != nil:
			return failed("imported %d, already present %d, then: %s", added, present, redact.Error(err, f.store))
		case ok:
			added++
		default:
			present++
		}
	}

	for _, sk := range skipped {
		fmt.Fprintf(st.Stderr, "Skipped %s: %s\n", sk.File, sk.Reason)
	}

	fmt.Fprintf(st.Stdout, "imported %d, already present %d (%s)\n", added, present, s.Name())

	return nil
}

// storeTimeout bounds recording a finished run in the history store.
const storeTimeout = 2 * time.Minute

// checkHistoryStore refuses a run --history-store whose database cannot be
// a store before the run starts, not after it.
func checkHistoryStore(uri string) error {
	if uri == "" {
		return nil
	}

	if _, err := historystore.Database(uri, ""); err != nil {
		return badInput("--history-store: %s", redact.Error(err, uri))
	}

	return nil
}

// recordInHistory adds the finished run to the store uri names (run
// --history-store): the results file as written (out; "-" for standard
// output, whose content is result.Marshal's). The file is written already,
// so a store that fails is said and fails the command, and the run can be
// imported later.
func recordInHistory(st *State, uri, out string, res *result.Result) error {
	if uri == "" {
		return nil
	}

	// The run's own interrupt handling is over; the store's operations
	// are bounded by the connection's server selection timeout, and this.
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()

	var (
		data []byte
		err  error
	)

	if out == "-" {
		data, err = result.Marshal(res)
	} else {
		data, err = inputfile.Read(ctx, out)
	}

	if err != nil {
		return failed("recording the run in the history store: %v", err)
	}

	s, err := openStore(ctx, uri, "", true)
	if err != nil {
		return err
	}

	defer func() { _ = s.Close(context.Background()) }()

	added, err := s.Add(ctx, out, data)
	if err != nil {
		return failed("recording the run in the history store: %s (the results file is written: history import adds it later)", redact.Error(err, uri))
	}

	if added {
		fmt.Fprintf(st.Stderr, "Run recorded in the history store (%s)\n", s.Name())
	}

	return nil
}
