package workload

import (
	"math"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/units"
	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// Memory caps: settings that mongobench turns into memory up front or in
// proportion, bounded so that a typo (an extra zero, 1000000000000) is a validation
// error naming the cap, rather than an out-of-memory crash minutes into a run.
// docs/workloads.md ("Memory caps") lists them.
const (
	// RecorderBudget bounds the latency recorders of one phase, as
	// metrics.RecorderBytes estimates them: every worker keeps a histogram
	// for each operation it runs, so the cost is operations × workers.
	RecorderBudget = 1 << 30

	// MaxBacklog bounds an open-loop phase's max_backlog. The backlog is a
	// queue allocated in full when the phase starts (backlogEntryBytes per
	// waiting operation), and an operation that waits behind a million
	// others measures the queue, not the server.
	MaxBacklog = 1_000_000

	// MaxInFlight bounds an open-loop phase's in-flight slots (checked in
	// phase), as concurrency bounds closed-loop workers: each slot is a
	// worker with its own goroutine, data scope and recorders.
	MaxInFlight = maxConcurrency
)

// backlogEntryBytes is what one queued operation of an open-loop backlog
// takes (two time.Time values).
const backlogEntryBytes = 48

// CheckBudget checks the memory caps again, for callers that change a
// validated spec (the command line's --concurrency). Errors are positioned
// like Validate's, at the fields the values would have come from.
func (s *Spec) CheckBudget() []error {
	if s.nodes == nil {
		s.nodes = map[string]*yaml.Node{}
	}

	v := &validator{s: s}
	v.budget()
	yamlpos.Sort(v.errs)

	return v.errs
}

// budget checks the memory caps of every phase. It runs after the other
// checks, with defaults applied.
func (v *validator) budget() {
	phases, paths := v.s.PhaseList()
	for i, p := range phases {
		v.phaseBudget(paths[i], p)
	}
}

// phaseBudget checks one phase's backlog, in-flight slots and recorders.
func (v *validator) phaseBudget(path string, p *Phase) {
	f := func(name string) string { return yamlpos.Field(path, name) }

	if p.OpenLoop() {
		if p.MaxBacklog > MaxBacklog {
			v.at(f("max_backlog"), "%d is above the cap of %d: the backlog queue is allocated when the phase starts "+
				"(%d bytes per waiting operation, %s here)", p.MaxBacklog, MaxBacklog, backlogEntryBytes,
				units.Bytes(backlogBytes(p.MaxBacklog)))
		}
	}

	ops, workers, registries := v.recorders(p)
	if ops == 0 || workers <= 0 {
		return
	}

	need := metrics.RecorderBytes(ops, workers, registries)
	if need <= RecorderBudget {
		return
	}

	field, what := f("concurrency"), "workers"
	if p.OpenLoop() {
		field, what = f("max_in_flight"), "in-flight slots"
	}

	service := ""
	if registries > 1 {
		service = ", twice over for service times"
	}

	v.at(field, "%d operations × %d %s would hold about %s of latency histograms%s, above the budget of %s: "+
		"each worker keeps a histogram for every operation it runs; split the operations into phases or use fewer %s",
		ops, workers, what, units.Bytes(need), service, units.Bytes(RecorderBudget), what)
}

// recorders returns what sizes a phase's latency recorders: the number of
// operations it records, the largest number of workers that record at once
// (foreground and background), and how many registries they record into.
func (v *validator) recorders(p *Phase) (ops, workers, registries int) {
	used := map[string]bool{}
	use := func(names []string) {
		for _, n := range names {
			used[n] = true
		}
	}

	// The same operations the engine binds for the phase.
	if len(p.Sequence) == 0 && p.Blocks == nil {
		use(v.s.MixOperations(p))
	}

	use(p.Sequence)

	workers = p.Concurrency

	switch {
	case p.Blocks != nil:
		workers = 1
		for _, st := range p.Blocks.Steps {
			use(st.Operations)
			use(st.Sequence)
			workers = max(workers, st.Concurrency)
		}
	case p.OpenLoop():
		workers = p.MaxInFlight
	case len(p.Stages) > 0:
		for _, st := range p.Stages {
			workers = max(workers, st.Concurrency)
		}
	}

	registries = 1
	if p.OpenLoop() || len(p.Background) > 0 {
		registries = 2
	}

	for _, b := range p.Background {
		used[b.Operation] = true
		workers += max(b.MaxInFlight, 0)
	}

	// A composite records itself and each step; a sequence's whole
	// iteration is one more.
	declared := 0
	for _, o := range v.s.Operations {
		if used[o.Name] {
			declared += 1 + len(o.Steps)
		}
	}

	if len(p.Sequence) > 0 {
		declared++
	}

	return declared, workers, registries
}

// backlogBytes is the memory of a backlog of n waiting operations, the
// largest int64 when the product would overflow (a typo such as
// max_backlog: 1000000000000000000).
func backlogBytes(n int) int64 {
	if int64(n) > math.MaxInt64/backlogEntryBytes {
		return math.MaxInt64
	}

	return int64(n) * backlogEntryBytes
}
