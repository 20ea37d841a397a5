// Package calibrate measures, on the user's own machine, how far the
// tool's verdicts can be trusted there: the rate of false "difference"
// verdicts in A/A experiments (one server compared with itself), the power
// to detect a planted difference, the smallest difference the rounds
// resolve, and the rate at which a regression gate fails for nothing.
//
// A verdict's stated error rate holds only under its assumptions (rounds
// independent, runs exchangeable); a noisy CI runner can break them. No
// peer tool measures this, so a user of a busy machine would have to take
// the verdicts on faith. Calibration runs the same machinery as `run` and
// `compare` (bench plans, analysis verdicts and gates) against a server
// whose latency it knows: the built-in test server, or the user's own.
package calibrate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/verdict"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// Workload is the built-in calibration workload: one insert at a time, so
// that the test server's reply delay sets the latency.
const Workload = `name: calibration
database: mongobench_calibration
collections: [{name: items}]
run:
  concurrency: 1
  duration: 1s
  interval: 250ms
operations:
  - name: add
    op: insertOne
    collection: items
    document: {n: 1}
`

// DefaultGates are the gate a typical CI job sets: p99 and p50 up 10%,
// throughput down 5%.
var DefaultGates = []string{"p99 +10%", "p50 +10%", "throughput -5%"}

// Config is a calibration to run.
type Config struct {
	// Spec is the workload; nil is Workload.
	Spec *workload.Spec
	// URI names the server to calibrate against; empty starts the
	// built-in test server (and allows the planted-difference experiments).
	URI string
	// Delay is the built-in test server's reply delay.
	Delay time.Duration
	// Experiments is the number of experiments of each kind, unless one
	// of the counts below says otherwise.
	Experiments int
	// AA, AB and GatePairs are the numbers of A/A experiments, of A/B
	// experiments per planted effect, and of gate pairs; 0 means
	// Experiments.
	AA, AB, GatePairs int
	// Rounds is the number of rounds of each A/A and A/B comparison.
	Rounds int
	// Trial is the measured duration of each trial.
	Trial time.Duration
	// Effects are the planted differences in p50 (0.2: B's p50 20% above
	// A's), one set of power experiments each; none skips them.
	Effects []float64
	// Gates are the --fail-if expressions checked in A/A pairs.
	Gates []analysis.Gate
	// RunsPerSide is the number of runs a side of each gate experiment;
	// the sides run one after the other, as a CI job's baseline and
	// candidate do.
	RunsPerSide int
	// Judging is the minimum effect (and reference) of the verdicts.
	Judging analysis.Judging
	// Version is recorded in the results of the trials.
	Version string
	// OwnerKey signs and verifies the owner record of the workload's
	// database, as for run (see target.OwnerKey).
	OwnerKey *targets.OwnerKey
	// Seed seeds the resampling of the smallest-difference estimate.
	Seed uint64
}

// Progress receives a line per finished experiment.
type Progress func(format string, args ...any)

// Report is what a calibration measured.
type Report struct {
	Config Config
	// Against names the server: "the built-in test server (1ms)" or the
	// masked URI.
	Against string

	// AA counts the non-reference verdicts of the A/A experiments and
	// those that said "difference" (false positives).
	AA Count
	// AAByMetric breaks AA down per metric (throughput, p50, p99).
	AAByMetric map[string]*Count
	// Stated is the largest false-positive rate the method states for one
	// verdict: the sign test's exact level at Rounds.
	Stated float64

	// Power is one entry per planted effect.
	Power []Power

	// Resolve is the smallest p50 difference the rounds detect with 80%
	// power (and its 95% interval over experiments), from the spread of
	// the A/A per-round ratios.
	Resolve, ResolveLo, ResolveHi float64

	// Gate counts the A/A pairs of sides whose gates failed.
	Gate Count
}

// Power is what the experiments with one planted difference found.
type Power struct {
	// Effect is the planted p50 difference (0.2 for 20%).
	Effect float64
	// Found counts the A/B experiments whose p50 verdict found the
	// difference in the right direction.
	Found Count
	// Ratio is the p50 ratio measured between the two servers (median
	// over experiments), and Delay the second server's reply delay.
	Ratio float64
	Delay time.Duration
}

// Count is k of n, with its proportion's 95% interval.
type Count struct{ K, N int }

// Add counts one trial.
func (c *Count) Add(success bool) {
	c.N++
	if success {
		c.K++
	}
}

