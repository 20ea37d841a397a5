package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/lab/calibrate"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// calibrateFlags are the options of `mongobench calibrate`.
type calibrateFlags struct {
	uri         string
	delay       time.Duration
	experiments int
	aa, ab      int
	gatePairs   int
	rounds      int
	trial       time.Duration
	effect      string
	failIf      []string
	runs        int
	minEffect   string
	set         []string
}

func newCalibrateCommand(st *State) *cobra.Command {
	var f calibrateFlags

	c := &cobra.Command{
		Use:   "calibrate [WORKLOAD.yaml]",
		Short: "Measure, on this machine, how often verdicts and gates err",
		Long: `calibrate measures how far verdicts can be trusted on this machine, with the
same machinery as run and compare:

  - A/A: one server compared with itself under two names, in interleaved
    rounds; the share of verdicts that say "difference" is the false-positive
    rate, beside the rate the method states;
  - A/B: a second test server whose reply delay makes the measured p50
    --effect higher; the share of experiments whose p50 verdict finds it is
    the power (built-in test server only);
  - the smallest p50 increase the rounds detect with 80% power, from the
    A/A rounds' spread;
  - gates: --runs runs of a baseline, then as many of a candidate (the same
    server), compared as compare compares two directories with --fail-if;
    the share of pairs that fail is the gate's false-failure rate.

Every rate is printed as k of n with its 95% confidence interval. Without
--uri the built-in test server answers (loopback only) and the built-in
calibration workload (one insertOne at a time) runs; with --uri the workload
runs against that server (it must be a database mongobench may use, as for
run), and the planted-difference experiment is skipped.

It takes about experiments × (4 × rounds + 2 × runs) × trial: 10 × 36 × 1s,
about 7 minutes, by default. Ctrl-C stops it with what was measured.`,
		Example: `  mongobench calibrate
  mongobench calibrate --experiments 20 --trial 500ms --fail-if 'p99 +10%'
  mongobench calibrate workloads/quickstart.yaml --uri mongodb://127.0.0.1:27017/ --experiments 5`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return runCalibrate(st, args, &f)
		},
	}

	fl := c.Flags()
	fl.StringVar(&f.uri, "uri", "", "calibrate against this server (default: the built-in test server)")
	fl.DurationVar(&f.delay, "delay", time.Millisecond, "the built-in test server's reply delay")
	fl.IntVar(&f.experiments, "experiments", 10, "experiments of each kind (unless --aa, --ab or --gate-pairs say otherwise)")
	fl.IntVar(&f.aa, "aa", 0, "A/A experiments (default --experiments)")
	fl.IntVar(&f.ab, "ab", 0, "A/B experiments per planted effect (default --experiments)")
	fl.IntVar(&f.gatePairs, "gate-pairs", 0, "A/A pairs of sides for the gate (default --experiments)")
	fl.IntVar(&f.rounds, "rounds", workload.DefaultRounds, "rounds of each A/A and A/B comparison")
	fl.DurationVar(&f.trial, "trial", time.Second, "measured duration of each trial")
	fl.StringVar(&f.effect, "effect", "20%", "planted p50 differences of the A/B experiments, comma-separated ('20%,100%'; '0%' skips them)")
	fl.StringArrayVar(&f.failIf, "fail-if", nil, "gate expressions to check in A/A pairs (default: 'p99 +10%', 'p50 +10%', 'throughput -5%')")
	fl.IntVar(&f.runs, "runs", analysis.CompareMinRuns, "runs a side of each gate experiment")
	fl.StringVar(&f.minEffect, "min-effect", "", "smallest change called a difference (default 5%)")
	fl.StringArrayVar(&f.set, "set", nil, "set a declared parameter of the workload, NAME=VALUE (repeatable)")

	return c
}

func runCalibrate(st *State, args []string, f *calibrateFlags) error {
	cfg := calibrate.Config{
		URI: f.uri, Delay: f.delay, Experiments: f.experiments, AA: f.aa, AB: f.ab, GatePairs: f.gatePairs, Rounds: f.rounds, Trial: f.trial,
		RunsPerSide: f.runs, Version: Version(), Seed: 1,
	}

	switch {
	case f.experiments < 1 || f.experiments > 1000:
		return badInput("--experiments must be between 1 and 1000, not %d", f.experiments)
	case f.aa < 0 || f.ab < 0 || f.gatePairs < 0 || f.aa > 1000 || f.ab > 1000 || f.gatePairs > 1000:
		return badInput("--aa, --ab and --gate-pairs must be between 1 and 1000")
	case f.rounds < 1 || f.rounds > 1000:
		return badInput("--rounds must be between 1 and 1000, not %d", f.rounds)
	case f.runs < 1 || f.runs > 1000:
		return badInput("--runs must be between 1 and 1000, not %d", f.runs)
	case f.trial <= 0:
		return badInput("--trial must be positive, not %s", f.trial)
	case f.delay < 0:
		return badInput("--delay must not be negative, not %s", f.delay)
	case f.uri == "" && len(args) > 0:
		return badInput("a workload of your own needs --uri: the built-in test server runs the built-in calibration workload")
	}

	for e := range strings.SplitSeq(f.effect, ",") {
		num, ok := strings.CutSuffix(strings.TrimSpace(e), "%")
		effect, err := strconv.ParseFloat(num, 64)

		if !ok || err != nil || !(effect >= 0 && effect <= 1000) {
			return badInput("bad --effect %q: want percentages from 0%% to 1000%%, such as '20%%' or '20%%,100%%'", e)
		}

		if effect > 0 {
			cfg.Effects = append(cfg.Effects, effect/100)
		}
	}

	if f.minEffect != "" {
		var err error
		if cfg.Judging.MinEffect, err = verdict.ParseMinEffect(f.minEffect); err != nil {
			return badInput("bad --min-effect: %v", err)
		}
	}

	for _, expr := range f.failIf {
		g, err := analysis.ParseGate(expr)
		if err != nil {
			return badInput("%v", err)
		}

		cfg.Gates = append(cfg.Gates, g)
	}

	ctx, stop := interruptContext(st)
	defer stop()

	if len(args) == 1 {
		w, errs := readWorkload(ctx, args[0], nil, f.set...)
		if len(errs) > 0 {
			for _, err := range errs {
				fmt.Fprintln(st.Stderr, redact.Text(err.Error()))
			}

			return &exitError{code: ExitBadInput, msg: args[0] + ": invalid workload"}
		}

		cfg.Spec = w.Spec
	}

	var err error

	if f.uri != "" {
		if err := checkCalibrateURI(f.uri); err != nil {
			return badInput("--uri: %v", err)
		}
	}

	if cfg.OwnerKey, err = loadOwnerKey(st); err != nil {
		return err
	}

	fmt.Fprintf(st.Stderr, "Calibrating: %d rounds, %s trials (Ctrl-C stops with what was measured)\n", f.rounds, f.trial)

	rep, err := calibrate.Run(ctx, cfg, func(format string, args ...any) {
		fmt.Fprintf(st.Stderr, "  "+format, args...)
	})
	if rep != nil {
		rep.WriteText(st.Stdout)
	}

	if err != nil {
		return failed("calibration stopped: %s", redact.Text(err.Error()))
	}

	return nil
}

// checkCalibrateURI checks a connection string's scheme, as run does.
func checkCalibrateURI(uri string) error {
	if !strings.HasPrefix(uri, "mongodb://") && !strings.HasPrefix(uri, "mongodb+srv://") {
		return fmt.Errorf("the connection string must start with mongodb:// or mongodb+srv://")
	}

	return nil
}
