package bench

import (
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/engine/schedule"
	"github.com/mongobench/mongobench/internal/results/result"
)

// TestConvertSchedule checks the results-file form of how a schedule was
// kept: counts as they are, durations in microseconds, the in-flight bound
// the caller gives; none for a closed loop.
func TestConvertSchedule(t *testing.T) {
	t.Parallel()

	if convertSchedule(nil, 8) != nil {
		t.Error("a phase without a schedule got one")
	}

	st := &runner.ScheduleStats{
		Scheduled: 1000, Late: 12, Dropped: 3, Pending: 2, LateForSlot: 10, LateForClient: 2,
		MaxWait: 1500 * time.Microsecond, MaxSchedulerLag: 250 * time.Microsecond, Warning: "all 8 in-flight slots were busy",
	}

	got := *convertSchedule(st, 8)
	want := result.Schedule{
		Scheduled: 1000, Late: 12, Dropped: 3, Pending: 2, LateForSlot: 10, LateForClient: 2,
		MaxInFlight: 8, MaxWaitUS: 1500, MaxSchedulerLagUS: 250, Warning: "all 8 in-flight slots were busy",
	}

	if got != want {
		t.Errorf("schedule %+v, want %+v", got, want)
	}
}

// TestConvertBackground checks a background job's results-file form: a
// fixed-rate job keeps its rate; a paced one records its controller
// (thresholds in µs) instead, and its trajectory only when asked (the run
// log's intervals carry it).
func TestConvertBackground(t *testing.T) {
	t.Parallel()

	fixed := convertBackground(runner.BackgroundResult{Operation: "scan", Rate: 5, Schedule: &runner.ScheduleStats{Scheduled: 50}}, true)
	if fixed.Operation != "scan" || fixed.Rate != 5 || fixed.Pacing != nil || fixed.Schedule == nil || fixed.Schedule.Scheduled != 50 || fixed.Trajectory != nil {
		t.Errorf("fixed-rate job %+v", fixed)
	}

	paced := runner.BackgroundResult{
		Operation: "scan", Rate: 7, Percentile: 99, HighestSustained: 40,
		Pacing: &schedule.PacingConfig{Start: 10, Min: 1, Max: 100, Low: 2 * time.Millisecond, High: 5 * time.Millisecond, SpeedUp: 1.5, SlowDown: 0.5},
		Trajectory: schedule.Trajectory{
			{Offset: time.Second, Rate: 15, Observed: 1500 * time.Microsecond, Samples: 10, Action: schedule.ActionUp},
			{Offset: 2 * time.Second, Rate: 7.5, Observed: 6 * time.Millisecond, Samples: 15, Action: schedule.ActionDown},
		},
	}

	got := convertBackground(paced, true)
	wantPacing := result.Pacing{Start: 10, Min: 1, Max: 100, LowUS: 2000, HighUS: 5000, SpeedUp: 1.5, SlowDown: 0.5, Percentile: 99}

	if got.Rate != 0 || got.Pacing == nil || *got.Pacing != wantPacing || got.HighestSustainedRate != 40 || got.Schedule != nil {
		t.Errorf("paced job %+v, pacing %+v; want no fixed rate and %+v", got, got.Pacing, wantPacing)
	}

	wantPoints := []result.PacingPoint{
		{OffsetS: 1, Rate: 15, ObservedUS: 1500, Samples: 10, Action: "up"},
		{OffsetS: 2, Rate: 7.5, ObservedUS: 6000, Samples: 15, Action: "down"},
	}

	if len(got.Trajectory) != len(wantPoints) {
		t.Fatalf("trajectory %+v, want %+v", got.Trajectory, wantPoints)
	}

	for i := range wantPoints {
		if got.Trajectory[i] != wantPoints[i] {
			t.Errorf("point %d: %+v, want %+v", i, got.Trajectory[i], wantPoints[i])
		}
	}

	if without := convertBackground(paced, false); without.Trajectory != nil || without.Pacing == nil {
		t.Errorf("for the run log: %+v", without)
	}
}

// TestBuildStatus checks that the result's status and reason are the
// final phase's.
func TestBuildStatus(t *testing.T) {
	t.Parallel()

	for st, want := range map[runner.Status]string{
		runner.StatusCompleted:   result.StatusCompleted,
		runner.StatusAborted:     result.StatusAborted,
		runner.StatusInterrupted: result.StatusInterrupted,
	} {
		b := &resultBuilder{started: time.Now(), res: &result.Result{Status: "unset"}}

		res := b.build(&runner.PhaseResult{Status: st, Reason: "because"})
		if res.Status != want || res.StatusReason != "because" || res.DurationS < 0 {
			t.Errorf("%s: status %q, reason %q, duration %v", st, res.Status, res.StatusReason, res.DurationS)
		}
	}
}