// String says "3 of 60 (5.0%, 95% CI 1.7%–13.7%)".
func (c Count) String() string {
	if c.N == 0 {
		return "none measured"
	}

	p, lo, hi := verdict.Proportion(c.K, c.N, 0.05)

	return fmt.Sprintf("%d of %d (%.1f%%, 95%% CI %.1f%%–%.1f%%)", c.K, c.N, 100*p, 100*lo, 100*hi)
}

func (c *Config) defaults() error {
	if c.Spec == nil {
		spec, errs := workload.Parse("calibration.yaml", []byte(Workload))
		if len(errs) > 0 {
			return fmt.Errorf("built-in calibration workload: %w", errs[0])
		}

		c.Spec = spec
	}

	if c.Delay <= 0 {
		c.Delay = time.Millisecond
	}

	if c.Experiments <= 0 {
		c.Experiments = 10
	}

	for _, n := range []*int{&c.AA, &c.AB, &c.GatePairs} {
		if *n <= 0 {
			*n = c.Experiments
		}
	}

	if c.Rounds <= 0 {
		c.Rounds = workload.DefaultRounds
	}

	if c.Trial <= 0 {
		c.Trial = time.Second
	}

	if c.RunsPerSide <= 0 {
		c.RunsPerSide = analysis.CompareMinRuns
	}

	if c.Gates == nil {
		for _, e := range DefaultGates {
			g, err := analysis.ParseGate(e)
			if err != nil {
				return err
			}

			c.Gates = append(c.Gates, g)
		}
	}

	return nil
}

// Run calibrates. It stops early, with what it measured so far, when ctx
// is done.
func Run(ctx context.Context, cfg Config, progress Progress) (*Report, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}

	if progress == nil {
		progress = func(string, ...any) {}
	}

	rep := &Report{Config: cfg, AAByMetric: map[string]*Count{}, Stated: verdict.PairedLevel(cfg.Rounds, analysis.MatrixAlpha)}

	uriA := cfg.URI
	if uriA == "" {
		srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(cfg.Delay)})
		if err != nil {
			return nil, fmt.Errorf("starting the test server: %w", err)
		}
		defer srv.Close()

		uriA = srv.URI()
		rep.Against = fmt.Sprintf("the built-in test server (reply delay %s)", cfg.Delay)
	} else {
		rep.Against = "the server at " + redact.URI(cfg.URI)
	}

	spec := *cfg.Spec // the phases are pointers: SetDuration sets the caller's too, the same every time
	spec.SetDuration(cfg.Trial)

	compiled, errs := bench.Compile(&spec)
	if len(errs) > 0 {
		return nil, fmt.Errorf("workload: %w", errs[0])
	}

	c := &calibration{cfg: cfg, rep: rep, spec: &spec, compiled: compiled}

	// A/A: one server under two names, compared in interleaved rounds.
	var p50s []float64

	for e := range cfg.AA {
		m, err := c.matrix(ctx, uriA, uriA, cfg.Rounds)
		if err != nil {
			return rep, err
		}

		diffs := c.countVerdicts(m)
		c.logRatios = append(c.logRatios, p50LogRatios(m))
		p50s = append(p50s, trialP50s(m)...)

		progress("A/A %d/%d: %d of %d verdicts said \"difference\"\n", e+1, cfg.AA, diffs, c.lastVerdicts)
	}

	rep.Resolve, rep.ResolveLo, rep.ResolveHi = resolvable(c.logRatios, cfg)

	// A/B: a second server whose delay is set so that the measured p50 is
	// Effect above the first's (the round trip and the client's own time
	// are in both).
	if cfg.URI != "" || len(p50s) == 0 {
		cfg.Effects = nil
	}

	for _, effect := range cfg.Effects {
		pw, err := c.power(ctx, uriA, effect, verdict.Median(p50s), progress)
		rep.Power = append(rep.Power, pw)

		if err != nil {
			return rep, err
		}
	}

	// Gates: RunsPerSide runs of the baseline, then as many of the
	// candidate (the same server): a CI job's two sides.
	for e := range cfg.GatePairs {
		a, err := c.run(ctx, uriA, "", cfg.RunsPerSide)
		if err != nil {
			return rep, err
		}

		b, err := c.run(ctx, uriA, "", cfg.RunsPerSide)
		if err != nil {
			return rep, err
		}

		failed, err := c.gateFails(a, b)
		if err != nil {
			return rep, err
		}

		rep.Gate.Add(failed)

		progress("gate %d/%d: %s\n", e+1, cfg.GatePairs, map[bool]string{true: "failed", false: "passed"}[failed])
	}

	return rep, nil
}

