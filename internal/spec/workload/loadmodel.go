package workload

// Load models of a phase, as written to results files. The registry,
// loadModels, is the one place that says which phase is which model and
// what each model means for the rest of the tool (sharding, budgets,
// external clients, the engine's stages); the engine's executor of each
// model is a file of its own in package runner, keyed by these names.
const (
	ModelClosed             = "closed"
	ModelRate               = "rate"
	ModelRampingRate        = "ramping-rate"
	ModelRampingConcurrency = "ramping-concurrency"
	ModelBlocks             = "blocks"
	ModelReplay             = "replay"
)

// LoadModel is one load model: how a phase's operations are started.
type LoadModel struct {
	// Name is the model's name in results files.
	Name string

	// Description says in one sentence how operations start.
	Description string

	// OpenLoop is true when operations start on a schedule rather than
	// when a worker is free, so that a backlog, not the workers, bounds
	// them (budgets, coordinated omission).
	OpenLoop bool

	// Workers is true when the phase's concurrency is its number of
	// workers, so that shards split the workers among them.
	Workers bool

	// Unshardable, when not empty, is why a phase of this model cannot be
	// split among shards.
	Unshardable string

	// RampsConcurrency is true when the phase's stages ramp the number of
	// workers rather than the rate.
	RampsConcurrency bool

	// External is true when an external client stack can run the phase:
	// a plain closed loop of workers, each waiting for its reply.
	External bool

	// chosen reports whether a phase is of this model; the registry is
	// asked in order and the first model that matches is the phase's.
	chosen func(p *Phase) bool
}

// loadModels is the registry of load models, in the order a phase's model
// is chosen. It is a function rather than a variable so that no caller can
// change it.
func loadModels() []LoadModel {
	return []LoadModel{
		{
			Name:        ModelReplay,
			Description: "a recorded timeline: a worker per recorded connection starts its operations in order at their recorded offsets",
			Unshardable: "its timeline is one recording; splitting its connections among shards would change what the server sees at once",
			chosen:      func(p *Phase) bool { return p.Replay != nil },
		},
		{
			Name:        ModelBlocks,
			Description: "growth blocks: each block inserts, then measures at the new size",
			Unshardable: "its blocks end at a collection size no shard sees alone",
			chosen:      func(p *Phase) bool { return p.Blocks != nil },
		},
		{
			Name:             ModelRampingConcurrency,
			Description:      "a closed loop whose stages ramp the number of workers",
			Workers:          true,
			RampsConcurrency: true,
			chosen: func(p *Phase) bool {
				return len(p.Stages) > 0 && p.Stages[0].Concurrency > 0 && p.Stages[0].Rate == 0
			},
		},
		{
			Name:        ModelRampingRate,
			Description: "an open loop whose stages ramp the rate of operations",
			OpenLoop:    true,
			chosen:      func(p *Phase) bool { return len(p.Stages) > 0 },
		},
		{
			Name:        ModelRate,
			Description: "an open loop at a fixed rate of operations",
			OpenLoop:    true,
			chosen:      func(p *Phase) bool { return p.Rate > 0 },
		},
		{
			Name:        ModelClosed,
			Description: "a closed loop: each worker starts an operation when its last one returns",
			Workers:     true,
			External:    true,
			chosen:      func(*Phase) bool { return true },
		},
	}
}

// LoadModelNames returns the names of every load model Phase.Model can
// return, in registry order.
func LoadModelNames() []string {
	ms := loadModels()
	names := make([]string, len(ms))

	for i, m := range ms {
		names[i] = m.Name
	}

	return names
}

// LoadModel returns the phase's load model: the first of the registry that
// the phase's fields choose (the last, the closed loop, takes any phase).
func (p *Phase) LoadModel() LoadModel {
	ms := loadModels()
	for _, m := range ms {
		if m.chosen(p) {
			return m
		}
	}

	return ms[len(ms)-1]
}
