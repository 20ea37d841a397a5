package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/verdict"
	"github.com/mongobench/mongobench/internal/targets"
)

// matrix runs every variant on every target in interleaved rounds and
// computes the verdicts. Every target is opened once, before the first
// round, and stays up until the Outcome is closed, so that the rounds can
// alternate between targets as well as variants.
func (r *run) matrix(ctx context.Context) (*Outcome, error) {
	base, variants, targetList := r.plan.Base, r.plan.Variants, r.plan.Targets

	if len(targetList) == 0 {
		targetList = []targets.TargetSpec{targets.DefaultSpec(r.opts.URI)}
	}

	rounds := r.plan.Rounds
	started := r.hooks.Now()

	m := &result.Matrix{Rounds: rounds}
	for _, v := range variants {
		m.Variants = append(m.Variants, variantName(v.Spec))
	}

	r.msg.Printf("Comparing %d variant(s) on %d target(s) in %d interleaved round(s).\n", len(variants), len(targetList), rounds)

	if need := verdict.MinSamples(verdict.Paired, analysis.MatrixAlpha); rounds < need && (len(variants) > 1 || len(targetList) > 1) {
		r.msg.Printf("Warning: %d round(s) are fewer than the %d a 95%% confidence interval needs; every verdict will be inconclusive.\n",
			rounds, need)
	}

	var failures []string

	fail := func(i int, err error) {
		m.Targets[i].Error = err.Error()
		failures = append(failures, err.Error())
		r.msg.Printf("Target %s failed: %v\n", m.Targets[i].Name, err)
	}

	opened := make([]*matrixTarget, len(targetList))

	closeAll := func() {
		for _, mt := range opened {
			if mt != nil {
				if !r.opts.KeepDB {
					mt.dropKept(r.msg)
				}

				mt.tgt.close(r.msg)
			}
		}
	}

	// Closed here on a panic, else by Outcome.Close.
	handedOver := false

	defer func() {
		if !handedOver {
			closeAll()
		}
	}()

	for i, ts := range targetList {
		m.Targets = append(m.Targets, result.MatrixTarget{Name: ts.Name, Kind: ts.Kind})

		if ctx.Err() != nil {
			continue
		}

		mt, err := r.openMatrixTarget(ctx, ts, &m.Targets[i])
		opened[i] = mt

		if err != nil && ctx.Err() == nil {
			fail(i, err)
		}
	}

	res := &result.Result{
		SchemaVersion:     result.SchemaVersion,
		MongobenchVersion: r.opts.Version,
		Workload:          result.Workload{Name: base.Name, File: r.plan.Path, CompareOn: base.Run.CompareOn, Spec: base, Source: string(base.Source())},
		ResultKind:        result.KindMatrix,
		Target:            result.Target{Notes: []string{fmt.Sprintf("%d targets × %d variants × %d rounds", len(m.Targets), len(m.Variants), rounds)}},
		StartedAt:         started,
		Seed:              base.Seed,
		Concurrency:       base.Run.Concurrency,
		Status:            result.StatusCompleted,
		Matrix:            m,
	}

	trialLogs := r.opts.TrialLogs
	if trialLogs != "" {
		if err := writeTrialsManifest(trialLogs, res); err != nil {
			return nil, failed("%v", err)
		}
	}

	seq := 0

	for round := 1; round <= rounds && ctx.Err() == nil; round++ {
		for _, c := range roundOrder(len(targetList), len(variants), round) {
			mt, v := opened[c.target], variants[c.variant]
			if mt == nil || mt.failed || ctx.Err() != nil {
				continue
			}

			runLog := ""
			if trialLogs != "" {
				runLog = filepath.Join(trialLogs, trialLogName(seq, round, c.target, c.variant))
				seq++
			}

			tr, err := r.matrixTrial(ctx, mt, v, round, rounds, runLog)
			if tr != nil {
				m.Trials = append(m.Trials, *tr)
			}

			if err != nil && ctx.Err() == nil {
				mt.failed = true
				fail(c.target, err)
			}
		}
	}

	if ctx.Err() == nil {
		res.Durability = r.durabilityPhase(ctx, targetList)
	}

	res.DurationS = time.Since(started).Seconds()

	switch {
	case ctx.Err() != nil:
		res.Status, res.StatusReason = result.StatusInterrupted, "interrupted by the user"
	case len(failures) > 0:
		res.Status, res.StatusReason = result.StatusAborted, strings.Join(failures, "; ")
	}

	handedOver = true

	return &Outcome{Result: res, Failures: failures, TrialLogs: trialLogs, close: closeAll}, nil
}