// power runs the A/B experiments of one planted effect: a second test
// server whose delay is set so that the measured p50 is effect above the
// first's (the round trip and the client's own time are in both; p50 is
// the first server's measured median, in µs).
func (c *calibration) power(ctx context.Context, uriA string, effect, p50 float64, progress Progress) (Power, error) {
	cfg := c.cfg
	measured := time.Duration(p50 * float64(time.Microsecond))
	overhead := max(measured-cfg.Delay, 0)
	pw := Power{Effect: effect, Delay: time.Duration(float64(cfg.Delay+overhead)*(1+effect)) - overhead}

	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(pw.Delay)})
	if err != nil {
		return pw, fmt.Errorf("starting the second test server: %w", err)
	}
	defer srv.Close()

	var ratios []float64

	for e := range cfg.AB {
		m, err := c.matrix(ctx, uriA, srv.URI(), cfg.Rounds)
		if err != nil {
			return pw, err
		}

		found, ratio := plantedFound(m, cfg.Judging)
		pw.Found.Add(found)
		ratios = append(ratios, ratio)
		pw.Ratio = verdict.Median(ratios)

		progress("A/B +%.0f%% %d/%d: p50 %.2f× (%s)\n", 100*effect, e+1, cfg.AB, ratio,
			map[bool]string{true: "found", false: "missed"}[found])
	}

	return pw, nil
}

// calibration is a calibration in progress.
type calibration struct {
	cfg Config
	rep *Report
	// spec and compiled are the workload with the trial's duration, the
	// same for every experiment.
	spec         *workload.Spec
	compiled     *bench.Compiled
	lastVerdicts int
	// logRatios are, per A/A experiment, the per-round log ratios of the
	// two names' p50s.
	logRatios [][]float64
}

// matrix runs the workload on uriA (named "a") and uriB (named "b"; none
// when empty) in the given number of interleaved rounds.
func (c *calibration) matrix(ctx context.Context, uriA, uriB string, rounds int) (*result.Matrix, error) {
	res, err := c.run(ctx, uriA, uriB, rounds)
	if err != nil {
		return nil, err
	}

	return res.Matrix, nil
}

// run is matrix's whole result.
func (c *calibration) run(ctx context.Context, uriA, uriB string, rounds int) (*result.Result, error) {
	targetList := []targets.TargetSpec{targets.Existing("a", uriA)}
	if uriB != "" {
		targetList = append(targetList, targets.Existing("b", uriB))
	}

	plan := &bench.Plan{
		Path: "calibration", Base: c.spec, Variants: []*bench.Compiled{c.compiled}, Targets: targetList, Rounds: rounds,
		Options: bench.Options{ServerSelection: 5 * time.Second, NoExplain: true, Version: c.cfg.Version, OwnerKey: c.cfg.OwnerKey},
	}

	out, err := bench.Run(ctx, plan, bench.Hooks{})
	if err != nil {
		return nil, err
	}
	defer out.Close()

	if ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}

	if out.Result.Matrix == nil {
		return nil, fmt.Errorf("the comparison produced no matrix")
	}

	if len(out.Failures) > 0 {
		return nil, fmt.Errorf("a trial failed: %s", out.Failures[0])
	}

	return out.Result, nil
}

// countVerdicts adds the A/A matrix's target verdicts to the report and
// returns how many said "difference".
func (c *calibration) countVerdicts(m *result.Matrix) int {
	diffs, n := 0, 0

	for _, mv := range analysis.MatrixVerdicts(m, c.cfg.Judging) {
		if mv.Target != analysis.CrossTarget {
			continue
		}

		for _, cv := range mv.Variants {
			if cv.Kind == verdict.Reference {
				continue
			}

			n++

			d := cv.Kind == verdict.Difference
			if d {
				diffs++
			}

			c.rep.AA.Add(d)

			byMetric := c.rep.AAByMetric[mv.Metric]
			if byMetric == nil {
				byMetric = &Count{}
				c.rep.AAByMetric[mv.Metric] = byMetric
			}

			byMetric.Add(d)
		}
	}

	c.lastVerdicts = n

	return diffs
}

// gateFails reports whether the gates fail comparing side b's runs with
// side a's: each side is the one cell of its matrix, whose runs are its
// trials, as compare reads a matrix file.
func (c *calibration) gateFails(a, b *result.Result) (bool, error) {
	var files []*analysis.File

	for i, res := range []*result.Result{a, b} {
		label := analysis.Label(i)

		cells, err := analysis.MatrixCells(label, res, func(int) string { return label })
		if err != nil {
			return false, err
		}

		files = append(files, cells[0])
	}

	ops := analysis.AddGateRows(files, analysis.CompareOperations(files, c.cfg.Judging), c.cfg.Gates, c.cfg.Judging)
	_, failures, _ := analysis.CheckGates(files, ops, c.cfg.Gates)

	return failures > 0, nil
}

