package cli

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/analysis/finish"
	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/lab/bench"
	benchplan "github.com/mongobench/mongobench/internal/lab/plan"
	"github.com/mongobench/mongobench/internal/report"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/verdict"
	"github.com/mongobench/mongobench/internal/targets"
)

// runFlags are the options of `mongobench run`.
type runFlags struct {
	uri           string
	out           string
	duration      time.Duration
	concurrency   int
	seed          int64
	quiet         bool
	allowExisting bool
	keepDB        bool
	report        bool
	noExplain     bool
	statsInterval time.Duration
	targets       []string
	markdown      string
	mongodBinary  string
	rounds        int
	minEffect     string   // --min-effect, overriding run.min_effect
	set           []string // --set name=value, workload parameters
	maxOps        int64    // --max-operations
	client        string   // --client, overriding run.client
	clientProfile string   // --client-profile PREFIX
	label         string   // --label, stored in the results file for history
	historyStore  string   // --history-store, where a finished run is also recorded
	shard         shardFlags

	// serverSelection is --server-selection-timeout; zero leaves the
	// workload's run.server_selection_timeout (see package plan).
	serverSelection time.Duration
}

func newRunCommand(st *State) *cobra.Command {
	var f runFlags

	c := &cobra.Command{
		Use:   "run WORKLOAD.yaml",
		Short: "Run a workload and write a results file",
		Long: `run sets up the workload's database (only a database mongobench created, or one
you allow with --allow-existing-db), loads its documents, measures its operations
and writes a results file (JSON) that report and compare commands read. As it
measures, it appends every interval to a run log next to the results file
(results/NAME.runlog.jsonl, synced every few seconds), from which the results
file is built at the end; if the run is killed, mongobench finish builds the
results file from the run log (status incomplete). The run log's path is
printed when the run starts. A comparison (variants, targets or rounds) keeps
its trials' run logs beside the results file (results/NAME.trials) until the
results file is written; mongobench finish of that directory rebuilds the
completed trials of a comparison that was killed.

Every file the run writes is checked and reserved before it starts: a
device, named pipe, directory or symbolic link, the workload file itself,
or a file another mongobench is writing is refused (exit code 2); an
existing file named with --out is replaced once the run is done; default
names are never reused (a -2, -3, ... suffix when taken). The table is
printed before the results file is written, and a failed write names the
run log (or trials directory) kept and the finish command that rebuilds the
results from it.

Without --uri it starts an embedded FerretDB (SQLite backend) in a temporary
directory, removed at exit. With --uri it connects to any MongoDB-compatible
deployment; authentication and TLS options go in the URI. The environment
variable MONGOBENCH_URI stands for --uri when the flag is not given (the flag
wins). ${NAME} in --uri, --target uri:... and the workload's targets[].uri is
replaced by the environment variable NAME at run time, so passwords can stay
out of files and command lines. Passwords are never printed or saved.

mongobench drops only what it created: the databases it creates carry an owner
record signed with a key made on first use in the user's configuration
directory (mongobench/owner.key; MONGOBENCH_OWNER_KEY_FILE names another file,
to share one key between machines). A database whose record does not verify,
or that holds a collection mongobench did not create, is refused (exit code 2)
unless --allow-existing-db is given.

Ctrl-C (SIGINT), SIGTERM or SIGHUP stops the run gracefully: it writes the
results so far (status interrupted), removes its temporary directories, stops
the servers it started and exits with code 1, saying on standard error what it
waits for. Signals within a second of the first count as one; a later one, or a
stop longer than 10 s, exits at once (code 130), still cleaning up, and names
the run log and the mongobench finish command if the results were not written
yet (the results are kept up to date as the run goes, so writing them does
not grow with the run's length). At start, a
run removes the temporary directories of mongobench runs that were killed.

A workload's thresholds (e.g. get: ["p99 < 20ms"], all: ["error_rate < 0.1%"])
are checked after the run and printed as pass/fail lines with the value
measured; when one fails, a run that otherwise succeeded exits with code 99.
A comparison run (variants, targets or rounds) ends with the comparison block:
the variants and targets ranked on the first operation's p50, each with its
verdict and 95% confidence interval.

--client STACK (or run.client, or a variant's) measures the phases through an
external client stack such as node-mongoose or python-pymongo instead of
mongobench's Go engine, with the same generated data: see mongobench clients.

--shard I/N runs shard I (from 0) of N processes, on one machine or many, that
together apply the workload's load: workers, rates and max_operations are split
between them, their generated keys kept apart, and only shard 0 sets up the
database. --start-at makes them start measuring at one instant; 'mongobench
merge' adds their results files up exactly. See docs/distributed.md.`,
		Example: `  mongobench run workloads/quickstart.yaml
  mongobench run workloads/quickstart.yaml --uri mongodb://localhost:27017 --concurrency 8 --duration 1m`,
		Args: oneWorkload,
		RunE: func(cmd *cobra.Command, args []string) error {
			var seed *int64
			if cmd.Flags().Changed("seed") {
				seed = &f.seed
			}

			if cmd.Flags().Changed("concurrency") && (f.concurrency < 1 || f.concurrency > 10000) {
				return badInput("--concurrency must be between 1 and 10000")
			}

			if cmd.Flags().Changed("duration") && f.duration <= 0 {
				return badInput("--duration must be > 0")
			}

			if err := checkRunFlags(cmd.Flags().Changed, &f); err != nil {
				return err
			}

			if err := checkLabel(f.label); err != nil {
				return err
			}

			if err := checkHistoryStore(f.historyStore); err != nil {
				return err
			}

			if cmd.Flags().Changed("max-operations") && f.maxOps < 1 {
				return badInput("--max-operations must be > 0")
			}

			if cmd.Flags().Changed("rounds") && (f.rounds < 1 || f.rounds > 1000) {
				return badInput("--rounds must be between 1 and 1000")
			}

			if _, err := verdict.ParseMinEffect(f.minEffect); cmd.Flags().Changed("min-effect") && err != nil {
				return badInput("bad --min-effect: %v", err)
			}

			if cmd.Flags().Changed("server-selection-timeout") && f.serverSelection <= 0 {
				return badInput("--server-selection-timeout must be > 0")
			}

			if err := checkClientFlags(cmd.Flags().Changed, &f); err != nil {
				return err
			}

			if f.mongodBinary == "" {
				f.mongodBinary = st.Getenv(workload.MongodBinaryEnv)
			}

			sh, err := shardPlan(st, cmd.Flags().Changed, &f.shard)
			if err != nil {
				return err
			}

			return runWorkload(st, args[0], seed, &f, sh)
		},
	}

	fl := c.Flags()
	fl.StringVar(&f.uri, "uri", "", "MongoDB connection string (default: $MONGOBENCH_URI, else start an embedded FerretDB)")
	fl.StringVarP(&f.out, "out", "o", "", "results file, - for standard output (the table then goes to standard error) (default results/<workload>-<timestamp>.json)")
	fl.DurationVar(&f.duration, "duration", 0, "measured duration, overriding the workload's run.duration; for growth blocks, their until.duration (no block starts after it)")
	fl.IntVarP(&f.concurrency, "concurrency", "c", 0, "number of workers, overriding the workload's run.concurrency")
	fl.Int64Var(&f.seed, "seed", 0, "seed for generated data, overriding the workload's seed")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output; only the final table and messages (a load phase still says every 10 s how far it got)")
	fl.BoolVar(&f.allowExisting, "allow-existing-db", false,
		"use the workload's database even though mongobench did not create it: only the workload's collections are "+
			"created there and removed after the run; the database and its other collections are never touched")
	fl.BoolVar(&f.keepDB, "keep-db", false, "keep the workload's database after the run instead of dropping it")
	fl.BoolVar(&f.report, "report", false, "also write an HTML report next to the results file")
	fl.BoolVar(&f.noExplain, "no-explain", false, "do not explain the query operations after the run")
	fl.StringArrayVar(&f.targets, "target", nil,
		"a target to run on, repeatable: KIND[:setting=value,...] with KIND "+targets.KindList()+", as in ferretdb-postgres:fsync=off or uri:mongodb://host/")
	fl.StringVar(&f.mongodBinary, "mongod-binary", "",
		"the mongod program of mongod targets (default $"+workload.MongodBinaryEnv+", else mongod on PATH); workload files cannot name one")
	fl.StringVar(&f.markdown, "markdown", "", "with variants, several targets or rounds, also write the matrix as Markdown to this file; with growth blocks or a compared sequence, the comparison block (an error otherwise)")
	fl.DurationVar(&f.serverSelection, "server-selection-timeout", 0,
		"how long an operation waits for a reachable server; a run whose server is unreachable this long is aborted "+
			"(default: the workload's run.server_selection_timeout, 5s; a serverSelectionTimeoutMS in --uri wins)")
	fl.IntVar(&f.rounds, "rounds", 0,
		"interleaved trial rounds of a comparison, overriding run.rounds and trials.rounds (default 6, the least for a 95% CI)")
	fl.StringVar(&f.minEffect, "min-effect", "",
		"smallest change a verdict calls a difference, overriding run.min_effect (default 5%; '0%' for none)")
	fl.StringArrayVar(&f.set, "set", nil, "set a parameter declared in the workload's params block, repeatable: name=value (checked against its type; a secret one is masked in all output)")
	fl.Int64Var(&f.maxOps, "max-operations", 0, "stop each phase after this many operations, overriding run.max_operations")
	fl.StringVar(&f.historyStore, "history-store", "", "also record the finished run in the history store in this MongoDB database (see history import)")
	fl.StringVar(&f.label, "label", "", "name what this run measured (e.g. v0.5.0), stored in the results file with the CI commit id and shown by history")
	addClientFlags(fl, &f)
	fl.DurationVar(&f.statsInterval, "server-stats-interval", 5*time.Second,
		"how often to sample server counters on a connection of its own (0 disables)")
	addShardFlags(fl, &f.shard)

	return c
}

