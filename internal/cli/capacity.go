package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/lab/capacity"
	benchplan "github.com/mongobench/mongobench/internal/lab/plan"
	"github.com/mongobench/mongobench/internal/report"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// capacityFlags are the options of `mongobench capacity`; run holds those
// it shares with `mongobench run` (target, output, seed, parameters).
type capacityFlags struct {
	run     runFlags
	shard   shardFlags
	slo     []string
	workers string

	startRate, maxRate, growth float64
	resolution                 string
	maxSteps                   int
	stepDuration, maxStep      time.Duration
	warmup                     time.Duration
}

func newCapacityCommand(st *State) *cobra.Command {
	var f capacityFlags

	c := &cobra.Command{
		Use:   "capacity WORKLOAD.yaml --slo 'p99 < 20ms'",
		Short: "Find the highest rate a deployment sustains within an SLO, and how it scales with workers",
		Long: `capacity searches the highest open-loop rate at which the workload's phase meets
every --slo: it runs steps at fixed rates (latency counted from each operation's
intended start, so a backlog cannot hide), multiplying the rate by --growth while
the SLO holds, then bisecting between the highest rate that met it and the lowest
that broke it until they are --resolution apart, and confirms the result with a
run of its own. A step fails when an objective fails, when the achieved rate falls
below 95% of the offered one, or when mongobench's own process is the bottleneck
(its scheduler fell behind, or, against a --uri deployment, it used 90% of the
machine's cores): then the search stops and reports a lower bound, never its own
limit as the server's. Each step lasts at least --step-duration, longer at low
rates so that the strictest percentile has a confidence interval.

An --slo is a threshold as in a workload's thresholds ("p99 < 20ms",
"error_rate < 0.1%"), on all operations together or, with a prefix, on one
("get:p99 < 5ms"); repeat it for several. Without --slo the objectives are the
workload's capacity section's slo, else its thresholds that bound a latency or
the error rate. --workers 1,2,4,8,16 adds a closed-loop
sweep over those worker counts after the search. A workload's capacity section
(slo, start_rate, max_rate, step_duration, max_step_duration, workers) gives
these settings where the flags are not given; a flag given overrides its field.

The target is launched once, as run launches it (the embedded FerretDB without
--uri, --uri, or one --target), and every step is a run of the workload's phase
on it: its database is reset and loaded again for each step. The results file is
the confirmation run's, with a capacity section holding every step, the sweep
and the verdict (docs/results.md); report draws it, compare gives the capacity
ratio of two such files. The last line printed is the maximum sustainable rate
with its 95% confidence interval. See docs/capacity.md.

--shard I/N --start-at auto searches the aggregate rate of N processes (on one
machine or several) against one --uri deployment: shard 0 searches and tells the
others each step's aggregate rate through the database WORKLOAD_DB_capacity, every
shard offers its share (the rate divided by N) from a start barrier of the step's
own, and shard 0 judges each step on the shards' merged histograms and counts (a
step is client-limited when any shard's client was). Shard 0's results file holds
the capacity; the others' are marked as followers (capacity_follower), and
'mongobench merge' of all the files gives the reported run whole. --shard-wait
bounds every wait for another shard.`,
		Example: `  mongobench capacity workloads/quickstart.yaml --slo 'p99 < 20ms'
  mongobench capacity w.yaml --uri mongodb://db:27017 --slo 'p99 < 10ms' --slo 'error_rate < 0.1%' --workers 1,2,4,8,16 --report`,
		Args: oneWorkload,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCapacity(st, cmd, args[0], &f)
		},
	}

	fl := c.Flags()
	fl.StringArrayVar(&f.slo, "slo", nil, "an objective, repeatable: [OPERATION:]METRIC < LIMIT, e.g. 'p99 < 20ms' or 'error_rate < 0.1%' (default: the workload's capacity section's slo, else its thresholds that bound a latency or the error rate)")
	fl.StringVar(&f.workers, "workers", "", "also sweep these closed-loop worker counts, comma-separated (e.g. 1,2,4,8,16)")
	fl.Float64Var(&f.startRate, "start-rate", 100, "first rate tried, operations per second")
	fl.Float64Var(&f.maxRate, "max-rate", 1_000_000, "highest rate tried, operations per second")
	fl.Float64Var(&f.growth, "growth", 2, "factor by which the rate grows while the SLO holds")
	fl.StringVar(&f.resolution, "resolution", "5%", "stop bisecting when the highest passing and lowest failing rates are this close")
	fl.IntVar(&f.maxSteps, "max-steps", 20, "most steps of the search, confirmations included")
	fl.DurationVar(&f.stepDuration, "step-duration", 3*time.Second, "shortest measured time of a step (and of each sweep step)")
	fl.DurationVar(&f.maxStep, "max-step-duration", 30*time.Second, "longest measured time of a step")
	fl.DurationVar(&f.warmup, "warmup", time.Second, "warm-up before each step's measurement")

	r := &f.run
	fl.StringVar(&r.uri, "uri", "", "MongoDB connection string (default: $MONGOBENCH_URI, else start an embedded FerretDB)")
	fl.StringArrayVar(&r.targets, "target", nil, "the target to launch instead: KIND[:setting=value,...] with KIND "+targets.KindList()+" (one)")
	fl.StringVar(&r.mongodBinary, "mongod-binary", "", "the mongod program of a mongod target (default $"+workload.MongodBinaryEnv+", else mongod on PATH)")
	fl.StringVarP(&r.out, "out", "o", "", "results file, - for standard output (default results/<workload>-capacity-<timestamp>.json)")
	fl.Int64Var(&r.seed, "seed", 0, "seed for generated data, overriding the workload's seed")
	fl.StringArrayVar(&r.set, "set", nil, "set a parameter declared in the workload's params block, repeatable: name=value")
	fl.BoolVarP(&r.quiet, "quiet", "q", false, "no live progress; the steps and the verdict are still printed")
	fl.BoolVar(&r.allowExisting, "allow-existing-db", false, "use the workload's database even though mongobench did not create it (see run --help)")
	fl.BoolVar(&r.report, "report", false, "also write an HTML report next to the results file")
	fl.StringVar(&r.label, "label", "", "name what this search measured, stored in the results file for history")
	fl.DurationVar(&r.serverSelection, "server-selection-timeout", 0, "how long an operation waits for a reachable server (default: the workload's, 5s)")
	addShardFlags(fl, &f.shard)

	return c
}

