package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
	"github.com/mongobench/mongobench/internal/stats/threshold"
	"github.com/mongobench/mongobench/internal/targets"
)

// Config is a capacity measurement: the plan `run` would carry out (one
// variant, at most one target), the objectives and how to step.
type Config struct {
	// Plan is the workload as package plan prepared it for `run`.
	Plan *bench.Plan

	// Hooks connect the steps' runs to the command line, as for `run`.
	Hooks bench.Hooks

	// SLO are the objectives, at least one.
	SLO []SLO

	// Search bounds the rate search.
	Search SearchOptions

	// StepDuration is the shortest measured time of a step; a step at a
	// low rate lasts longer, up to MaxStepDuration, so that the strictest
	// percentile objective has a confidence interval (StepLength).
	StepDuration, MaxStepDuration time.Duration

	// Warmup precedes each step's measurement.
	Warmup time.Duration

	// Workers, when not empty, asks for a closed-loop sweep over these
	// worker counts after the search.
	Workers []int

	// Fit fits the Universal Scalability Law to the sweep's points
	// (workers, ops/s); nil is FitUSL.
	Fit func(points [][2]float64) (*result.USLFit, error)

	// CPU is the process's CPU time so far; nil is ProcessCPU.
	CPU func() time.Duration

	// Cores is the number of cores the process may use; 0 is
	// runtime.NumCPU.
	Cores int

	// Progress is told about every step as it ends; nil says nothing.
	Progress func(result.CapacityStep)
}

// minTail is how many samples beyond the strictest percentile a step
// aims for: with ten, its order-statistic confidence interval exists.
const minTail = 10

// StepLength is how long a step at rate must measure for the strictest
// percentile objective to have enough samples beyond it (minTail), within
// [min, max].
func StepLength(slos []SLO, rate float64, minD, maxD time.Duration) time.Duration {
	d := minD

	for _, s := range slos {
		if s.Condition.Metric.Kind != threshold.Percentile || s.Condition.Metric.Percent >= 100 || rate <= 0 {
			continue
		}

		need := minTail / (1 - s.Condition.Metric.Percent/100) / rate
		d = max(d, time.Duration(math.Ceil(need*1e3))*time.Millisecond)
	}

	return min(d, maxD)
}

// Phase returns the phase a capacity measurement steps: the workload's
// only measured phase. A workload of several phases, growth blocks or
// background jobs is refused: a step must be one load at one rate.
func Phase(spec *workload.Spec) (*workload.Phase, error) {
	phases, _ := spec.PhaseList()
	if len(phases) != 1 {
		return nil, fmt.Errorf("%s has %d phases: a capacity search steps one phase; keep the one to measure", spec.Name, len(phases))
	}

	p := phases[0]

	switch {
	case p.Blocks != nil:
		return nil, fmt.Errorf("%s: the phase grows blocks; a capacity search needs a phase of operations at a rate", spec.Name)
	case len(p.Background) > 0:
		return nil, fmt.Errorf("%s: the phase has background jobs, whose load would not follow the steps; remove them", spec.Name)
	}

	return p, nil
}

