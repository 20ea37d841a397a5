package runner

import (
	"context"
	"time"

	"github.com/mongobench/mongobench/internal/engine/schedule"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// rampingConcurrency is the closed-loop model whose number of workers
// follows stages: as many workers as the stages ever want are started, and a
// gate lets through those the plan wants at each moment.
type rampingConcurrency struct {
	closedLoop

	stages schedule.Stages
	result *PhaseResult
}

// newRampingConcurrency is the executor of a phase with concurrency stages.
func newRampingConcurrency(ps *phaseSetup) Executor {
	stages := buildStages(ps.spec)
	ps.phase.Duration = stages.Duration()

	return &rampingConcurrency{
		closedLoop: closedLoop{
			engine: ps.engine, mix: ps.newMix(),
			n: maxConcurrency(stages), gate: newGate(int(stages.Start())),
		},
		stages: stages,
		result: ps.result,
	}
}

// Setup records the planned concurrency at each interval's end.
func (r *rampingConcurrency) Setup(pr *phaseRun) {
	pr.onTick = append(pr.onTick, func(_ metrics.Interval, now time.Time) {
		// The plan at the tick's own time, not the gate's value when the
		// hook runs, which may be later.
		at := planOffset(now.Sub(pr.measureFrom), r.stages.Duration())
		r.result.Targets = append(r.result.Targets, Target{Elapsed: now.Sub(pr.measureFrom), Concurrency: r.stages.ConcurrencyAt(at)})
	})
}

// Run moves the gate along the stages while the workers run.
func (r *rampingConcurrency) Run(ctx context.Context, pr *phaseRun) {
	stop := r.gate.follow(pr.issueCtx, r.stages, pr.measureFrom)
	defer stop()

	r.closedLoop.Run(ctx, pr)
}

// maxConcurrency is the most workers the stages ever want (at least one).
func maxConcurrency(s schedule.Stages) int {
	n := s.Start()
	for _, st := range s.Stages() {
		n = max(n, st.Target)
	}

	return max(1, int(n))
}
