package bench

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// Compiled is a parsed workload with its templates compiled: what a trial
// runs.
type Compiled struct {
	Spec  *workload.Spec
	Env   *datagen.Env
	Ops   []*op.Operation
	Loads []*op.Load
}

// Compile compiles a spec's templates and operations.
func Compile(spec *workload.Spec) (*Compiled, []error) {
	// Every target must be one the registry of kinds can launch.
	if errs := spec.CheckTargets(targets.Validate); len(errs) > 0 {
		return nil, errs
	}

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		return nil, yamlpos.WithFile(spec.File(), errs)
	}

	ops, errs := op.Compile(spec, env)
	if len(errs) > 0 {
		return nil, errs
	}

	loads, errs := op.CompileLoad(spec, env)
	if len(errs) > 0 {
		return nil, errs
	}

	// The client stack must be able to run every phase and operation.
	if errs := client.Check(spec); len(errs) > 0 {
		return nil, errs
	}

	// Every phase's load model needs an executor in the engine.
	phases, paths := spec.PhaseList()
	for i, p := range phases {
		if err := runner.CheckModel(p.Model()); err != nil {
			return nil, []error{fmt.Errorf("%s: %s: %w", spec.File(), paths[i], err)}
		}
	}

	return &Compiled{Spec: spec, Env: env, Ops: ops, Loads: loads}, nil
}

// Plan is a benchmark to run: every variant on every target, Rounds times.
type Plan struct {
	// Path is the workload file, recorded in the results.
	Path string

	// Base is the workload as read, before its variants were applied.
	Base *workload.Spec

	// Variants are the compiled specs to run, at least one.
	Variants []*Compiled

	// Targets are the servers to run on; none means the default target:
	// Options.URI, or the embedded server when that is empty too.
	Targets []targets.TargetSpec

	// Rounds is the number of interleaved trial rounds.
	Rounds int

	Options Options
}

// Options are the settings of a plan that are not the workload's.
type Options struct {
	// URI is the connection string of the default target: the embedded
	// server is started when it is empty and no target is named.
	URI string

	// ServerSelection is how long an operation waits for a reachable
	// server.
	ServerSelection time.Duration

	// AllowExisting lets a trial use a database mongobench did not create.
	AllowExisting bool

	// KeepDB keeps the workload's database after each trial.
	KeepDB bool

	// OwnerKey signs the owner records of the databases the run creates
	// and verifies those it finds (see target.OwnerKey): without it, no
	// database is claimed.
	OwnerKey *targets.OwnerKey

	// NoExplain skips explaining the operations after the run.
	NoExplain bool

	// StatsInterval is how often server counters are sampled; 0 disables.
	StatsInterval time.Duration

	// Version is the mongobench version recorded in the results.
	Version string

	// Clients finds the installed adapters of external client stacks
	// (run.client); nil refuses workloads that name one.
	Clients *client.Installer

	// ClientProfile, when not empty, asks each trial's adapter for a CPU
	// profile written with this path prefix (numbered in a matrix).
	ClientProfile string

	// Shard, when set, makes the run one shard of a distributed run; a
	// sharded plan runs one trial (no matrix).
	Shard *Shard

	// RunLog is where a single trial streams its measurements (see
	// package runlog), and from which its results are built; empty
	// keeps the log in a temporary directory until the results are built.
	// A matrix's trials use TrialLogs.
	RunLog string

	// TrialLogs is the directory where a comparison run keeps its trials'
	// run logs as they run (see TrialsDirFor and FinishTrials); empty
	// keeps each in a temporary directory until its results are built.
	// The caller removes it once the comparison's results are written.
	TrialLogs string

	// Crash is how the durability phase launches the servers it crashes
	// (the serve command for the embedded kinds); see
	// targets.CrashOptions.
	Crash targets.CrashOptions
}

// Matrix reports whether the plan compares something: several variants,
// several targets or several rounds. Its result is then a matrix.
func (p *Plan) Matrix() bool {
	return len(p.Variants) > 1 || len(p.Targets) > 1 || p.Rounds > 1
}

// Messages is where a run tells its user what it does. Messages are lines
// for standard error; the command line decides how they are shown.
type Messages interface {
	// Printf writes a message (its format ends with a newline): what a
	// target is, notes on it, warnings.
	Printf(format string, args ...any)

	// Step records what the run does now, so that an interrupt can say
	// what the stop waits for.
	Step(format string, args ...any)
}