// Run launches the target once, searches the rate, sweeps the workers
// when asked, and returns the results: the confirmation run's (or the last
// step's), with the capacity section.
func Run(ctx context.Context, cfg Config) (*result.Result, error) {
	p := cfg.Plan
	if len(p.Variants) != 1 || len(p.Targets) > 1 || p.Rounds > 1 {
		return nil, &InputError{Msg: "a capacity search measures one workload on one target: remove the variants, the extra targets and the rounds"}
	}

	ph, err := Phase(p.Variants[0].Spec)
	if err != nil {
		return nil, &InputError{Msg: err.Error()}
	}

	if err := checkShard(p.Options.Shard, cfg.Workers); err != nil {
		return nil, err
	}

	ts := targets.DefaultSpec(p.Options.URI)
	if len(p.Targets) == 1 {
		ts = p.Targets[0]
	}

	l, err := targets.Launch(ctx, ts, targets.LaunchOptions{Logger: cfg.Hooks.Logger})
	if err != nil {
		return nil, fmt.Errorf("target %q: %s", ts.Name, redact.Error(err, ts.URI))
	}

	unhook := func() {}
	if cfg.Hooks.OnHardExit != nil {
		unhook = cfg.Hooks.OnHardExit(func() { _ = l.Stop() })
	}

	defer func() {
		_ = l.Stop()
		unhook()
	}()

	if cfg.Hooks.Messages != nil && l.Description != "" {
		cfg.Hooks.Messages.Printf("Target %s: %s\n", ts.Name, l.Description)
	}

	kind, _ := targets.LookupKind(ts.Kind)
	s := &session{cfg: cfg, phase: ph, uri: l.URI, external: kind.Existing, pool: l.MaxPoolSize}

	if s.cfg.CPU == nil {
		s.cfg.CPU = ProcessCPU
	}

	if s.cfg.Cores <= 0 {
		s.cfg.Cores = runtime.NumCPU()
	}

	if sh := p.Options.Shard; sh != nil {
		if s.coord, err = openCoordination(ctx, l.URI, p.Variants[0].Spec, *sh, p.Options.OwnerKey); err != nil {
			return nil, err
		}

		defer s.coord.close(cfg.Hooks.Messages)

		if sh.Index != 0 {
			return s.follow(ctx, ts)
		}

		if cfg.Hooks.Messages != nil {
			cfg.Hooks.Messages.Printf("Shard 0/%d: searching the aggregate rate, each shard offering its share; the others follow through database %q\n",
				sh.Count, CoordinationDatabase(p.Variants[0].Spec.Database))
		}
	}

	opts := cfg.Search
	opts.Progress = cfg.Progress

	capa, err := Search(ctx, opts, s.rateStep)
	if err == nil && len(cfg.Workers) > 0 && ctx.Err() == nil {
		err = s.sweep(ctx, capa)
	}

	stopped := err != nil && ctx.Err() != nil

	if s.coord != nil {
		_, k := s.reported()

		failure := err
		if stopped {
			failure = errors.New("shard 0 was interrupted")
		}

		s.coord.finish(s.steps, k, failure)
	}

	if err != nil && !stopped {
		return nil, err
	}

	if capa == nil { // Search checks its options before any step
		capa = &result.Capacity{Broke: -1}
	}

	for _, sl := range cfg.SLO {
		capa.SLO = append(capa.SLO, sl.String())
	}

	if sh := p.Options.Shard; sh != nil {
		capa.Shards = sh.Count
	}

	res, _ := s.reported()
	if res == nil {
		if stopped {
			return nil, fmt.Errorf("%w before its first step measured anything: no results", ErrInterrupted)
		}

		return nil, errors.New("no step ran")
	}

	if stopped {
		markInterrupted(capa)

		res.Status, res.StatusReason = result.StatusInterrupted, interruptedReason
	}

	res.Capacity = capa
	res.Target.Kind = ts.Kind

	if l.Description != "" {
		res.Target.Notes = append([]string{l.Description}, res.Target.Notes...)
	}

	if stopped {
		return res, ErrInterrupted
	}

	return res, nil
}

// ErrInterrupted is returned, with the results of the steps done so far,
// when the context was cancelled (Ctrl-C, SIGTERM) during a search or a
// sweep: the caller writes those results, whose status is interrupted, and
// fails as an interrupted run does.
var ErrInterrupted = errors.New("the capacity search was interrupted")

// interruptedReason is the results' status reason, as `run` words it.
const interruptedReason = "interrupted by the user"

// markInterrupted turns what a stopped search or sweep holds into its
// results: the steps that ended stay, judged; the step that was running
// when the stop came is left out (it measured part of its time, and a
// short step's percentile says nothing); no rate is claimed, since none
// was confirmed by a search that ended, and the verdict says what is
// known so far. A search that had finished keeps its rate and interval:
// only its sweep was cut short, and the fit is not made from part of it.
func markInterrupted(c *result.Capacity) {
	c.Interrupted = true

	if c.Verdict != "" { // the search had finished: the sweep was stopped
		c.Verdict += fmt.Sprintf("; interrupted during the concurrency sweep after %d of its steps (no fit)", len(c.Sweep))
		c.Fit = nil

		return
	}

	c.MaxRate, c.MaxRateCI, c.Confirmed, c.Broke = 0, [2]float64{}, false, lowestBreak(c.Steps)

	var passed float64

	for _, st := range c.Steps {
		if st.Passed {
			passed = max(passed, st.OfferedRate)
		}
	}

	v := fmt.Sprintf("interrupted after %d steps, before a rate was confirmed", len(c.Steps))
	if passed > 0 {
		v += fmt.Sprintf("; the highest rate that met the SLO so far was %.1f ops/s (unconfirmed)", passed)
	}

	if c.Broke >= 0 {
		b := c.Steps[c.Broke]
		v += fmt.Sprintf("; the SLO broke at %.1f ops/s (%s: %s)", b.OfferedRate, b.Cause, b.Why)
	}

	c.Verdict = v
}

