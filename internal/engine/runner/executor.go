package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mongobench/mongobench/internal/spec/workload"
)

// Executor runs a phase's workers under one load model: when they start
// their iterations, how many run at once, when the phase's work is done.
// The phase around it (registries, interval ticks, the watchdog, the stop
// on time, on an operation count or on a dead server, background jobs) is
// the same for every model, so a model is only this.
type Executor interface {
	// Setup is called once the phase's registries exist, before Run; it
	// may hook the phase's interval ticks (to record the plan).
	Setup(pr *phaseRun)

	// Run runs the workers and returns when they are all done: when ctx
	// or pr.issueCtx is done or the work is exhausted.
	Run(ctx context.Context, pr *phaseRun)
}

// phaseSetup is what a load model's constructor builds its executor from.
// The constructor may adjust the phase's description (a ramp's planned
// duration, an open loop's in-flight slots) and ask for service times.
type phaseSetup struct {
	// engine runs the phase.
	engine *Engine

	// spec is the phase as written, defaults applied.
	spec *workload.Phase

	// mix names the operations of the phase's weighted mix.
	mix []string

	// bound holds the phase's bound operations and units.
	bound *bound

	// weights are the operations' weights in a mix.
	weights map[string]float64

	// phase describes the phase to observers and results.
	phase *Phase

	// result receives what the model itself reports (schedule, targets,
	// blocks).
	result *PhaseResult

	// service asks for service times besides response times.
	service bool
}

// newMix returns the phase's own mix: its sequence, or its weighted mix.
func (ps *phaseSetup) newMix() *mix {
	return newMix(ps.bound, ps.mix, ps.spec.Sequence, ps.weights)
}

// newExecutor builds a load model's executor.
type newExecutor func(ps *phaseSetup) Executor

// executors maps each load model of the registry (workload.LoadModelNames) to
// its executor. Adding a model is its line in the registry, a file here
// with its constructor, a line in this map, and its test. It is a function
// rather than a variable so that no caller can change it.
func executors() map[string]newExecutor {
	return map[string]newExecutor{
		workload.ModelClosed:             newClosedLoop,
		workload.ModelRampingConcurrency: newRampingConcurrency,
		workload.ModelRate:               newRate,
		workload.ModelRampingRate:        newRampingRate,
		workload.ModelBlocks:             newBlocks,
		workload.ModelReplay:             newReplay,
	}
}

// Models lists the load models the engine can run, sorted.
func Models() []string {
	ex := executors()

	names := make([]string, 0, len(ex))
	for name := range ex {
		names = append(names, name)
	}

	slices.Sort(names)

	return names
}

// CheckModel returns an error when the engine has no executor for a load
// model, so that a plan is refused before anything runs.
func CheckModel(model string) error {
	if _, ok := executors()[model]; !ok {
		return fmt.Errorf("no executor for load model %q (known: %s)", model, strings.Join(Models(), ", "))
	}

	return nil
}
