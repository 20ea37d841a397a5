// Package plan turns a request — a workload as read and the command line's
// settings — into a bench.Plan: the overrides applied to every variant and
// re-checked against the memory budget, the variants compiled, the targets
// named, expanded and given their mongod program, the number of rounds, the
// client stacks checked and installed, and what a sharded run may do.
//
// It exists so that the rules of what a run is live in one place with their
// unit tests, apart from the command line, which only parses flags, calls
// New and prints; the package knows no flags library and writes nothing to
// the terminal. Every refusal of the request is an *InputError, which the
// command line reports as bad input.
package plan

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// Request is what the user asks of a run. Zero values mean "not given":
// the workload's own settings apply.
type Request struct {
	// Path is the workload file, for messages and the results.
	Path string

	// Workload is the workload as read (its seed and parameters set) and
	// compiled. New applies the overrides to it in place.
	Workload *bench.Compiled

	// Concurrency overrides run.concurrency and every closed-loop phase's
	// workers (--concurrency).
	Concurrency int

	// Duration overrides the duration of the phases timed by one
	// (--duration); it is refused when no phase is.
	Duration time.Duration

	// MaxOperations caps every phase that runs for a duration or a number
	// of operations (--max-operations).
	MaxOperations int64

	// Client overrides run.client (--client).
	Client string

	// MinEffect overrides run.min_effect (--min-effect).
	MinEffect string

	// Rounds overrides run.rounds and trials.rounds (--rounds).
	Rounds int

	// Targets are the --target values, KIND[:setting=value,...], added
	// after the workload's targets.
	Targets []string

	// URI is the connection string of --uri (or its environment form),
	// already expanded: a target of its own when other targets are named,
	// else the default target.
	URI string

	// MongodBinary is the program of the mongod targets that name none.
	MongodBinary string

	// ServerSelection overrides run.server_selection_timeout.
	ServerSelection time.Duration

	// ClientProfile asks for a CPU profile of an external client's
	// adapter: refused when every variant runs on go. The caller resolves
	// its path prefix into the plan's Options.ClientProfile.
	ClientProfile bool

	// Markdown asks for the comparison as Markdown: refused when the run
	// has nothing to compare.
	Markdown bool

	// Shard, when set, makes the run one shard of a distributed run.
	Shard *bench.Shard

	// Getenv expands ${NAME} in the targets' connection strings; nil
	// expands nothing and refuses every reference.
	Getenv func(string) string

	// Installer returns the installer of the external client stacks,
	// called only when a variant runs one; nil refuses such a workload.
	Installer func() (*client.Installer, error)
}

// InputError is a request the user must fix: the command line exits with
// its bad-input code. Details, when any, are the individual problems, each
// to print on a line of its own before Msg.
type InputError struct {
	Msg     string
	Details []error
}

// Error returns the message, ready to print.
func (e *InputError) Error() string { return e.Msg }

