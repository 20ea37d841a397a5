package runner

import (
	"context"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/base/alarm"
	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/engine/schedule"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// Engine runs the phases of one workload against one database. All workers
// share the one driver client (and so its connection pool) behind DB.
type Engine struct {
	// DB is the workload's database.
	DB *mongo.Database

	// Env generates documents; each worker gets its own Scope.
	Env *datagen.Env

	// Observer receives progress; nil means nobody listens.
	Observer Observer

	// Interval is the period of interval snapshots.
	Interval time.Duration

	// AbortAfter stops a phase in which nothing succeeded for this long.
	AbortAfter time.Duration

	// Timeout bounds each load batch.
	Timeout time.Duration

	// Unreachable stops a phase whose operations fail with network errors
	// and in which nothing succeeded for this long; it should be the
	// client's server selection timeout, the time the driver itself waits
	// for a server before it gives up. Zero leaves only AbortAfter.
	Unreachable time.Duration

	// Client, when not nil, runs the measured phases' operations in an
	// external client stack instead of the Go driver (external.go); DB
	// still serves the load steps.
	Client *client.Adapter

	// StartAt, when set, is the wall-clock instant the next RunPhase
	// starts at: it waits until then and takes StartAt as the phase's
	// start, so that the shards of a distributed run (package bench) start
	// measuring at the same instant and their intervals line up. A phase
	// started after StartAt starts at once.
	StartAt time.Time

	// Sink, when set, receives every closed interval and growth block of
	// every phase as it happens (see IntervalSink), so a run can persist
	// its measurements as it goes instead of holding them to the end.
	Sink IntervalSink

	// KeepIntervals bounds the closed intervals each phase's registries
	// keep in memory (see metrics.Registry.Retain); 0 keeps them all. A
	// run with a Sink keeps only a few: the sink has the others.
	KeepIntervals int

	// NewAlarm makes the wake-up an open-loop scheduler uses for the last
	// fineWait before a due time. Its lateness is in every response time
	// measured from the due time, and the runtime's timers are up to a
	// millisecond late on Linux (package alarm), so runs pass alarm.New.
	// Nil uses the runtime's timers: the only ones testing/synctest's fake
	// clock moves.
	NewAlarm func() (alarm.Alarm, error)
}

// fineAlarm is the scheduler's precise wake-up: NewAlarm's, or the
// runtime's timers when there is none or it could not be made.
func (e *Engine) fineAlarm() alarm.Alarm {
	if e.NewAlarm != nil {
		if a, err := e.NewAlarm(); err == nil {
			return a
		}
	}

	return alarm.NewTimer()
}

func (e *Engine) observer() Observer {
	if e.Observer == nil {
		return nopObserver{}
	}

	return e.Observer
}

// Load inserts the documents of one load step with insertMany batches,
// concurrently. It stops at the first failed batch: measuring a
// half-loaded collection would be misleading.
func (e *Engine) Load(ctx context.Context, l *op.Load) *PhaseResult {
	spec := l.Spec
	insert := l.Bind(e.DB, func(ctx context.Context) (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, e.Timeout)
	})

	var remaining atomic.Int64
	remaining.Store(spec.Documents)

	p := Phase{Name: l.Name(), Model: "load", Concurrency: spec.Concurrency, Docs: spec.Documents}
	cfg := driveConfig{
		phase: p, ops: []string{l.Name()}, interval: e.Interval,
		abortAfter: e.AbortAfter, unreachable: e.Unreachable, obs: e.observer(),
		sink: e.Sink, keep: e.KeepIntervals,
	}

	res := drive(ctx, cfg, func(ctx context.Context, pr *phaseRun) {
		workers(spec.Concurrency, func(w int) {
			s := e.Env.NewScope(w)
			h := pr.newHandles()

			for ctx.Err() == nil {
				left := remaining.Add(-int64(spec.BatchSize))
				n := int64(spec.BatchSize)

				if left < 0 {
					n += left
				}

				if n <= 0 {
					return
				}

				start := time.Now()
				docs, err := insert(ctx, s, int(n))
				pr.record(ctx, h, 0, start, start, time.Now(), docs, err)

				if err != nil && ctx.Err() == nil {
					pr.cancel(&abortError{reason: "a load batch failed: " + err.Error()})
					return
				}
			}
		})
	})

	e.observer().PhaseEnded(p, res)

	return res
}

// PhasePlan is a phase to run: its spec and the workload's compiled
// operations, which the phase refers to by name.
type PhasePlan struct {
	// Spec is the phase as written (defaults applied).
	Spec *workload.Phase

	// Mix names the operations of the phase's weighted mix.
	Mix []string

	// Ops are all of the workload's compiled operations.
	Ops []*op.Operation
}

