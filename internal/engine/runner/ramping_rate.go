package runner

import "time"

// newRampingRate is the executor of a phase with rate stages: the open-loop
// model (rate.go) whose schedule follows the stages.
func newRampingRate(ps *phaseSetup) Executor {
	stages := buildStages(ps.spec)
	ps.phase.Duration = stages.Duration()

	return newOpenLoop(ps, stages, func(at time.Duration) float64 {
		return stages.RateAt(planOffset(at, stages.Duration()))
	})
}