// p50LogRatios are the per-round log(p50 b / p50 a) of the first
// operation.
func p50LogRatios(m *result.Matrix) []float64 {
	byRound := map[int]map[string]float64{}

	for _, tr := range m.Trials {
		ops := analysis.MeasuredOps(tr.Result)
		if len(ops) == 0 || ops[0].Count == 0 {
			continue
		}

		if byRound[tr.Round] == nil {
			byRound[tr.Round] = map[string]float64{}
		}

		byRound[tr.Round][tr.Target] = ops[0].LatencyUS.P50
	}

	var out []float64

	for _, r := range byRound {
		if a, b := r["a"], r["b"]; a > 0 && b > 0 {
			out = append(out, math.Log(b/a))
		}
	}

	slices.Sort(out)

	return out
}

// trialP50s are every trial's p50 of the first operation, in µs.
func trialP50s(m *result.Matrix) []float64 {
	var out []float64

	for _, tr := range m.Trials {
		if ops := analysis.MeasuredOps(tr.Result); len(ops) > 0 && ops[0].Count > 0 {
			out = append(out, ops[0].LatencyUS.P50)
		}
	}

	return out
}

// plantedFound reports whether the p50 verdict of an A/B matrix is a
// difference with b slower, and the measured ratio.
func plantedFound(m *result.Matrix, j analysis.Judging) (bool, float64) {
	for _, mv := range analysis.MatrixVerdicts(m, j) {
		if mv.Target != analysis.CrossTarget || mv.Metric != "p50" {
			continue
		}

		for _, cv := range mv.Variants {
			if cv.Variant == "b" {
				return cv.Kind == verdict.Difference && cv.Ratio > 1, cv.Ratio
			}
		}
	}

	return false, math.NaN()
}

// resolvable estimates the smallest p50 increase that Rounds rounds detect
// with 80% power, given the A/A spread of per-round log ratios: with
// p(e) the chance that one round's ratio shows an increase e (an A/A log
// ratio plus log(1+e) above 0), the sign test needs at least n−k+1 of n
// rounds to show it. The minimum effect is a floor. Its interval comes
// from resampling the experiments.
func resolvable(experiments [][]float64, cfg Config) (est, lo, hi float64) {
	floor := cfg.Judging.MinEffect
	if floor == 0 {
		floor = verdict.DefaultMinEffect
	}

	floor = max(floor, 0)
	n := cfg.Rounds
	k := verdict.PairedCritical(n, analysis.MatrixAlpha)
	need := n - k + 1

	solve := func(exps [][]float64) float64 {
		var d []float64
		for _, e := range exps {
			d = append(d, e...)
		}

		if len(d) == 0 || k < 1 {
			return math.NaN()
		}

		power := func(e float64) float64 {
			shift := math.Log1p(e)
			above := 0

			for _, x := range d {
				if x+shift > 0 {
					above++
				}
			}

			p := float64(above) / float64(len(d))

			return binomUpper(n, need, p)
		}

		a, b := 0.0, 10.0
		if power(b) < 0.8 {
			return math.Inf(1)
		}

		for range 60 {
			m := (a + b) / 2
			if power(m) >= 0.8 {
				b = m
			} else {
				a = m
			}
		}

		return max(b, floor)
	}

	est = solve(experiments)

	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))

	var boot []float64

	for range 400 {
		sample := make([][]float64, len(experiments))
		for i := range sample {
			sample[i] = experiments[rng.IntN(len(experiments))]
		}

		if v := solve(sample); !math.IsNaN(v) {
			boot = append(boot, v)
		}
	}

	if len(boot) == 0 {
		return est, math.NaN(), math.NaN()
	}

	slices.Sort(boot)

	return est, boot[len(boot)*25/1000], boot[min(len(boot)-1, len(boot)*975/1000)]
}

// binomUpper is P(Binomial(n, p) ≥ k).
func binomUpper(n, k int, p float64) float64 {
	sum := 0.0
	c := 1.0

	for i := 0; i <= n; i++ {
		if i > 0 {
			c = c * float64(n-i+1) / float64(i)
		}

		if i >= k {
			sum += c * math.Pow(p, float64(i)) * math.Pow(1-p, float64(n-i))
		}
	}

	return sum
}