// InputError is a capacity search the user's input makes impossible (exit
// code 2 on the command line).
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// session runs steps through package bench on the launched target.
type session struct {
	cfg   Config
	phase *workload.Phase
	uri   string
	pool  uint64

	// external is true when the server runs outside this process (a
	// deployment given by --uri), so that the process's CPU is the
	// client's alone.
	external bool

	// confirm is the results of the last passing confirmation run,
	// lastRate those of the last rate step, last those of the last step;
	// confirmK, lastRateK and lastK their steps' numbers.
	confirm, lastRate, last    *result.Result
	confirmK, lastRateK, lastK int

	// steps is the number of steps begun; in a sharded search, the number
	// of the next instruction.
	steps int

	// coord, in a sharded search, is this shard's end of the
	// coordination through the target (shard.go); nil otherwise.
	coord *coordinator
}

// reported is the results Run reports, with its step's number (-1 for
// none): the confirmation run's, else the last rate step's, else the last
// step's.
func (s *session) reported() (*result.Result, int) {
	switch {
	case s.confirm != nil:
		return s.confirm, s.confirmK
	case s.lastRate != nil:
		return s.lastRate, s.lastRateK
	case s.last != nil:
		return s.last, s.lastK
	}

	return nil, -1
}

// rateStep runs one open-loop step.
func (s *session) rateStep(ctx context.Context, kind string, rate float64) (result.CapacityStep, error) {
	in := coordDoc{
		Kind: kind, Rate: rate,
		DurationNS: int64(StepLength(s.cfg.SLO, rate, s.cfg.StepDuration, s.cfg.MaxStepDuration)),
		WarmupNS:   int64(s.cfg.Warmup),
	}

	res, o, parts, err := s.measure(ctx, in)
	if err != nil {
		return result.CapacityStep{}, err
	}

	o.Offered = rate
	st := JudgeShards(kind, o, parts, s.cfg.SLO)
	s.lastRate, s.lastRateK = res, s.lastK

	if kind == result.CapacityStepConfirm && st.Passed {
		s.confirm, s.confirmK = res, s.lastK
	}

	return st, nil
}

// setPhase makes the stepped phase the step an instruction describes: an
// open-loop rate, or closed-loop workers, measured for its length. Every
// shard of a sharded search sets it from the same instruction, so that
// their workloads (whose hash the shards compare at every step's barrier)
// are the same.
func (s *session) setPhase(in coordDoc) {
	ph := s.phase

	if in.Kind == result.CapacityStepWorkers {
		ph.Rate, ph.Stages = 0, nil
		ph.Concurrency = in.Workers
	} else {
		ph.Rate, ph.Stages, ph.Blocks = workload.Rate(in.Rate), nil, nil

		if ph.MaxInFlight == 0 {
			ph.MaxInFlight = workload.DefaultMaxInFlight
		}

		if ph.MaxBacklog == 0 {
			ph.MaxBacklog = workload.DefaultMaxBacklog
		}
	}

	ph.Duration = workload.Duration(time.Duration(in.DurationNS))
	ph.Warmup = workload.Duration(time.Duration(in.WarmupNS))
}

// measure runs one step as an instruction describes it and returns its
// results (this process's) and observation; in a sharded search (shard 0)
// it first tells the other shards, and the observation is then the merge
// of every shard's, parts the shards' own (with their offered shares), in
// shard order.
func (s *session) measure(ctx context.Context, in coordDoc) (*result.Result, Observation, []Observation, error) {
	k := s.steps
	s.steps++

	s.setPhase(in)

	if s.coord != nil {
		if err := s.coord.instruct(ctx, k, in); err != nil {
			return nil, Observation{}, nil, err
		}
	}

	res, o, err := s.runStep(ctx)
	if err != nil {
		return nil, Observation{}, nil, err
	}

	s.lastK = k

	if s.coord == nil {
		return res, o, nil, nil
	}

	parts, err := s.coord.gather(ctx, k, o)
	if err != nil {
		return nil, Observation{}, nil, err
	}

	n := len(parts)
	for i := range parts {
		parts[i].Offered = in.Rate / float64(n)
		parts[i].Workers = int(workload.Split(int64(in.Workers), i, n))
	}

	merged, err := MergeObservations(parts)
	if err != nil {
		return nil, Observation{}, nil, fmt.Errorf("merging the shards' observations of step %d: %w", k, err)
	}

	return res, merged, parts, nil
}

