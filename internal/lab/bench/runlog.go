package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/mongobench/mongobench/internal/analysis/finish"
	"github.com/mongobench/mongobench/internal/base/tempdir"
	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/results/runlog"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// keepIntervals is how many closed intervals a phase's registries keep in
// memory while its run log has them all: the engine needs none of them (the
// terminal and the pacing controllers see each interval as it closes, and
// the summaries come from the cumulative totals), a few are kept for
// whoever inspects a registry.
const keepIntervals = 4

// trialLog streams one trial's phases to its run log; the engine calls it
// as its IntervalSink.
type trialLog struct {
	w *runlog.Writer

	// phase is the index of the phase running, bgOps its background jobs'
	// operations.
	phase int
	bgOps []string

	// temp is the directory of a run log nobody asked for (a matrix
	// trial's, or a run without Options.RunLog), removed after the build.
	temp string
}

// openTrialLog creates the trial's run log at path, or in a temporary
// directory when path is empty, and writes its header from the result
// builder's description of the run.
func openTrialLog(path string, rb *resultBuilder) (*trialLog, error) {
	tl := &trialLog{phase: -1}

	if path == "" {
		// Marked with this process, so that a later run removes it if
		// this one is killed.
		dir, err := tempdir.Create("", "mongobench-runlog-")
		if err != nil {
			return nil, failed("creating the run log: %v", err)
		}

		tl.temp, path = dir, filepath.Join(dir, "trial"+runlog.Suffix)
	}

	r := rb.res

	w, err := runlog.Create(path, runlog.Header{
		MongobenchVersion: r.MongobenchVersion, Workload: r.Workload, Target: r.Target,
		Seed: r.Seed, Concurrency: r.Concurrency, StartedAt: r.StartedAt,
	})
	if err != nil {
		tl.discard()
		return nil, failed("%v", err)
	}

	tl.w = w

	return tl, nil
}

// abandon closes the log of a trial that ended before its results were
// built (an error at the shards' start, say) and removes it when it was
// temporary; a log of the user's stays, for finish. After finish it does
// nothing more: the writer is closed and a temporary log already gone.
func (tl *trialLog) abandon() {
	_ = tl.w.Close()
	tl.discard()
}

// discard removes a temporary run log.
func (tl *trialLog) discard() {
	if tl.temp != "" {
		_ = os.RemoveAll(tl.temp)
	}
}

// beginLoad opens the log's record of a load step.
func (tl *trialLog) beginLoad(name string) {
	tl.phase++
	tl.bgOps = nil
	tl.w.StartPhase(runlog.PhaseStart{
		Phase: tl.phase, Name: result.PhaseLoad + ":" + strings.TrimPrefix(name, "load_"), Model: "load",
	})
}

// beginPhase opens the log's record of a measured phase.
func (tl *trialLog) beginPhase(p *workload.Phase, decode map[string]string) {
	tl.phase++
	tl.bgOps = nil

	for _, b := range p.Background {
		tl.bgOps = append(tl.bgOps, b.Operation)
	}

	tl.w.StartPhase(runlog.PhaseStart{
		Phase: tl.phase, Name: p.Name, Model: p.Model(), WarmupS: p.Warmup.D().Seconds(),
		Excluded: !p.Measured(), Decode: decode, Background: tl.bgOps,
	})
}

// Interval logs one closed interval (runner.IntervalSink).
func (tl *trialLog) Interval(_ runner.Phase, rec runner.IntervalRecord) {
	var target *result.PlanPoint
	if t := rec.Target; t != nil {
		target = &result.PlanPoint{ElapsedS: t.Elapsed.Seconds(), Rate: t.Rate, Concurrency: t.Concurrency}
	}

	var pacing []runlog.PacingRecord

	for _, jp := range rec.Pacing {
		op := ""
		if jp.Job < len(tl.bgOps) {
			op = tl.bgOps[jp.Job]
		}

		pt := jp.Point
		pacing = append(pacing, runlog.PacingRecord{Job: jp.Job, Operation: op, Point: result.PacingPoint{
			OffsetS: pt.Offset.Seconds(), Rate: pt.Rate, ObservedUS: micros(pt.Observed),
			Samples: pt.Samples, Action: string(pt.Action),
		}})
	}

	tl.w.Interval(tl.phase, rec.Index, rec.Interval, rec.Service, target, pacing)
}

// Block logs one growth block (runner.IntervalSink).
func (tl *trialLog) Block(_ runner.Phase, blk runner.Block) {
	tl.w.Block(runlog.BlockRecord{
		Phase: tl.phase, Index: blk.Index, Start: blk.Start.Round(0), End: blk.End.Round(0), Complete: blk.Complete,
		Collection: result.CollectionSize{
			Name: blk.Size.Collection, Documents: blk.Size.Documents, DataBytes: blk.Size.DataBytes,
			StorageBytes: blk.Size.StorageBytes, IndexBytes: blk.Size.IndexBytes, Note: blk.Size.Note, Error: blk.Size.Error,
		},
		FirstInterval: blk.FirstInterval, EndInterval: blk.EndInterval,
	})
}

// endPhase logs what is known at a phase's end: how it ended, its
// schedule and its background jobs (their trajectories are in the
// intervals).
func (tl *trialLog) endPhase(pr *runner.PhaseResult) {
	e := runlog.PhaseEnd{
		Phase: tl.phase, Status: string(pr.Status), Reason: pr.Reason,
		Schedule: convertSchedule(pr.Schedule, pr.Phase.Concurrency),
	}

	for _, bg := range pr.Background {
		e.Background = append(e.Background, convertBackground(bg, false))
	}

	tl.w.EndPhase(e)
}

// shard records which shard of a distributed run this is, once its share is
// known (res.Shard set); a run that is not sharded logs nothing.
func (tl *trialLog) shard(res *result.Result) {
	if res.Shard != nil {
		tl.w.Shard(runlog.ShardRecord{Shard: res.Shard, Concurrency: res.Concurrency})
	}
}

// finish writes the run's end and returns the results the log's writer
// built as the run went (the same Build would read from the log, so they
// cannot disagree with it), at a cost that does not grow with the run's
// length: a run stopped after hours still writes its results at once.
// rules are the workload's thresholds, checked on the phases as logged
// (none for a matrix trial).
func (tl *trialLog) finish(_ context.Context, res *result.Result, rules []workload.ThresholdRule) (*result.Result, error) {
	defer tl.discard()

	end := runlog.End{
		Status: res.Status, StatusReason: res.StatusReason, DurationS: res.DurationS,
		Server: res.Server, Explain: res.Explain, Client: res.Client,
	}

	if len(rules) > 0 {
		// The phases are all logged: the results so far have the phases
		// the results will have, which the thresholds are checked on.
		sofar, err := tl.w.Result()
		if err != nil {
			return nil, failed("building the results from the run log: %v", err)
		}

		// The finisher's check, recorded so that finish of the log
		// reads the rules back in the workload's order.
		end.Thresholds = finish.Thresholds(sofar, rules)
	}

	if err := tl.w.Finish(end); err != nil {
		return nil, failed("%v", err) // names the run log
	}

	built, err := tl.w.Result()
	if err != nil {
		return nil, failed("building the results from the run log: %v", err)
	}

	return built, nil
}
