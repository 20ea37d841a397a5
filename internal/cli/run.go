package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/redact"
	"github.com/mongobench/mongobench/internal/result"
	"github.com/mongobench/mongobench/internal/runner"
	"github.com/mongobench/mongobench/internal/target"
	"github.com/mongobench/mongobench/internal/workload"
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
}

func newRunCommand(st *State) *cobra.Command {
	var f runFlags

	c := &cobra.Command{
		Use:   "run WORKLOAD.yaml",
		Short: "Run a workload and write a results file",
		Long: `run sets up the workload's database (only a database mongobench created, or one
you allow with --allow-existing-db), loads its documents, measures its operations
and writes a results file (JSON) that report and compare commands read.

Without --uri it starts an embedded FerretDB (SQLite backend) in a temporary
directory, removed at exit. With --uri it connects to any MongoDB-compatible
deployment; authentication and TLS options go in the URI. Passwords are never
printed or saved.

Ctrl-C stops the run gracefully and writes the results so far; a second Ctrl-C
exits at once.`,
		Example: `  mongobench run workloads/quickstart.yaml
  mongobench run workloads/quickstart.yaml --uri mongodb://localhost:27017 --concurrency 8 --duration 1m`,
		Args: cobra.ExactArgs(1),
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

			return runWorkload(st, args[0], seed, &f)
		},
	}

	fl := c.Flags()
	fl.StringVar(&f.uri, "uri", "", "MongoDB connection string (default: start an embedded FerretDB)")
	fl.StringVarP(&f.out, "out", "o", "", "results file (default results/<workload>-<timestamp>.json)")
	fl.DurationVar(&f.duration, "duration", 0, "measured duration, overriding the workload's run.duration")
	fl.IntVarP(&f.concurrency, "concurrency", "c", 0, "number of workers, overriding the workload's run.concurrency")
	fl.Int64Var(&f.seed, "seed", 0, "seed for generated data, overriding the workload's seed")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output; only the final table and messages")
	fl.BoolVar(&f.allowExisting, "allow-existing-db", false,
		"use the workload's database even though mongobench did not create it (it is then never dropped)")
	fl.BoolVar(&f.keepDB, "keep-db", false, "keep the workload's database after the run instead of dropping it")

	return c
}

// runWorkload is `mongobench run`.
func runWorkload(st *State, path string, seed *int64, f *runFlags) error {
	w, errs := loadWorkload(path, seed)
	if len(errs) > 0 {
		for _, err := range errs {
			fmt.Fprintln(st.Stderr, err)
		}

		return &exitError{code: ExitBadInput, msg: path + ": invalid workload"}
	}

	spec := w.spec
	phases, _ := spec.PhaseList()

	// Overrides apply to every phase they make sense for: concurrency to
	// closed-loop workers, duration to phases timed by a duration.
	if f.concurrency > 0 {
		spec.Run.Concurrency = f.concurrency

		for _, p := range phases {
			p.Concurrency = f.concurrency
		}
	}

	if f.duration > 0 {
		for _, p := range phases {
			if p.Duration > 0 {
				p.Duration = workload.Duration(f.duration)
			}
		}
	}

	ctx, stop := interruptContext(st)
	defer stop()

	if path := st.Getenv("MONGOBENCH_CPUPROFILE"); path != "" {
		stopProfile, err := startCPUProfile(path)
		if err != nil {
			return failed("%v", err)
		}
		defer stopProfile()
	}

	tgt, err := openTarget(ctx, st, f)
	if err != nil {
		return err
	}
	defer tgt.close(st)

	info, err := target.Describe(ctx, tgt.client)
	if err != nil {
		return failed("asking the server who it is: %s", redact.Error(err, tgt.uri))
	}

	if tgt.embedded != nil {
		info = tgt.embedded.Annotate(info)
	}

	// Printed even with --quiet: they say what the numbers describe.
	fmt.Fprintf(st.Stderr, "Server: %s\n", info.Summary())

	for _, n := range info.Notes() {
		fmt.Fprintf(st.Stderr, "Note: %s\n", n)
	}

	db := tgt.client.Database(spec.Database)

	own, err := prepareDatabase(ctx, tgt.client, spec, f.allowExisting)
	if err != nil {
		return err
	}

	if !f.keepDB && own.Owned {
		defer func() {
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()

			if err := target.Drop(cctx, tgt.client, spec.Database, own); err != nil {
				fmt.Fprintf(st.Stderr, "Warning: could not drop database %q after the run: %s\n", spec.Database, redact.Error(err, tgt.uri))
			}
		}()
	}

	obs := newObserver(st, f.quiet)
	eng := &runner.Engine{
		DB:         db,
		Env:        w.env,
		Observer:   obs,
		Interval:   spec.Run.Interval.D(),
		AbortAfter: spec.Run.AbortAfter.D(),
		Timeout:    spec.Run.Timeout.D(),
	}

	rb := newResultBuilder(st, path, spec, tgt, info)

	var final *runner.PhaseResult

	for _, l := range w.loads {
		pres := eng.Load(ctx, l)
		rb.add(pres, false)
		final = pres

		if pres.Status != runner.StatusCompleted {
			break
		}
	}

	for _, p := range phases {
		if final != nil && final.Status != runner.StatusCompleted {
			break
		}

		final = eng.RunPhase(ctx, runner.PhasePlan{
			Spec: p,
			Mix:  spec.MixOperations(p),
			Ops:  w.ops,
		})
		rb.add(final, !p.Measured())
	}

	res := rb.build(final)

	out := f.out
	if out == "" {
		out = filepath.Join("results", fmt.Sprintf("%s-%s.json", spec.Name, rb.started.UTC().Format("20060102T150405Z")))
	}

	if err := result.WriteFile(out, res); err != nil {
		return failed("writing results: %v", err)
	}

	printSummary(st.Stdout, res)
	fmt.Fprintf(st.Stderr, "Results written to %s\n", out)

	return verdict(st, spec, final, res, tgt.uri)
}