// follow is the search of a shard other than 0: it runs the steps shard 0
// publishes, publishing its observation of each, until shard 0 ends the
// search; it returns the results of the step shard 0 reports, marked as a
// follower's.
func (s *session) follow(ctx context.Context, ts targets.TargetSpec) (*result.Result, error) {
	sh := s.coord.shard
	kept := map[int]*result.Result{}

	for k := 0; ; k++ {
		in, err := s.coord.next(ctx, k)
		if err != nil {
			return nil, err
		}

		if in.End {
			s.coord.bye(ctx)

			if in.Error != "" {
				return nil, fmt.Errorf("shard 0 ended the search: %s", in.Error)
			}

			res := kept[in.Report]
			if res == nil {
				return nil, fmt.Errorf("shard 0 ended the search reporting step %d, which this shard did not run", in.Report)
			}

			res.CapacityFollower = &result.CapacityFollower{Shard: sh.Index, Count: sh.Count, Steps: k}
			res.Target.Kind = ts.Kind

			return res, nil
		}

		if m := s.cfg.Hooks.Messages; m != nil {
			what := fmt.Sprintf("rate %.1f/s", in.Rate)
			if in.Kind == result.CapacityStepWorkers {
				what = fmt.Sprintf("%d workers", in.Workers)
			}

			m.Printf("Shard %d/%d: step %d (%s, %s in all), following shard 0\n", sh.Index, sh.Count, k, in.Kind, what)
		}

		s.setPhase(*in)

		// Shard 0 may fail its step (its set-up, say) while this one
		// waits inside it for shard 0's ready marker or barrier: the end
		// of the search it then publishes stops this step at once.
		stepCtx, stop := s.coord.watchEnd(ctx, k+1)
		res, o, stepErr := s.runStep(stepCtx)

		stop()

		if cause := context.Cause(stepCtx); stepErr != nil && ctx.Err() == nil && !errors.Is(cause, context.Canceled) {
			s.coord.bye(ctx)
			return nil, cause
		}

		// The failure is published too, so that shard 0 stops at once
		// instead of waiting --shard-wait for an observation.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err = s.coord.observed(pctx, k, o, stepErr)

		cancel()

		switch {
		case stepErr != nil:
			return nil, stepErr
		case err != nil:
			return nil, err
		}

		kept[k] = res
	}
}

// sweep runs the closed-loop steps and fits them.
func (s *session) sweep(ctx context.Context, capa *result.Capacity) error {
	var points [][2]float64

	for _, n := range s.cfg.Workers {
		in := coordDoc{Kind: result.CapacityStepWorkers, Workers: n, DurationNS: int64(s.cfg.StepDuration), WarmupNS: int64(s.cfg.Warmup)}

		_, o, parts, err := s.measure(ctx, in)
		if err != nil {
			return err
		}

		o.Workers = n
		st := JudgeShards(result.CapacityStepWorkers, o, parts, s.cfg.SLO)
		capa.Sweep = append(capa.Sweep, st)

		if s.cfg.Progress != nil {
			s.cfg.Progress(st)
		}

		if st.Cause == CauseClient {
			capa.Verdict += fmt.Sprintf("; the sweep stopped at %d workers, where the client was the limit", n)
			break
		}

		points = append(points, [2]float64{float64(n), float64(st.Count) / max(st.DurationS, 1e-9)})
	}

	if len(points) == 0 {
		return nil
	}

	if s.cfg.Fit == nil {
		s.cfg.Fit = FitUSL
	}

	fit, err := s.cfg.Fit(points)
	if err != nil {
		capa.Fit = &result.USLFit{Reason: err.Error()}
		return nil //nolint:nilerr // a fit the data do not support is a finding, not a failed run
	}

	capa.Fit = fit

	return nil
}

