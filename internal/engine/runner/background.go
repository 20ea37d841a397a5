package runner

import (
	"context"
	"time"

	"github.com/mongobench/mongobench/internal/engine/schedule"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// BackgroundResult is what a background job did.
type BackgroundResult struct {
	// Operation is the job's operation.
	Operation string

	// Rate is the fixed rate, 0 when paced.
	Rate float64

	// Pacing is the controller's configuration when paced.
	Pacing *schedule.PacingConfig

	// Percentile is the latency percentile the controller watched.
	Percentile float64

	// Trajectory is the rate decided at each interval and why.
	Trajectory schedule.Trajectory

	// HighestSustained is the highest rate whose following interval kept
	// the watched latency below the high threshold.
	HighestSustained float64

	// Schedule says how well the job's schedule was kept.
	Schedule *ScheduleStats
}

// backgroundJob is one running background job.
type backgroundJob struct {
	spec       *workload.Background
	op         int
	pacing     *schedule.PacingConfig
	percentile float64
	adaptive   *schedule.Adaptive
	ol         *openLoop
	start      time.Time
	trajectory schedule.Trajectory
}

func newBackgroundJob(spec *workload.Background, b *bound) *backgroundJob {
	j := &backgroundJob{spec: spec, op: b.index[spec.Operation]}

	rate := spec.Rate.PerSecond()

	var pacer schedule.Pacer = schedule.Constant{Rate: rate}

	if pc := spec.Pacing; pc != nil {
		j.pacing = &schedule.PacingConfig{
			Start: pc.Start.PerSecond(), Min: pc.Min.PerSecond(), Max: pc.Max.PerSecond(),
			Low: pc.Low.D(), High: pc.High.D(), SpeedUp: pc.SpeedUp, SlowDown: pc.SlowDown,
		}
		j.percentile = pc.Percentile

		// Validated by the workload package, so this cannot fail.
		j.adaptive, _ = schedule.NewAdaptive(j.pacing.Start, 0)
		pacer = j.adaptive
	}

	j.ol = &openLoop{pacer: pacer, slots: spec.MaxInFlight, backlog: DefaultJobBacklog, changed: make(chan struct{}, 1)}

	return j
}

// DefaultJobBacklog bounds a background job's waiting operations; a job
// that falls this far behind is dropping work, which its results show.
const DefaultJobBacklog = 10_000

// attach starts the job's clock with the phase and, for a paced job,
// installs its controller on the phase's ticks.
func (j *backgroundJob) attach(pr *phaseRun) {
	j.start = pr.measureFrom.Add(-pr.phase.Warmup)

	if j.pacing == nil {
		return
	}

	j.trajectory = schedule.Trajectory{{Offset: 0, Rate: j.pacing.Start, Action: schedule.ActionHold}}

	pr.onTick = append(pr.onTick, func(iv metrics.Interval, _ time.Time) {
		st := iv.Ops[j.op]

		var observed time.Duration
		if st.Count > 0 {
			observed = time.Duration(st.Hist.ValueAtQuantile(j.percentile)) * time.Microsecond
		}

		rate := j.adaptive.Rate()
		action := j.pacing.Decide(observed, st.Count)
		next := j.pacing.Next(rate, observed, st.Count)

		// The new rate applies from now, when it is set, not from the
		// tick's timestamp: merging the registries takes time, and a
		// backdated change would make operations due in the past (late).
		at := time.Since(j.start)

		_ = j.adaptive.SetRate(at, next)
		j.trajectory = append(j.trajectory, schedule.Point{
			Offset: at, Rate: next, Observed: observed, Samples: st.Count, Action: action,
		})

		select {
		case j.ol.changed <- struct{}{}:
		default:
		}
	})
}

// runBackground runs the job's schedule until ctx is done; operations in
// flight then are cut off, since the phase they ran beside is over.
func (e *Engine) runBackground(ctx context.Context, pr *phaseRun, j *backgroundJob, b *bound, worker int) {
	m := &mix{nodes: []*node{b.nodes[j.op]}, untracked: true}

	e.openLoop(ctx, ctx, pr, j.ol, m, worker)
}

// withBackground runs the phase's jobs beside run: they start with it, in
// scopes of their own, and stop when it returns.
func (e *Engine) withBackground(run runFunc, jobs []*backgroundJob, b *bound) runFunc {
	return func(ctx context.Context, pr *phaseRun) {
		bgCtx, stopJobs := context.WithCancel(pr.issueCtx)
		done := make(chan struct{})

		go func() {
			defer close(done)

			// Scopes of their own, numbered apart from the phase's
			// workers, so their data does not repeat the foreground's.
			workers(len(jobs), func(i int) { e.runBackground(bgCtx, pr, jobs[i], b, 10_000+1000*i) })
		}()

		run(ctx, pr)
		stopJobs()
		<-done
	}
}

// result reports the job.
func (j *backgroundJob) result() BackgroundResult {
	r := BackgroundResult{
		Operation:  j.spec.Operation,
		Rate:       j.spec.Rate.PerSecond(),
		Pacing:     j.pacing,
		Percentile: j.percentile,
		Trajectory: j.trajectory,
		Schedule:   &j.ol.stats,
	}

	if j.pacing != nil {
		r.HighestSustained = j.trajectory.HighestSustained(j.pacing.High)
	}

	return r
}
