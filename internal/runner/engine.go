package runner

import (
	"context"
	"sort"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/datagen"
	"github.com/mongobench/mongobench/internal/metrics"
	"github.com/mongobench/mongobench/internal/op"
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

	p := Phase{Name: l.Name(), Concurrency: spec.Concurrency, Docs: spec.Documents}

	return drive(ctx, p, []string{l.Name()}, e.Interval, e.AbortAfter, e.observer(),
		func(ctx context.Context, worker int, h *metrics.Handle, pr *phaseRun) {
			s := e.Env.NewScope(worker)

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
				pr.record(ctx, h, 0, start, time.Now(), docs, err)

				if err != nil && ctx.Err() == nil {
					pr.cancel(&abortError{reason: "a load batch failed: " + err.Error()})
					return
				}
			}
		})
}

// RunConfig is the measured phase's plan.
type RunConfig struct {
	// Ops are the compiled operations, bound by Run.
	Ops []*op.Operation

	// Sequence, when non-empty, lists indexes into Ops run in order each
	// iteration; otherwise each iteration is one operation picked by
	// weight.
	Sequence []int

	// Concurrency, Warmup, Duration and MaxOps are as in Phase.
	Concurrency int
	Warmup      time.Duration
	Duration    time.Duration
	MaxOps      int64
}

// Run runs the measured phase with closed-loop workers: each worker issues
// its next operation as soon as the previous one returns.
func (e *Engine) Run(ctx context.Context, cfg RunConfig) *PhaseResult {
	names := make([]string, len(cfg.Ops))
	funcs := make([]op.Func, len(cfg.Ops))

	for i, o := range cfg.Ops {
		names[i] = o.Name()
		funcs[i] = o.Bind(e.DB)
	}

	p := Phase{
		Name:        "run",
		Concurrency: cfg.Concurrency,
		Warmup:      cfg.Warmup,
		Duration:    cfg.Duration,
		MaxOps:      cfg.MaxOps,
	}

	next := picker(cfg)

	return drive(ctx, p, names, e.Interval, e.AbortAfter, e.observer(),
		func(ctx context.Context, worker int, h *metrics.Handle, pr *phaseRun) {
			s := e.Env.NewScope(worker)
			iteration := make([]int, 0, max(1, len(cfg.Sequence)))

			for ctx.Err() == nil {
				s.NextIteration()

				for _, i := range next(s, iteration[:0]) {
					start := time.Now()
					if !start.Before(pr.measureFrom) && !pr.ticket() {
						return
					}

					docs, err := funcs[i](ctx, s)
					pr.record(ctx, h, i, start, time.Now(), docs, err)

					if ctx.Err() != nil {
						return
					}
				}
			}
		})
}

// picker returns the function choosing an iteration's operations.
func picker(cfg RunConfig) func(s *datagen.Scope, buf []int) []int {
	if len(cfg.Sequence) > 0 {
		return func(_ *datagen.Scope, _ []int) []int { return cfg.Sequence }
	}

	cum := make([]float64, len(cfg.Ops))
	total := 0.0

	for i, o := range cfg.Ops {
		total += o.Weight
		cum[i] = total
	}

	return func(s *datagen.Scope, buf []int) []int {
		x := s.Float64() * total

		i := sort.SearchFloat64s(cum, x)
		// SearchFloat64s finds the first cum >= x; x equal to a boundary
		// belongs to the next operation.
		for i < len(cum)-1 && cum[i] <= x {
			i++
		}

		return append(buf, i)
	}
}

// nopObserver ignores progress.
type nopObserver struct{}

func (nopObserver) PhaseStarted(Phase)                                {}
func (nopObserver) Warmup(Phase, time.Duration)                       {}
func (nopObserver) Interval(Phase, metrics.Interval, time.Duration)   {}
func (nopObserver) PhaseEnded(Phase, *PhaseResult)                    {}
