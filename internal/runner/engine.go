package runner

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/datagen"
	"github.com/mongobench/mongobench/internal/metrics"
	"github.com/mongobench/mongobench/internal/op"
	"github.com/mongobench/mongobench/internal/schedule"
	"github.com/mongobench/mongobench/internal/workload"
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

// bound is the subset of operations a phase uses, bound to the database.
// Its order is the registry's: workload order.
type bound struct {
	names    []string
	funcs    []op.Func
	timeouts []time.Duration
	index    map[string]int
}

func (e *Engine) bind(all []*op.Operation, used map[string]bool) *bound {
	b := &bound{index: map[string]int{}}

	for _, o := range all {
		if !used[o.Name()] {
			continue
		}

		b.index[o.Name()] = len(b.names)
		b.names = append(b.names, o.Name())
		b.funcs = append(b.funcs, o.BindUntimed(e.DB))
		b.timeouts = append(b.timeouts, o.Timeout)
	}

	return b
}

// RunPhase runs one measured phase with its load model and background jobs.
func (e *Engine) RunPhase(ctx context.Context, plan PhasePlan) *PhaseResult {
	sp := plan.Spec
	weights := map[string]float64{}
	used := map[string]bool{}

	for _, o := range plan.Ops {
		weights[o.Name()] = o.Weight
	}

	use := func(names []string) {
		for _, n := range names {
			used[n] = true
		}
	}

	// The weighted mix only matters when the phase has neither a sequence
	// nor blocks; otherwise its operations would show as idle rows.
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

	b := e.bind(plan.Ops, used)

	p := Phase{
		Name:        sp.Name,
		Model:       sp.Model(),
		Concurrency: sp.Concurrency,
		Warmup:      sp.Warmup.D(),
		Duration:    sp.Duration.D(),
		MaxOps:      sp.MaxOperations,
	}

	var stages schedule.Stages
	if len(sp.Stages) > 0 {
		stages = buildStages(sp)
		p.Duration = stages.Duration()
	}

	if sp.OpenLoop() {
		p.Concurrency = sp.MaxInFlight
	}

	res := &PhaseResult{}
	cfg := driveConfig{
		phase:      p,
		ops:        b.names,
		service:    sp.OpenLoop() || len(sp.Background) > 0,
		interval:   e.Interval,
		abortAfter: e.AbortAfter,
		obs:        e.observer(),

		unreachable: e.Unreachable,
	}

	var (
		jobs  []*backgroundJob
		phase executor
	)

	switch sp.Model() {
	case workload.ModelBlocks:
		phase = e.blocksExecutor(sp, b, weights, res)
	case workload.ModelRate, workload.ModelRampingRate:
		var pacer schedule.Pacer = schedule.Constant{Rate: sp.Rate.PerSecond()}
		if len(sp.Stages) > 0 {
			pacer = stages
		}

		ol := &openLoop{pacer: pacer, slots: sp.MaxInFlight, backlog: sp.MaxBacklog}
		res.Schedule = &ol.stats
		m := newMix(b, plan.Mix, sp.Sequence, weights)
		phase = func(ctx context.Context, pr *phaseRun) { e.openLoop(ctx, pr.issueCtx, pr, ol, m, b, 0) }

		cfg.setup = func(pr *phaseRun) {
			start := pr.measureFrom.Add(-p.Warmup)
			pr.onTick = append(pr.onTick, func(_ metrics.Interval, now time.Time) {
				rate := sp.Rate.PerSecond()
				if len(sp.Stages) > 0 {
					rate = stages.RateAt(planOffset(now.Sub(start), stages.Duration()))
				}

				res.Targets = append(res.Targets, Target{Elapsed: now.Sub(pr.measureFrom), Rate: rate})
			})
		}
	default:
		m := newMix(b, plan.Mix, sp.Sequence, weights)
		n := sp.Concurrency

		var g *gate
		if len(sp.Stages) > 0 {
			g = newGate(int(stages.Start()))
			n = maxConcurrency(stages)
		}

		phase = func(ctx context.Context, pr *phaseRun) { e.closedLoop(ctx, pr, n, g, m, b) }

		if g != nil {
			cfg.setup = func(pr *phaseRun) {
				pr.onTick = append(pr.onTick, func(_ metrics.Interval, now time.Time) {
					// The plan at the tick's own time, not the gate's value
					// when the hook runs, which may be later.
					at := planOffset(now.Sub(pr.measureFrom), stages.Duration())
					res.Targets = append(res.Targets, Target{Elapsed: now.Sub(pr.measureFrom), Concurrency: stages.ConcurrencyAt(at)})
				})
			}

			inner := phase
			phase = func(ctx context.Context, pr *phaseRun) {
				stop := g.follow(pr.issueCtx, stages, pr.measureFrom)
				defer stop()

				inner(ctx, pr)
			}
		}
	}

	for i := range sp.Background {
		jobs = append(jobs, newBackgroundJob(&sp.Background[i], b))
	}

	if len(jobs) > 0 {
		setup := cfg.setup
		cfg.setup = func(pr *phaseRun) {
			if setup != nil {
				setup(pr)
			}

			for _, j := range jobs {
				j.attach(pr)
			}
		}

		inner := phase
		phase = func(ctx context.Context, pr *phaseRun) {
			bgCtx, stopJobs := context.WithCancel(pr.issueCtx)
			done := make(chan struct{})

			go func() {
				defer close(done)

				// Scopes of their own, numbered apart from the phase's
				// workers, so their data does not repeat the foreground's.
				workers(len(jobs), func(i int) { e.runBackground(bgCtx, pr, jobs[i], b, 10_000+1000*i) })
			}()

			inner(ctx, pr)
			stopJobs()
			<-done
		}
	}

	out := drive(ctx, cfg, phase)

	out.Schedule, out.Targets, out.Blocks = res.Schedule, res.Targets, res.Blocks
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

// typicalService is the largest of the operations' median service times
// (nil: none), the yardstick against which a stall is told from a server
// that is merely slow.
func typicalService(reg *metrics.Registry) time.Duration {
	var d time.Duration

	if reg == nil {
		return d
	}

	for _, o := range reg.Totals() {
		if o.Count > 0 {
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
	if sp.Model() == workload.ModelRampingConcurrency {
		start = float64(sp.Concurrency)
		if sp.Concurrency == 0 {
			start = 1
		}
	}

	st := make([]schedule.Stage, len(sp.Stages))
	for i, s := range sp.Stages {
		target := s.Rate.PerSecond()
		if sp.Model() == workload.ModelRampingConcurrency {
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

func maxConcurrency(s schedule.Stages) int {
	n := s.Start()
	for _, st := range s.Stages() {
		n = max(n, st.Target)
	}

	return max(1, int(n))
}

// mix picks an iteration's operations: one by weight, or a sequence.
type mix struct {
	idx []int
	cum []float64
	seq bool

	// untracked operations take no max_operations ticket: background jobs
	// run beside the counted work.
	untracked bool
}

func newMix(b *bound, names, sequence []string, weights map[string]float64) *mix {
	if len(sequence) > 0 {
		m := &mix{seq: true}
		for _, n := range sequence {
			m.idx = append(m.idx, b.index[n])
		}

		return m
	}

	m := &mix{}
	total := 0.0

	// Registry order, so that the mix does not depend on how names were
	// listed.
	for _, name := range b.names {
		if !slices.Contains(names, name) {
			continue
		}

		total += weights[name]
		m.idx = append(m.idx, b.index[name])
		m.cum = append(m.cum, total)
	}

	return m
}

// pick returns the operations of one iteration, appended to buf.
func (m *mix) pick(s *datagen.Scope, buf []int) []int {
	if m.seq {
		return append(buf, m.idx...)
	}

	if len(m.idx) == 1 {
		return append(buf, m.idx[0])
	}

	x := s.Float64() * m.cum[len(m.cum)-1]

	i, _ := slices.BinarySearch(m.cum, x)
	// BinarySearch finds the first cum >= x; x equal to a boundary belongs
	// to the next operation.
	for i < len(m.cum)-1 && m.cum[i] <= x {
		i++
	}

	return append(buf, m.idx[i])
}

// iteration runs one iteration's operations. The first is due at intended;
// the others of a sequence start when their predecessor returns. It returns
// false when the worker must stop.
func (pr *phaseRun) iteration(ctx context.Context, s *datagen.Scope, h handles, b *bound, m *mix, buf []int, intended time.Time) bool {
	s.NextIteration()

	for k, i := range m.pick(s, buf[:0]) {
		// Closed-loop workers pass a zero intended time: the operation is
		// intended when it starts, and one clock reading serves both.
		start := time.Now()
		if k > 0 || intended.IsZero() {
			intended = start
		}

		if !m.untracked && !intended.Before(pr.measureFrom) && !pr.ticket() {
			return false
		}

		opCtx := h.slot.begin(start, b.timeouts[i])
		docs, err := b.funcs[i](opCtx, s)
		err = h.slot.end(opCtx, err)
		pr.record(ctx, h, i, intended, start, time.Now(), docs, err)

		if ctx.Err() != nil {
			return false
		}
	}

	return true
}

// closedLoop runs n workers, each issuing its next iteration as soon as the
// previous one returned. With a gate, worker w runs only while fewer than w+1
// workers are wanted (ramping concurrency).
func (e *Engine) closedLoop(ctx context.Context, pr *phaseRun, n int, g *gate, m *mix, b *bound) {
	workers(n, func(w int) {
		s := e.Env.NewScope(w)
		h := pr.newHandles()
		buf := make([]int, 0, len(m.idx))

		for pr.issueCtx.Err() == nil {
			if g != nil && !g.wait(pr.issueCtx, w) {
				return
			}

			if !pr.iteration(ctx, s, h, b, m, buf, time.Time{}) {
				return
			}
		}
	})
}

// nopObserver ignores progress.
type nopObserver struct{}

func (nopObserver) PhaseStarted(Phase)                              {}
func (nopObserver) Warmup(Phase, time.Duration)                     {}
func (nopObserver) Interval(Phase, metrics.Interval, time.Duration) {}
func (nopObserver) PhaseEnded(Phase, *PhaseResult)                  {}