// capacitySettings checks the flags and turns them into the search's
// settings.
func capacitySettings(f *capacityFlags) ([]capacity.SLO, []int, capacity.SearchOptions, error) {
	var slos []capacity.SLO

	for _, s := range f.slo {
		sl, err := capacity.ParseSLO(s)
		if err != nil {
			return nil, nil, capacity.SearchOptions{}, badInput("--slo %v", err)
		}

		slos = append(slos, sl)
	}

	workers, err := parseWorkers(f.workers)
	if err != nil {
		return nil, nil, capacity.SearchOptions{}, err
	}

	res, err := parsePercent(f.resolution)
	if err != nil {
		return nil, nil, capacity.SearchOptions{}, badInput("--resolution: %v", err)
	}

	opts := capacity.SearchOptions{Start: f.startRate, Max: f.maxRate, Growth: f.growth, Resolution: res, MaxSteps: f.maxSteps}
	if err := opts.Check(); err != nil {
		return nil, nil, opts, badInput("%v", err)
	}

	switch {
	case f.stepDuration <= 0:
		return nil, nil, opts, badInput("--step-duration must be > 0")
	case f.maxStep < f.stepDuration:
		return nil, nil, opts, badInput("--max-step-duration must be at least --step-duration")
	case f.warmup < 0:
		return nil, nil, opts, badInput("--warmup must be >= 0")
	case len(f.run.targets) > 1:
		return nil, nil, opts, badInput("--target: a capacity search measures one target; run it once per target")
	}

	return slos, workers, opts, nil
}

// parseWorkers reads --workers: increasing positive counts.
func parseWorkers(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}

	var out []int

	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 || n > 10000 {
			return nil, badInput("--workers %q: want comma-separated worker counts between 1 and 10000, e.g. 1,2,4,8,16", s)
		}

		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, badInput("--workers %q: the counts must increase", s)
		}

		out = append(out, n)
	}

	if len(out) < 4 {
		return nil, badInput("--workers %q: a sweep needs at least 4 worker counts to fit the three coefficients and test the curve", s)
	}

	return out, nil
}

// parsePercent reads "5%" (or 0.05) as a fraction.
func parsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0

	if n, ok := strings.CutSuffix(t, "%"); ok {
		t, scale = strings.TrimSpace(n), 0.01
	}

	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("bad number %q: want a percentage such as 5%%", s)
	}

	return v * scale, nil
}

// applyCapacitySection takes the workload's capacity section's settings
// for the flags not given on the command line: a flag given overrides its
// field.
func applyCapacitySection(cmd *cobra.Command, f *capacityFlags, sec *workload.Capacity) {
	if sec == nil {
		return
	}

	given := cmd.Flags().Changed

	if !given("slo") && len(sec.SLO) > 0 {
		f.slo = append([]string(nil), sec.SLO...)
	}

	if !given("start-rate") && sec.StartRate > 0 {
		f.startRate = sec.StartRate
	}

	if !given("max-rate") && sec.MaxRate > 0 {
		f.maxRate = sec.MaxRate
	}

	if !given("step-duration") && sec.StepDuration > 0 {
		f.stepDuration = sec.StepDuration.D()
	}

	if !given("max-step-duration") && sec.MaxStepDuration > 0 {
		f.maxStep = sec.MaxStepDuration.D()
	}

	if !given("workers") && len(sec.Workers) > 0 {
		counts := make([]string, len(sec.Workers))
		for i, n := range sec.Workers {
			counts[i] = strconv.Itoa(n)
		}

		f.workers = strings.Join(counts, ",")
	}
}