func variantName(s *workload.Spec) string {
	if s.Variant != "" {
		return s.Variant
	}

	return s.Name
}

// matrixTarget is an open target of a comparison run.
type matrixTarget struct {
	name   string
	tgt    *openedTarget
	info   targets.ServerInfo
	failed bool // a trial failed: the target runs no more trials

	// kept are the databases its trials claimed, dropped once when the
	// target closes rather than after every trial: each trial resets its
	// database (drops its collections) anyway, and FerretDB on SQLite
	// fails with disk I/O errors when a dropped database is created again.
	kept map[string]targets.Ownership
}

// dropKept drops the databases the target's trials kept, once, bounded
// as after a single trial: briefly when a trial failed (the server may be
// gone), else as for a live server.
func (mt *matrixTarget) dropKept(msgs Messages) {
	bound := liveCleanupTimeout
	if mt.failed {
		bound = cleanupTimeout
	}

	for db, own := range mt.kept {
		dropAfterRun(msgs, mt.tgt, db, own, bound)
	}

	mt.kept = nil
}

// openMatrixTarget launches (or connects to) a target and describes it in
// mt. The returned target, when not nil, must be closed, even with an error.
func (r *run) openMatrixTarget(ctx context.Context, ts targets.TargetSpec, mt *result.MatrixTarget) (*matrixTarget, error) {
	tgt, err := r.openLaunched(ctx, ts)
	if err != nil {
		return nil, err
	}

	mt.URI = redact.URI(tgt.uri)
	out := &matrixTarget{name: ts.Name, tgt: tgt}

	info, err := r.describe(ctx, tgt)
	if err != nil {
		out.failed = true
		return out, err
	}

	out.info = info
	mt.ServerVersion, mt.Backend = info.Summary(), info.Backend
	mt.Notes = append(info.Notes(), tgt.launched.Notes...)

	return out, nil
}

// openLaunched launches (or, for uri, just names) a target and connects.
func (r *run) openLaunched(ctx context.Context, ts targets.TargetSpec) (*openedTarget, error) {
	l, err := targets.Launch(ctx, ts, targets.LaunchOptions{Logger: r.hooks.Logger})
	if err != nil {
		return nil, failed("target %q: %s", ts.Name, redact.Error(err, ts.URI))
	}

	t := &openedTarget{kind: ts.Kind, name: ts.Name, uri: l.URI, launched: l}
	t.unhook = r.hooks.OnHardExit(func() { _ = l.Stop() })

	r.msg.Printf("Target %s: %s\n", ts.Name, l.Description)

	if err := t.connect(ctx, r.msg, targets.ConnectOptions{MaxPoolSize: l.MaxPoolSize, Timeout: r.opts.ServerSelection}); err != nil {
		return nil, err
	}

	return t, nil
}

// trialCell is one (target, variant) pair of a round, by index.
type trialCell struct{ target, variant int }

// roundOrder is the order in which round r (from 1) runs the cells: target
// by target, variant by variant, reversed in every even round (A B C, then
// C B A, …). Over each pair of rounds every cell runs once early and once
// late by the same amount, so that drift during a round (a warming cache,
// a neighbour's job) favours no target and no variant.
func roundOrder(nTargets, variants, r int) []trialCell {
	cells := make([]trialCell, 0, nTargets*variants)

	for t := range nTargets {
		for v := range variants {
			cells = append(cells, trialCell{t, v})
		}
	}

	if r%2 == 0 {
		slices.Reverse(cells)
	}

	return cells
}

// matrixTrial runs one trial of variant v on mt in round r. It returns the
// trial when it measured something, and an error when the target failed
// (a trial that could not run, or aborted); an interruption is not a
// failure.
func (r *run) matrixTrial(ctx context.Context, mt *matrixTarget, v *Compiled, round, rounds int, runLog string) (*result.Trial, error) {
	name := variantName(v.Spec)
	r.msg.Printf("== %s · %s · round %d/%d\n", mt.name, name, round, rounds)

	keep := func(db string, own targets.Ownership) {
		if mt.kept == nil {
			mt.kept = map[string]targets.Ownership{}
		}

		mt.kept[db] = own
	}

	res, final, err := r.executeTrial(ctx, mt.tgt, mt.info, v, trialOptions{evidence: round == rounds, keep: keep, runLog: runLog})
	if err != nil {
		return nil, err
	}

	res.Workload.Source = "" // the matrix keeps the file's text once
	tr := &result.Trial{Target: mt.name, Variant: name, Round: round, Result: res}

	if final != nil && final.Status == runner.StatusAborted {
		return tr, fmt.Errorf("%s · %s · round %d aborted: %s", mt.name, name, round, final.Reason)
	}

	return tr, nil
}