func badInput(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// New turns the request into a plan, refusing what cannot run before
// anything starts. Its Options hold what the request decides (URI, server
// selection, client installer, shard); the caller adds the rest (owner
// key, version, run logs, client profile path). Errors that are not an
// *InputError are failures of the machine (an installer that cannot look
// at its cache), returned as they came.
func New(ctx context.Context, r *Request) (*bench.Plan, error) {
	w := r.Workload

	if r.MaxOperations > 0 {
		if err := w.Spec.SetMaxOperations(r.MaxOperations); err != nil {
			return nil, badInput("%v", err)
		}
	}

	variants, err := compileVariants(r)
	if err != nil {
		return nil, err
	}

	installer, err := clientInstaller(ctx, r, variants)
	if err != nil {
		return nil, err
	}

	targetList, err := targetSpecs(w.Spec, r)
	if err != nil {
		return nil, err
	}

	if err := expandTargetURIs(r.Path, w.Spec, targetList, len(r.Targets), r.Getenv); err != nil {
		return nil, err
	}

	serverSelection := r.ServerSelection
	if serverSelection == 0 {
		serverSelection = w.Spec.Run.ServerSelectionTimeout.D()
	}

	p := &bench.Plan{
		Path:     r.Path,
		Base:     w.Spec,
		Variants: variants,
		Targets:  targetList,
		Rounds:   trialRounds(w.Spec, r.Rounds, len(variants), len(targetList)),
		Options: bench.Options{
			URI:             r.URI,
			ServerSelection: serverSelection,
			Clients:         installer,
			Shard:           r.Shard,
		},
	}

	if r.Markdown && !p.Matrix() && !HasRunBlocks(w.Spec) {
		return nil, badInput("--markdown applies to runs with variants, several targets or several rounds, growth blocks, or a compared sequence (run.compare_by); this run has none of them (use `mongobench compare --markdown` to compare results files)")
	}

	if err := checkDurationApplies(w.Spec, r.Duration); err != nil {
		return nil, err
	}

	if err := checkShardPlan(r.Shard, variants[0].Spec, p.Matrix(), r.URI, targetList); err != nil {
		return nil, err
	}

	return p, nil
}

// compileVariants returns the compiled specs to run: one per variant, or
// the workload itself, with the request's overrides applied.
func compileVariants(r *Request) ([]*bench.Compiled, error) {
	w := r.Workload

	specs, errs := w.Spec.VariantSpecs()
	if len(errs) > 0 {
		return nil, badInput("%s: invalid variants: %v", r.Path, errors.Join(errs...))
	}

	if len(specs) == 1 && specs[0] == w.Spec {
		applyOverrides(w.Spec, r)
		if err := checkBudget(w.Spec, r.Concurrency); err != nil {
			return nil, err
		}

		return []*bench.Compiled{w}, nil
	}

	out := make([]*bench.Compiled, 0, len(specs))

	for _, s := range specs {
		s.Seed = w.Spec.Seed
		applyOverrides(s, r)
		if err := checkBudget(s, r.Concurrency); err != nil {
			return nil, err
		}

		c, errs := bench.Compile(s)
		if len(errs) > 0 {
			return nil, badInput("%s: variant %q: %v", r.Path, s.Variant, errors.Join(errs...))
		}

		out = append(out, c)
	}

	return out, nil
}

// applyOverrides applies the request's overrides to every phase they make
// sense for: concurrency to closed-loop workers, duration to phases timed
// by a duration (a trial duration first, the request's over it).
func applyOverrides(spec *workload.Spec, r *Request) {
	phases, _ := spec.PhaseList()

	if r.MaxOperations > 0 {
		_ = spec.SetMaxOperations(r.MaxOperations) // checked on the base spec by New
	}

	if r.Client != "" {
		spec.Run.Client = r.Client
	}

	if r.MinEffect != "" {
		spec.Run.MinEffect = r.MinEffect
	}

	if r.Concurrency > 0 {
		spec.Run.Concurrency = r.Concurrency

		for _, p := range phases {
			p.Concurrency = r.Concurrency
		}
	}

	spec.SetDuration(spec.Trials.Duration.D())
	spec.SetDuration(r.Duration)
	spec.SetBlocksDuration(r.Duration)
}

// checkBudget re-checks the workload's memory caps once the overrides are
// applied: --concurrency can multiply the workers of every phase past what
// the file was validated with.
func checkBudget(s *workload.Spec, concurrency int) error {
	errs := s.CheckBudget()
	if len(errs) == 0 {
		return nil
	}

	return badInput("with --concurrency %d: %v", concurrency, errors.Join(errs...))
}

// trialRounds is the number of trial rounds of a run with this many
// variants and targets: the override, run.rounds, trials.rounds, or the
// default (enough for a confidence interval when something is compared).
func trialRounds(spec *workload.Spec, override, variants, nTargets int) int {
	return spec.TrialRounds(override, variants > 1 || nTargets > 1)
}

// checkDurationApplies refuses a duration override on a workload none of
// whose phases is timed by a duration or grows by blocks (they end after
// max_operations or stages), where it would be silently ignored. For
// growth blocks it is the blocks' until.duration (SetBlocksDuration).
func checkDurationApplies(spec *workload.Spec, d time.Duration) error {
	if d <= 0 {
		return nil
	}

	phases, _ := spec.PhaseList()
	for _, p := range phases {
		if p.Duration > 0 || p.Blocks != nil {
			return nil
		}
	}

	return badInput("--duration applies to phases timed by a duration and to growth blocks, and no phase of %s is either (they end by max_operations or stages)", spec.Name)
}

// HasRunBlocks reports whether a single run of spec can end with a
// comparison block, so that a Markdown output has something to hold: it
// grows blocks, ranks the operations of its phases (run.compare_operations),
// or names its figure and runs a sequence.
func HasRunBlocks(spec *workload.Spec) bool {
	phases, _ := spec.PhaseList()

	for _, p := range phases {
		if p.Blocks != nil || spec.Run.CompareOperations || (len(p.Sequence) > 0 && (spec.Run.CompareBy != "" || spec.Run.CompareCost)) {
			return true
		}
	}

	return false
}

// checkShardPlan refuses what a sharded run cannot do: a comparison
// (variants, targets, rounds), or a workload whose phases cannot be shared.
func checkShardPlan(sh *bench.Shard, spec *workload.Spec, matrix bool, uri string, targetList []targets.TargetSpec) error {
	if sh == nil {
		return nil
	}

	if matrix {
		return badInput("--shard runs one workload on one target: a comparison (variants, several targets or rounds) cannot be sharded")
	}

	// A server mongobench starts is the process's own: the shards would
	// each measure a different one.
	shared := uri != "" && len(targetList) == 0 || len(targetList) == 1 && targetList[0].Kind == targets.KindURI
	if !shared {
		return badInput("--shard needs a server every shard reaches: give --uri (or a uri target); a server mongobench starts is each process's own")
	}

	if err := sh.CheckShares(spec); err != nil {
		return badInput("%v", err)
	}

	return nil
}