func runCapacity(st *State, cmd *cobra.Command, path string, f *capacityFlags) error {
	var seed *int64
	if cmd.Flags().Changed("seed") {
		seed = &f.run.seed
	}

	if err := checkLabel(f.run.label); err != nil {
		return err
	}

	if f.run.mongodBinary == "" {
		f.run.mongodBinary = st.Getenv(workload.MongodBinaryEnv)
	}

	ctx, stop := interruptContext(st)
	defer stop()

	if err := checkInputExists(path); err != nil {
		return err
	}

	sh, err := shardPlan(st, cmd.Flags().Changed, &f.shard)
	if err != nil {
		return err
	}

	w, err := loadWorkload(ctx, st, path, seed, f.run.set...)
	if err != nil {
		return err
	}

	// The settings are checked once the workload's capacity section has
	// filled the flags not given: a flag's limits may depend on it
	// (--max-rate against the section's start_rate).
	applyCapacitySection(cmd, f, w.Spec.Capacity)

	slos, workers, search, err := capacitySettings(f)
	if err != nil {
		return err
	}

	if len(slos) == 0 {
		if slos, err = capacity.FromThresholds(w.Spec.Thresholds.Rules); err != nil {
			return badInput("%s: %v", path, err)
		}

		for _, s := range slos {
			f.slo = append(f.slo, s.String())
		}
	}

	st.maskValues(w.Spec.SecretValues())

	if err := resolveURIFlag(st, &f.run); err != nil {
		return err
	}

	plan, err := benchplan.New(ctx, &benchplan.Request{
		Path: path, Workload: w, Targets: f.run.targets, URI: f.run.uri, MongodBinary: f.run.mongodBinary,
		ServerSelection: f.run.serverSelection, Rounds: 1, Shard: sh, Getenv: st.Getenv,
		Installer: func() (*client.Installer, error) { return newInstaller(st) },
	})
	if err != nil {
		return planError(st, err)
	}

	ownerKey, err := loadOwnerKey(st)
	if err != nil {
		return err
	}

	plan.Options.OwnerKey = ownerKey
	plan.Options.AllowExisting = f.run.allowExisting
	plan.Options.Version = Version()

	out := f.run.out
	if out == "" {
		out = resultsPath("", shardResultsName(w.Spec.Name+"-capacity", sh), st.Now())
	}

	tw := tableWriter(st, &f.run)
	hooks := benchHooks(st, &f.run)
	hooks.Messages = &onceMessages{inner: hooks.Messages, seen: map[string]bool{}}

	fmt.Fprintf(tw, "Capacity search of %s within %s\n", w.Spec.Name, strings.Join(f.slo, " and "))

	res, err := capacity.Run(ctx, capacity.Config{
		Plan: plan, Hooks: hooks, SLO: slos, Search: search, Workers: workers,
		StepDuration: f.stepDuration, MaxStepDuration: f.maxStep, Warmup: f.warmup,
		Progress: func(s result.CapacityStep) { fmt.Fprintln(tw, capacity.Describe(s)) },
		CPU:      st.ProcessCPU,
	})
	interrupted := errors.Is(err, capacity.ErrInterrupted) && res != nil
	if err != nil && !interrupted {
		var ie *capacity.InputError
		if errors.As(err, &ie) {
			return badInput("%s: %s", path, ie.Msg)
		}

		return benchError(err)
	}

	res.Label, res.Commit = f.run.label, ciCommit(st.Getenv)

	if res, err = result.Sanitize(res); err != nil {
		return failed("writing results: %v", err)
	}

	if err := writeResultsFile(st, out, res); err != nil {
		return failed("writing results: %v", err)
	}

	resultsWritten(st, out)

	if err := writeRunReport(st, &f.run, out, res); err != nil {
		return err
	}

	if fo := res.CapacityFollower; fo != nil {
		fmt.Fprintf(tw, "Shard %d/%d followed shard 0's search for %d steps; the capacity is in shard 0's results\n", fo.Shard, fo.Count, fo.Steps)
	} else {
		printCapacity(tw, res.Capacity)
	}

	if interrupted {
		// As `run` fails an interrupted run (exit 1), after its results.
		return failed("capacity search %s; the steps done so far are in %s", res.StatusReason, out)
	}

	return nil
}

// printCapacity prints the verdict, the fit, and last the maximum
// sustainable rate with its interval.
func printCapacity(w io.Writer, c *result.Capacity) {
	report.WriteCapacity(w, c)
}

// onceMessages prints each distinct message once: every step is a run
// that would say again what the server is.
type onceMessages struct {
	inner bench.Messages
	seen  map[string]bool
}

func (m *onceMessages) Printf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if m.seen[msg] {
		return
	}

	m.seen[msg] = true
	m.inner.Printf("%s", msg)
}

func (m *onceMessages) Step(format string, args ...any) { m.inner.Step(format, args...) }