// verdict turns how the run ended into the exit code, with a message.
func verdict(st *State, spec *workload.Spec, final *runner.PhaseResult, res *result.Result, uri string) error {
	switch final.Status {
	case runner.StatusInterrupted:
		return failed("run interrupted; results so far were written")
	case runner.StatusAborted:
		msg := fmt.Sprintf("run aborted: %s", final.Reason)
		if final.FirstError != nil {
			msg += "\nFirst error: " + redact.Error(final.FirstError, uri)
		}

		return failed("%s", msg)
	}

	var ok, bad int64

	for _, p := range res.Phases {
		if p.Excluded {
			continue
		}

		for _, o := range p.Operations {
			ok += o.Count
			for _, n := range o.Errors {
				bad += n
			}
		}
	}

	if bad == 0 {
		return nil
	}

	rate := float64(bad) / float64(ok+bad)
	if rate > spec.Run.MaxErrorRate {
		msg := fmt.Sprintf("%d of %d operations failed (%.2f%%), above the workload's run.max_error_rate of %.2f%%",
			bad, ok+bad, 100*rate, 100*spec.Run.MaxErrorRate)
		if final.FirstError != nil {
			msg += "\nFirst error: " + redact.Error(final.FirstError, uri)
		}

		return failed("%s", msg)
	}

	fmt.Fprintf(st.Stderr, "%d operations failed (%.2f%%), within run.max_error_rate\n", bad, 100*rate)

	return nil
}

// interruptContext returns a context cancelled by the first interrupt; the
// second interrupt runs the registered hard-exit cleanups and exits.
func interruptContext(st *State) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})

	if st.Signals != nil {
		go func() {
			select {
			case <-st.Signals:
			case <-done:
				return
			}

			fmt.Fprintln(st.Stderr, "\nInterrupted: stopping and writing results (press Ctrl-C again to exit at once)")
			cancel()

			select {
			case <-st.Signals:
			case <-done:
				return
			}

			fmt.Fprintln(st.Stderr, "Exiting at once.")
			st.runHardExitHooks()
			st.Exit(ExitForced)
		}()
	}

	return ctx, func() {
		close(done)
		cancel()
	}
}

// prepareDatabase claims the workload's database and gives it a clean
// slate: dropped and re-created with its collections and indexes, so that
// every run starts from the same state.
func prepareDatabase(ctx context.Context, client *mongo.Client, spec *workload.Spec, allowExisting bool) (target.Ownership, error) {
	own, err := target.Claim(ctx, client, spec.Database, allowExisting)
	if err != nil {
		var noe *target.NotOwnedError
		if errors.As(err, &noe) {
			return own, badInput("%s", err)
		}

		return own, failed("claiming database %q: %v", spec.Database, err)
	}

	if own.Owned {
		if err := target.Reset(ctx, client, spec.Database, own); err != nil {
			return own, failed("resetting database %q: %v", spec.Database, err)
		}
	}

	if err := createSchema(ctx, client.Database(spec.Database), spec); err != nil {
		return own, err
	}

	return own, nil
}
