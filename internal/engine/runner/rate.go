package runner

import (
	"context"
	"time"

	"github.com/mongobench/mongobench/internal/engine/schedule"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// rate is the open-loop model: iterations start on a schedule computed from
// the phase's start at a fixed rate (or, in ramping_rate.go, a rate that
// follows stages), whether earlier ones returned or not, in at most
// max_in_flight slots; latency counts from the scheduled start.
type rate struct {
	engine *Engine
	mix    *mix
	loop   *openLoop

	// rateAt is the planned rate at an offset from the phase's start.
	rateAt func(at time.Duration) float64
	result *PhaseResult
}

// newRate is the executor of a phase with a fixed rate.
func newRate(ps *phaseSetup) Executor {
	r := ps.spec.Rate.PerSecond()

	return newOpenLoop(ps, schedule.Constant{Rate: r}, func(time.Duration) float64 { return r })
}

// newOpenLoop builds an open-loop executor whose schedule follows pacer.
func newOpenLoop(ps *phaseSetup, pacer schedule.Pacer, rateAt func(time.Duration) float64) *rate {
	sp := ps.spec
	ol := &openLoop{pacer: pacer, slots: sp.MaxInFlight, backlog: sp.MaxBacklog}

	ps.result.Schedule = &ol.stats
	ps.phase.Concurrency = sp.MaxInFlight
	ps.service = true

	return &rate{engine: ps.engine, mix: ps.newMix(), loop: ol, rateAt: rateAt, result: ps.result}
}

// Setup records the planned rate at each interval's end.
func (r *rate) Setup(pr *phaseRun) {
	start := pr.measureFrom.Add(-pr.phase.Warmup)
	pr.onTick = append(pr.onTick, func(_ metrics.Interval, now time.Time) {
		r.result.Targets = append(r.result.Targets, Target{Elapsed: now.Sub(pr.measureFrom), Rate: r.rateAt(now.Sub(start))})
	})
}

// Run runs the schedule until no new iteration may start.
func (r *rate) Run(ctx context.Context, pr *phaseRun) {
	r.engine.openLoop(ctx, pr.issueCtx, pr, r.loop, r.mix, 0)
}