// runWorkload is `mongobench run`.
func runWorkload(st *State, path string, seed *int64, f *runFlags, shard *bench.Shard) error {
	ctx, stop := interruptContext(st)
	defer stop()

	if err := checkInputExists(path); err != nil {
		return err
	}

	w, err := loadWorkload(ctx, st, path, seed, f.set...)
	if err != nil {
		return err
	}

	st.maskValues(w.Spec.SecretValues())

	if err := resolveURIFlag(st, f); err != nil {
		return err
	}

	plan, err := benchplan.New(ctx, &benchplan.Request{
		Path:            path,
		Workload:        w,
		Concurrency:     f.concurrency,
		Duration:        f.duration,
		MaxOperations:   f.maxOps,
		Client:          f.client,
		MinEffect:       f.minEffect,
		Rounds:          f.rounds,
		Targets:         f.targets,
		URI:             f.uri,
		MongodBinary:    f.mongodBinary,
		ServerSelection: f.serverSelection,
		ClientProfile:   f.clientProfile != "",
		Markdown:        f.markdown != "",
		Shard:           shard,
		Getenv:          st.Getenv,
		Installer:       func() (*client.Installer, error) { return newInstaller(st) },
	})
	if err != nil {
		return planError(st, err)
	}

	variants := plan.Variants

	if f.clientProfile != "" {
		if plan.Options.ClientProfile, err = profilePrefix(st, variants[0].Spec.Name, f); err != nil {
			return err
		}
	}

	if plan.Matrix() && f.historyStore != "" {
		return badInput("--history-store records one run; this run compares variants, targets or rounds, which a history does not take")
	}

	ro, err := checkRunOutputs(st, path, shardResultsName(w.Spec.Name, shard), plan.Matrix(), f)
	if err != nil {
		return err
	}
	defer ro.release()

	sweepLeftovers(st)

	ownerKey, err := loadOwnerKey(st)
	if err != nil {
		return err
	}

	if path := st.Getenv("MONGOBENCH_CPUPROFILE"); path != "" {
		stopProfile, err := startCPUProfile(path)
		if err != nil {
			return failed("%v", err)
		}
		defer stopProfile()
	}

	plan.Options.OwnerKey = ownerKey
	plan.Options.AllowExisting = f.allowExisting
	plan.Options.KeepDB = f.keepDB
	plan.Options.NoExplain = f.noExplain
	plan.Options.StatsInterval = f.statsInterval
	plan.Options.Version = Version()
	plan.Options.Crash = targets.CrashOptions{Serve: st.Serve}

	// Named and reserved before the run, so that the run log streams
	// next to where the results will go, and is said where at once: a
	// killed run leaves it for mongobench finish.
	out := ro.out
	if !plan.Matrix() {
		plan.Options.RunLog = ro.runLog
		fmt.Fprintf(st.Stderr, "Run log: %s\n", ro.runLog)
	}

	if plan.Matrix() {
		warnMatrixThresholds(st, w.Spec)

		plan.Options.TrialLogs = ro.trials
	}

	st.setUnsaved(plan.Options.RunLog + plan.Options.TrialLogs) // one of them is set

	outcome, err := bench.Run(ctx, plan, benchHooks(st, f))
	if err != nil {
		return benchError(err)
	}
	defer outcome.Close()

	// What follows masks, marshals and indents the results as whole JSON
	// documents, a few copies of the file at once and garbage right after:
	// a lower collector target keeps the process's peak near its steady
	// state instead of letting the heap grow by as much again as is live.
	defer debug.SetGCPercent(debug.SetGCPercent(25))

	if plan.Matrix() {
		return writeMatrixRun(st, f, outcome, out)
	}

	// Finished as finish and merge finish theirs: findings, thresholds,
	// the error budget and the exit status in one place.
	res := outcome.Result
	res.Label, res.Commit = f.label, ciCommit(st.Getenv)

	fin, err := finish.Finish(res, finish.Options{Rules: variants[0].Spec.Thresholds.Rules, FirstError: outcome.FirstError})
	if err != nil {
		return failed("finishing the results: %v", err)
	}

	if res, err = result.Sanitize(res); err != nil { // what is printed is what is saved
		return failed("writing results: %v", err)
	}

	// The sanitized copy is the one used from here: the builder's own
	// need not stay in memory beside it while the file is written.
	outcome.Result = nil

	// The table first: a write that fails (a full disk) still shows
	// what the run measured.
	report.WriteSummary(tableWriter(st, f), res, client.Through(res.Client))
	printFindings(tableWriter(st, f), res)
	printThresholds(tableWriter(st, f), res.Thresholds)
	report.WriteBlocks(tableWriter(st, f), res)
	report.WriteDurability(tableWriter(st, f), res)

	st.setStep("writing the results to %s", out)

	if err := writeResultsFile(st, out, res); err != nil {
		st.setUnsaved("") // said here, once
		return keptRunLog(out, plan.Options.RunLog, err)
	}

	st.setUnsaved("")

	resultsWritten(st, out)
	fmt.Fprintf(st.Stderr, "Run log written to %s\n", plan.Options.RunLog)

	if err := recordInHistory(st, f.historyStore, out, res); err != nil {
		return err
	}

	if err := writeRunMarkdown(st, f.markdown, variants[0].Spec, res); err != nil {
		return err
	}

	if err := writeRunReport(st, f, out, res); err != nil {
		return err
	}

	return finishedExit(st, fin)
}