// Hooks connect a run to its caller; every field may be left zero.
type Hooks struct {
	// Messages receives the run's messages; nil drops them.
	Messages Messages

	// Observer returns the progress observer of a trial; nil, or a nil
	// observer, shows no progress.
	Observer func() runner.Observer

	// CloseObserver ends an observer's live display once its trial is
	// over, however it ended.
	CloseObserver func(runner.Observer)

	// OnHardExit registers a cleanup (removing a server's directory,
	// stopping it) for a forced exit, when deferred cleanup will not run,
	// and returns the function that unregisters it after normal cleanup.
	OnHardExit func(cleanup func()) (unregister func())

	// Logger receives the logs of the servers the run starts; nil
	// discards them.
	Logger *slog.Logger

	// Now is the clock of the results' timestamps; nil is time.Now.
	Now func() time.Time
}

// Outcome is what a run produced.
type Outcome struct {
	// Result is the results file's model, not yet sanitized.
	Result *result.Result

	// Final is how the last phase of a single trial ended (nil for a
	// matrix), for the exit code.
	Final *runner.PhaseResult

	// FirstError is the first operation error of a single trial's last
	// phase, with its connection string masked; empty when there was
	// none.
	FirstError string

	// Failures are the failures of a matrix's targets, one message each.
	Failures []string

	// TrialLogs is the directory holding a comparison's trial run logs
	// (Options.TrialLogs), to remove once its results are written.
	TrialLogs string

	close func()
}

// Close stops the targets the run started and disconnects. It is called
// after the results are written, so that an interrupted run saves its
// results before it waits for servers to stop.
func (o *Outcome) Close() {
	if o.close != nil {
		o.close()
		o.close = nil
	}
}

// InputError is a failure caused by the user's input (a bad URI, a
// database mongobench may not use): the command line exits with its
// bad-input code. Every other error of Run is a failed run.
type InputError struct{ msg string }

// Error returns the message, ready to print.
func (e *InputError) Error() string { return e.msg }

func badInput(format string, args ...any) error {
	return &InputError{msg: fmt.Sprintf(format, args...)}
}

func failed(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

// run is a plan in progress, with its hooks filled in.
type run struct {
	plan  *Plan
	opts  *Options
	hooks Hooks
	msg   Messages

	// clientTrials numbers the client profiles of a matrix's trials.
	clientTrials atomic.Int64
}

type noMessages struct{}

func (noMessages) Printf(string, ...any) {}
func (noMessages) Step(string, ...any)   {}

// Run runs the plan. A plan of one variant on one target in one round runs
// a single trial with evidence (server counters, explain); any other is a
// matrix whose result holds every trial and the verdicts. On success the
// returned Outcome's Close must be called once the results are written; on
// an error everything is already closed.
func Run(ctx context.Context, plan *Plan, hooks Hooks) (*Outcome, error) {
	if hooks.Messages == nil {
		hooks.Messages = noMessages{}
	}

	if hooks.Now == nil {
		hooks.Now = time.Now
	}

	if hooks.OnHardExit == nil {
		hooks.OnHardExit = func(func()) func() { return func() {} }
	}

	r := &run{plan: plan, opts: &plan.Options, hooks: hooks, msg: hooks.Messages}

	if plan.Matrix() {
		return r.matrix(ctx)
	}

	return r.single(ctx)
}

// single runs one trial of the plan's only variant on its only target.
func (r *run) single(ctx context.Context) (*Outcome, error) {
	var (
		tgt *openedTarget
		err error
	)

	if len(r.plan.Targets) == 1 {
		tgt, err = r.openLaunched(ctx, r.plan.Targets[0])
	} else {
		tgt, err = r.openTarget(ctx)
	}

	if err != nil {
		return nil, err
	}

	// Closed here on an error or a panic, else by Outcome.Close.
	handedOver := false

	defer func() {
		if !handedOver {
			tgt.close(r.msg)
		}
	}()

	info, err := r.describe(ctx, tgt)
	if err != nil {
		return nil, err
	}

	v := r.plan.Variants[0]

	res, final, err := r.executeTrial(ctx, tgt, info, v, trialOptions{
		evidence: true, runLog: r.opts.RunLog, thresholds: v.Spec.Thresholds.Rules,
	})
	if err != nil {
		return nil, err
	}

	res.Durability = r.durabilityPhase(ctx, r.plan.Targets)

	handedOver = true
	out := &Outcome{Result: res, Final: final, close: func() { tgt.close(r.msg) }}
	if final != nil && final.FirstError != nil {
		out.FirstError = redact.Error(final.FirstError, tgt.uri)
	}

	return out, nil
}