// RunPhase runs one measured phase with its load model's executor and its
// background jobs.
func (e *Engine) RunPhase(ctx context.Context, plan PhasePlan) *PhaseResult {
	sp := plan.Spec

	p := Phase{
		Name:        sp.Name,
		Model:       sp.Model(),
		Concurrency: sp.Concurrency,
		Warmup:      sp.Warmup.D(),
		Duration:    sp.Duration.D(),
		MaxOps:      sp.MaxOperations,
	}

	construct, ok := executors()[p.Model]
	if e.Client != nil {
		construct = newExternal // validation allows closed loops only
	}
	if !ok {
		// Unreachable for a validated spec (every model has an
		// executor, which a test checks); refused rather than run wrong.
		out := &PhaseResult{Phase: p, Status: StatusAborted, Reason: CheckModel(p.Model).Error()}
		e.observer().PhaseEnded(p, out)

		return out
	}

	weights := map[string]float64{}
	for _, o := range plan.Ops {
		weights[o.Name()] = o.Weight
	}

	b := e.bind(plan.Ops, usedOperations(plan), sp.Sequence)
	res := &PhaseResult{}
	ps := &phaseSetup{engine: e, spec: sp, mix: plan.Mix, bound: b, weights: weights, phase: &p, result: res}
	ex := construct(ps)

	var jobs []*backgroundJob
	for i := range sp.Background {
		jobs = append(jobs, newBackgroundJob(&sp.Background[i], b))
	}

	cfg := driveConfig{
		phase:      p,
		ops:        b.names,
		units:      b,
		service:    ps.service || len(jobs) > 0,
		interval:   e.Interval,
		abortAfter: e.AbortAfter,
		obs:        e.observer(),

		unreachable: e.Unreachable,
		startAt:     e.StartAt,
		sink:        e.Sink,
		keep:        e.KeepIntervals,
		planned:     res,
		jobs:        jobs,
		setup: func(pr *phaseRun) {
			ex.Setup(pr)

			for _, j := range jobs {
				j.attach(pr)
			}
		},
	}

	run := ex.Run
	if len(jobs) > 0 {
		run = e.withBackground(run, jobs, b)
	}

	out := drive(ctx, cfg, run)

	out.Schedule, out.Targets, out.Blocks, out.Starved = res.Schedule, res.Targets, res.Blocks, res.Starved
	typical := typicalService(out.Service)

	for _, j := range jobs {
		j.ol.stats.finish(j.spec.MaxInFlight, typical)
		out.Background = append(out.Background, j.result())
	}

	if out.Schedule != nil {
		out.Schedule.finish(sp.MaxInFlight, typical)
	}

	e.observer().PhaseEnded(out.Phase, out)

	return out
}

// usedOperations names the operations a phase runs: its weighted mix (only
// when it has neither a sequence nor blocks, else its operations would show
// as idle rows), its sequence, its blocks' steps and its background jobs.
func usedOperations(plan PhasePlan) map[string]bool {
	sp := plan.Spec
	used := map[string]bool{}

	use := func(names []string) {
		for _, n := range names {
			used[n] = true
		}
	}

	if len(sp.Sequence) == 0 && sp.Blocks == nil {
		use(plan.Mix)
	}

	use(sp.Sequence)

	for _, b := range sp.Background {
		used[b.Operation] = true
	}

	if sp.Blocks != nil {
		for _, st := range sp.Blocks.Steps {
			use(st.Operations)
			use(st.Sequence)
		}
	}

	return used
}

// typicalService is the largest of the operations' median service times
// (nil: none), the yardstick against which a stall is told from a server
// that is merely slow.
func typicalService(reg *metrics.Registry) time.Duration {
	var d time.Duration

	if reg == nil {
		return d
	}

	for _, o := range reg.Totals() {
		// Units are made of the operations: their medians are not one
		// operation's service time.
		if o.Count > 0 && o.Unit == "" {
			d = max(d, time.Duration(o.Hist.ValueAtQuantile(50))*time.Microsecond)
		}
	}

	return d
}

// planOffset clamps an offset into the stages, so that the tick at the very
// end of a ramp reports the last stage's target rather than "no plan".
func planOffset(at, total time.Duration) time.Duration {
	if at >= total {
		return total - 1
	}

	return at
}

func buildStages(sp *workload.Phase) schedule.Stages {
	start := sp.Rate.PerSecond()
	if sp.LoadModel().RampsConcurrency {
		start = float64(sp.Concurrency)
		if sp.Concurrency == 0 {
			start = 1
		}
	}

	st := make([]schedule.Stage, len(sp.Stages))
	for i, s := range sp.Stages {
		target := s.Rate.PerSecond()
		if sp.LoadModel().RampsConcurrency {
			target = float64(s.Concurrency)
		}

		shape := schedule.Linear
		if s.Shape == "step" {
			shape = schedule.Step
		}

		st[i] = schedule.Stage{Duration: s.Duration.D(), Target: target, Shape: shape}
	}

	return schedule.NewStages(start, st...)
}

// nopObserver ignores progress.
type nopObserver struct{}

func (nopObserver) PhaseStarted(Phase)                              {}
func (nopObserver) Warmup(Phase, time.Duration)                     {}
func (nopObserver) Interval(Phase, metrics.Interval, time.Duration) {}
func (nopObserver) PhaseEnded(Phase, *PhaseResult)                  {}