// runStep runs the stepped phase once through bench, on the launched
// target, and returns its results and what its main phase measured.
func (s *session) runStep(ctx context.Context) (*result.Result, Observation, error) {
	p := *s.cfg.Plan
	p.Targets = nil
	p.Options.URI = s.uri
	p.Options.NoExplain = true
	p.Options.StatsInterval = 0
	p.Options.RunLog, p.Options.TrialLogs = "", ""

	// A shard's generators are shared once per run (their counters moved
	// to the shard's positions, continued from shard 0's load): each step
	// of a sharded search is a run of its own, with generators compiled
	// afresh.
	if s.coord != nil {
		fresh, errs := bench.Compile(p.Variants[0].Spec)
		if len(errs) > 0 {
			return nil, Observation{}, fmt.Errorf("compiling the workload for a step: %w", errors.Join(errs...))
		}

		p.Variants = []*bench.Compiled{fresh}
	}

	if s.pool > 0 {
		p.Options.URI = withOption(p.Options.URI, "maxPoolSize", s.pool)
	}

	// The driver opens two connections at a time by default; a step that
	// needs more (its rate × latency) would wait for them, counted as the
	// client's lag, while a server that slows with load also slows their
	// handshakes. A service at steady state has its connections open.
	p.Options.URI = withOption(p.Options.URI, "maxConnecting", uint64(min(max(s.phase.MaxInFlight, s.phase.Concurrency), maxConnecting)))

	meter := &cpuMeter{cpu: s.cfg.CPU}
	hooks := s.cfg.Hooks

	inner := hooks.Observer
	hooks.Observer = func() runner.Observer {
		meter.inner = nil
		if inner != nil {
			meter.inner = inner()
		}

		return meter
	}

	if closer := hooks.CloseObserver; closer != nil {
		hooks.CloseObserver = func(runner.Observer) { closer(meter.inner) }
	}

	out, err := bench.Run(ctx, &p, hooks)
	if err != nil {
		if ctx.Err() != nil {
			return nil, Observation{}, fmt.Errorf("interrupted: %w", context.Cause(ctx))
		}

		return nil, Observation{}, err
	}

	out.Close()

	res := out.Result
	s.last = res
	s.lastK = s.steps - 1

	if ctx.Err() != nil {
		return nil, Observation{}, fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}

	main := res.MainPhase()
	if main == nil || res.Status != result.StatusCompleted {
		return nil, Observation{}, fmt.Errorf("a step's run did not complete: %s", res.StatusReason)
	}

	o := Observation{Ops: main.Operations, DurationS: main.DurationS, Schedule: main.Schedule}
	if s.external && meter.wall > 0 {
		o.ClientCPU = meter.used.Seconds() / meter.wall.Seconds() / float64(s.cfg.Cores)
	}

	return res, o, nil
}

// cpuMeter measures the process's CPU over the measured phase (warm-up
// included, set-up and loading not), passing progress on to the caller's
// observer. It is not a runner.BlockObserver: a stepped phase has no
// growth blocks (Phase refuses them).
type cpuMeter struct {
	cpu   func() time.Duration
	inner runner.Observer

	start      time.Time
	startCPU   time.Duration
	used, wall time.Duration
}

func (m *cpuMeter) PhaseStarted(p runner.Phase) {
	if p.Model != loadModel {
		m.start, m.startCPU = time.Now(), m.cpu()
	}

	if m.inner != nil {
		m.inner.PhaseStarted(p)
	}
}

func (m *cpuMeter) Warmup(p runner.Phase, remaining time.Duration) {
	if m.inner != nil {
		m.inner.Warmup(p, remaining)
	}
}

func (m *cpuMeter) Interval(p runner.Phase, iv metrics.Interval, elapsed time.Duration) {
	if m.inner != nil {
		m.inner.Interval(p, iv, elapsed)
	}
}

func (m *cpuMeter) PhaseEnded(p runner.Phase, r *runner.PhaseResult) {
	if p.Model != loadModel && !m.start.IsZero() {
		m.used, m.wall = m.cpu()-m.startCPU, time.Since(m.start)
	}

	if m.inner != nil {
		m.inner.PhaseEnded(p, r)
	}
}

// loadModel is the model name package runner gives loading phases.
const loadModel = "load"

// maxConnecting bounds the connections a step's client opens at once.
const maxConnecting = 100

// withOption adds a connection string option unless the string sets it.
func withOption(uri, name string, v uint64) string {
	if strings.Contains(strings.ToLower(uri), strings.ToLower(name)+"=") {
		return uri
	}

	sep := "?"
	if strings.Contains(uri, "?") {
		sep = "&"
	} else if !strings.Contains(strings.TrimPrefix(strings.TrimPrefix(uri, "mongodb+srv://"), "mongodb://"), "/") {
		sep = "/?"
	}

	return fmt.Sprintf("%s%s%s=%d", uri, sep, name, v)
}
