package bench

import (
	"time"

	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// resultBuilder describes the run (workload, target, seed, status) for the
// run log's header and end record; the measurements come from the run log.
type resultBuilder struct {
	res     *result.Result
	started time.Time

	// decode maps operation names to their decode modes.
	decode map[string]string
}

func newResultBuilder(started time.Time, version, path string, spec *workload.Spec, t *openedTarget, info targets.ServerInfo) *resultBuilder {
	kind := t.kind
	if kind == "" {
		kind = targets.KindURI
	}

	notes := info.Notes()
	if t.embedded != nil {
		notes = append(notes, t.embedded.Notes()...)
	}

	if t.launched != nil {
		notes = append(notes, t.launched.Notes...)
	}

	backend := info.Backend
	if info.BackendVersion != "" {
		backend += " " + info.BackendVersion
	}

	decode := map[string]string{}
	for _, o := range spec.Operations {
		if o.Decode != "" {
			decode[o.Name] = o.Decode
		}
	}

	return &resultBuilder{
		decode:  decode,
		started: started,
		res: &result.Result{
			SchemaVersion:     result.SchemaVersion,
			MongobenchVersion: version,
			Workload:          result.Workload{Name: spec.Name, File: path, CompareOn: spec.Run.CompareOn, Spec: spec, Source: string(spec.Source())},
			Target: result.Target{
				Kind:          kind,
				URI:           t.redactedURI(),
				ServerVersion: info.Summary(),
				Backend:       backend,
				Notes:         notes,
			},
			StartedAt:   started,
			Seed:        spec.Seed,
			Concurrency: spec.Run.Concurrency,
			Status:      result.StatusCompleted,
		},
	}
}

// convertBackground turns a background job's report into its
// results-file form, with its trajectory or (for the run log, whose
// intervals carry it) without.
func convertBackground(bg runner.BackgroundResult, trajectory bool) result.Background {
	out := result.Background{
		Operation:            bg.Operation,
		Rate:                 bg.Rate,
		HighestSustainedRate: bg.HighestSustained,
		Schedule:             convertSchedule(bg.Schedule, 0),
	}

	if pc := bg.Pacing; pc != nil {
		out.Rate = 0
		out.Pacing = &result.Pacing{
			Start: pc.Start, Min: pc.Min, Max: pc.Max,
			LowUS: micros(pc.Low), HighUS: micros(pc.High),
			SpeedUp: pc.SpeedUp, SlowDown: pc.SlowDown, Percentile: bg.Percentile,
		}
	}

	if !trajectory {
		return out
	}

	for _, pt := range bg.Trajectory {
		out.Trajectory = append(out.Trajectory, result.PacingPoint{
			OffsetS: pt.Offset.Seconds(), Rate: pt.Rate, ObservedUS: micros(pt.Observed),
			Samples: pt.Samples, Action: string(pt.Action),
		})
	}

	return out
}

func convertSchedule(st *runner.ScheduleStats, slots int) *result.Schedule {
	if st == nil {
		return nil
	}

	return &result.Schedule{
		Scheduled:         st.Scheduled,
		Late:              st.Late,
		Dropped:           st.Dropped,
		Pending:           st.Pending,
		LateForSlot:       st.LateForSlot,
		LateForClient:     st.LateForClient,
		MaxInFlight:       slots,
		MaxWaitUS:         micros(st.MaxWait),
		MaxSchedulerLagUS: micros(st.MaxSchedulerLag),
		ClientLagUS:       micros(st.ClientLag),
		Warning:           st.Warning,
	}
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// build finishes the result with how the run ended.
func (b *resultBuilder) build(final *runner.PhaseResult) *result.Result {
	b.res.DurationS = time.Since(b.started).Seconds()

	switch final.Status {
	case runner.StatusInterrupted:
		b.res.Status = result.StatusInterrupted
	case runner.StatusAborted:
		b.res.Status = result.StatusAborted
	case runner.StatusCompleted:
		b.res.Status = result.StatusCompleted
	}

	b.res.StatusReason = final.Reason

	return b.res
}