// resultsPath is --out, or results/<workload>-<UTC timestamp>.json.
func resultsPath(out, name string, started time.Time) string {
	if out != "" {
		return out
	}

	return filepath.Join("results", fmt.Sprintf("%s-%s.json", name, started.UTC().Format("20060102T150405Z")))
}

// writeRunReport writes the HTML report next to the results file (--report).
func writeRunReport(st *State, f *runFlags, out string, res *result.Result) error {
	if !f.report {
		return nil
	}

	html := reportPathFor(out)
	opts := reportOptions(st, []string{out})

	if err := opts.WriteFile(html, []*result.Result{res}); err != nil {
		return failed("writing the report: %v", err)
	}

	fmt.Fprintf(st.Stderr, "Report written to %s\n", html)

	return nil
}

// loadOwnerKey loads (creating it on first use) the key that signs the
// owner records of the databases mongobench creates: $MONGOBENCH_OWNER_KEY_FILE,
// else owner.key in the user's configuration directory. A key that cannot be
// had is the user's to fix (a path, a file's contents): bad input.
func loadOwnerKey(st *State) (*targets.OwnerKey, error) {
	path, err := targets.OwnerKeyPath(st.Getenv)
	if err != nil {
		return nil, badInput("%v", err)
	}

	key, err := targets.LoadOwnerKey(path)
	if err != nil {
		return nil, badInput("%v", err)
	}

	return key, nil
}
