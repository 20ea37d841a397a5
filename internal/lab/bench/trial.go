package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/base/alarm"
	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/engine/errkind"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// describe asks the server what it is and prints it with its caveats.
func (r *run) describe(ctx context.Context, tgt *openedTarget) (targets.ServerInfo, error) {
	info, err := targets.Describe(ctx, tgt.client)
	if err != nil {
		return info, failed("asking the server who it is: %s", redact.Error(err, tgt.uri))
	}

	if tgt.embedded != nil {
		info = tgt.embedded.Annotate(info)
	}

	if tgt.launched != nil {
		info = tgt.launched.Annotate(info)
	}

	// Printed even with --quiet: they say what the numbers describe.
	r.msg.Printf("Server: %s\n", info.Summary())

	for _, n := range info.Notes() {
		r.msg.Printf("Note: %s\n", n)
	}

	return info, nil
}

// trialOptions says what a trial gathers besides its measurements.
type trialOptions struct {
	// evidence samples server counters and explains the operations.
	evidence bool

	// keep, when set, takes the claimed database instead of dropping it
	// after the trial: the caller drops it once, after its last trial.
	keep func(db string, own targets.Ownership)

	// runLog is where the trial's run log goes; empty puts it in a
	// temporary directory, removed once the results are built from it.
	runLog string

	// thresholds are checked on the trial's phases and recorded in its
	// run log's end (a single run's; a matrix applies none).
	thresholds []workload.ThresholdRule
}

// executeTrial runs one variant on one target: claims and resets the
// database, loads it, runs the phases and builds the result.
func (r *run) executeTrial(ctx context.Context, tgt *openedTarget, info targets.ServerInfo,
	w *Compiled, opts trialOptions,
) (*result.Result, *runner.PhaseResult, error) {
	spec := w.Spec
	w.Env.ResetKeySpaces() // the database is reset: so are the live key ranges
	db := tgt.client.Database(spec.Database)

	sr, err := r.shardRun(db, spec)
	if err != nil {
		return nil, nil, err
	}

	own, err := r.prepareShardDatabase(ctx, tgt, spec, sr)
	if err != nil {
		return nil, nil, err
	}

	var final *runner.PhaseResult

	switch {
	case sr != nil && !sr.sets():
		defer func() { sr.finished(r.msg, final) }()
	case r.opts.KeepDB:
	case opts.keep != nil:
		opts.keep(spec.Database, own)
	default:
		defer func() {
			if sr == nil || sr.finished(r.msg, final) {
				dropAfterRun(r.msg, tgt, spec.Database, own, cleanupBound(final))
			}
		}()
	}

	// Sampling stops without a final sample when the run did not complete
	// (its server may be unreachable): see stopSampling below.
	sctx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()

	var smp *sampling
	if opts.evidence && r.opts.StatsInterval > 0 {
		smp = startSampling(sctx, r.msg, tgt, spec, r.opts.StatsInterval)
	}

	eng := &runner.Engine{
		DB:         db,
		Env:        w.Env,
		Interval:   spec.Run.Interval.D(),
		AbortAfter: spec.Run.AbortAfter.D(),
		Timeout:    spec.Run.Timeout.D(),

		Unreachable: tgt.selection,
		NewAlarm:    alarm.New,
	}

	if r.hooks.Observer != nil {
		eng.Observer = r.hooks.Observer()
	}

	if r.hooks.CloseObserver != nil {
		defer r.hooks.CloseObserver(eng.Observer)
	}

	rb := newResultBuilder(r.hooks.Now(), r.opts.Version, r.plan.Path, spec, tgt, info)

	var (
		tc      *trialClient
		starved int64
	)

	if client.External(spec.Run.Client) {
		if tc, err = r.startClient(ctx, tgt, w); err != nil {
			return nil, nil, err
		}

		eng.Client = tc.adapter
		defer func() {
			if tc != nil { // an early return: the adapter still runs
				tc.finish(0)
			}
		}()
	}

	tl, err := openTrialLog(opts.runLog, rb)
	if err != nil {
		return nil, nil, err
	}

	defer tl.abandon()

	eng.Sink, eng.KeepIntervals = tl, keepIntervals

	for _, l := range sr.loads(w) {
		smp.setPhase(l.Name())
		r.msg.Step("waiting for the %s load's insert batches in flight (at most %d), then writing the results so far", l.Name(), l.Spec.Concurrency)
		tl.beginLoad(l.Name())
		final = eng.Load(ctx, l)
		tl.endPhase(final)

		if final.Status != runner.StatusCompleted {
			break
		}
	}

	if err := sr.start(ctx, w, final, r.msg, eng, rb.res); err != nil {
		return nil, nil, err
	}

	tl.shard(rb.res)

	phases, _ := spec.PhaseList()
	for _, p := range phases {
		if final != nil && final.Status != runner.StatusCompleted {
			break
		}

		if p, err = sr.share(p); err != nil {
			return nil, nil, err
		}

		smp.setPhase(p.Name)
		r.msg.Step("waiting for the operations in flight of phase %q (at most %d), then writing the results so far", p.Name, inFlightBound(p))
		tl.beginPhase(p, rb.decode)
		final = eng.RunPhase(ctx, runner.PhasePlan{Spec: p, Mix: spec.MixOperations(p), Ops: w.Ops})
		eng.StartAt = time.Time{} // only the first phase waits for the shards' start
		tl.endPhase(final)
		starved += final.Starved
	}

	if tc != nil {
		r.msg.Step("stopping the %s adapter (it writes its profile first)", spec.Run.Client)
		rb.res.Client = tc.finish(starved)
		tc = nil
	}

	r.msg.Step("gathering the results")

	res := rb.build(final)
	if final == nil || final.Status != runner.StatusCompleted {
		stopSampling()
	}

	res.Server = smp.stop()

	// An aborted run's server is unreachable or failing: explaining would
	// only wait for it.
	if opts.evidence && !r.opts.NoExplain && ctx.Err() == nil && final != nil && final.Status == runner.StatusCompleted {
		res.Explain = explainOperations(ctx, db, w)
	}

	// The results are built from the run log, findings included.
	r.msg.Step("building the results from the run log")

	res, err = tl.finish(ctx, res, opts.thresholds)
	if err != nil {
		return nil, nil, err
	}

	return res, final, nil
}

// inFlightBound is the most operations a phase's workers and background
// jobs can have in flight at once, for the messages of an interrupt.
func inFlightBound(p *workload.Phase) int {
	n := p.Concurrency
	if p.OpenLoop() {
		n = p.MaxInFlight
	}

	for _, s := range p.Stages {
		n = max(n, s.Concurrency)
	}

	for _, b := range p.Background {
		n += max(b.MaxInFlight, 1)
	}

	return n
}

// cleanupBound is how long dropping the database may take after a trial
// that ended as final did: cleanupTimeout after an abort or an interrupt (the
// server may be gone, or the user waits), liveCleanupTimeout after a run that
// completed, whose server answered until the end but may be slow to drop a
// large database. Giving up early against a live server would leave the
// drop running while the next trial claims the database.
func cleanupBound(final *runner.PhaseResult) time.Duration {
	if final != nil && final.Status == runner.StatusCompleted {
		return liveCleanupTimeout
	}

	return cleanupTimeout
}

// liveCleanupTimeout bounds dropping the database after a completed trial.
const liveCleanupTimeout = 30 * time.Second

// cleanupTimeout bounds each clean-up step against the server after a run
// (dropping the database, disconnecting), so that a dead server delays the
// exit by seconds, not by the driver's timeouts.
const cleanupTimeout = 3 * time.Second

// dropAfterRun drops the database mongobench created for the run, or, in a
// database it was only allowed to use, the collections it created there;
// it gives up after bound.
func dropAfterRun(msgs Messages, tgt *openedTarget, db string, own targets.Ownership, bound time.Duration) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()

	drop, what := targets.Drop, fmt.Sprintf("drop database %q", db)
	if !own.Owned {
		what = fmt.Sprintf("remove mongobench's collections from database %q", db)
		drop = func(ctx context.Context, client *mongo.Client, _ string, own targets.Ownership) error {
			return targets.RemoveCollections(ctx, client, own)
		}
	}

	msgs.Step("%s", what)

	if err := drop(ctx, tgt.client, db, own); err != nil {
		var fce *targets.ForeignCollectionError
		if errors.As(err, &fce) {
			msgs.Printf("Warning: %s\n", fce)
			return
		}

		msg := redact.Error(err, tgt.uri)
		if ctx.Err() != nil || errkind.Of(err) == errkind.Network {
			msg = fmt.Sprintf("gave up after %s: the server could not be reached", time.Since(start).Round(100*time.Millisecond))
		}

		msgs.Printf("Warning: could not %s after the run: %s\n", what, msg)
	}
}

// prepareDatabase claims the workload's database and gives it a clean
// slate, so that every run starts from the same state: a database
// mongobench owns has its collections dropped; in a database it may only use
// (--allow-existing-db), the collections an earlier run left are dropped and
// the workload's are recorded as mongobench's. Then the collections and
// indexes are created.
func prepareDatabase(ctx context.Context, client *mongo.Client, spec *workload.Spec, allowExisting, sharded bool,
	key *targets.OwnerKey,
) (targets.Ownership, error) {
	own, err := targets.Claim(ctx, client, spec.Database, allowExisting, key)
	if err != nil {
		var noe *targets.NotOwnedError
		if errors.As(err, &noe) {
			return own, badInput("%s", err)
		}

		return own, failed("claiming database %q: %v", spec.Database, err)
	}

	if own.Owned {
		return own, resetAndCreate(ctx, client, spec, own, createdCollections(spec, sharded))
	}

	if err := claimCollections(ctx, client, spec, &own); err != nil {
		return own, err
	}

	if err := createSchema(ctx, client.Database(spec.Database), spec); err != nil {
		if !own.Owned {
			_ = targets.RemoveCollections(ctx, client, own)
		}

		return own, err
	}

	return own, nil
}

// resetAndCreate empties a database mongobench owns and creates the
// workload's collections and indexes. An operation the previous trial
// abandoned at its end (the client stops waiting, the server does not) can
// still re-create a collection right after the reset, such as a
// createIndexes of the cleanup study: a collection that exists although the
// reset dropped it is then dropped again, a few times, before giving up.
func resetAndCreate(ctx context.Context, client *mongo.Client, spec *workload.Spec, own targets.Ownership, names []string) error {
	const tries = 4

	for try := 1; ; try++ {
		if err := targets.Reset(ctx, client, spec.Database, own, names); err != nil {
			if refusal(err) {
				return badInput("%s", err)
			}

			return failed("resetting database %q: %v", spec.Database, err)
		}

		err := op.CreateSchema(ctx, client.Database(spec.Database), spec)

		if try == tries || !setupRace(err) {
			if err != nil {
				return schemaFailure(spec, err)
			}

			return nil
		}

		select {
		case <-ctx.Done():
			return failed("setting up database %q: %v", spec.Database, ctx.Err())
		case <-time.After(time.Duration(try) * 250 * time.Millisecond):
		}
	}
}

// Server error codes of creating what exists already: a collection, or an
// index whose name or options differ from the one being created.
const (
	internalError         = 1
	namespaceExists       = 48
	indexOptionsConflict  = 85
	indexKeySpecsConflict = 86
)

// setupRace tells whether creating the schema after a reset failed because
// the previous trial's abandoned operations were still running on the
// server (they re-create a collection or an index just dropped; FerretDB on
// SQLite may also close the connection while two of them create one, or
// fail with an InternalError from SQLite's "index … already exists"), so
// that resetting again and retrying is the cure. The set-up is not measured,
// and a failure that persists still fails after a few tries.
func setupRace(err error) bool {
	if err == nil {
		return false
	}

	if mongo.IsNetworkError(err) {
		return true
	}

	var se mongo.ServerError

	return errors.As(err, &se) && (se.HasErrorCode(namespaceExists) || se.HasErrorCode(internalError) ||
		se.HasErrorCode(indexOptionsConflict) || se.HasErrorCode(indexKeySpecsConflict))
}

// createdCollections are the collections a run creates in the workload's
// database, which its owner record lists: the workload's, and the shards'
// meeting place when the run is sharded.
func createdCollections(spec *workload.Spec, sharded bool) []string {
	names := make([]string, 0, len(spec.Collections)+1)
	for _, c := range spec.Collections {
		names = append(names, c.Name)
	}

	if sharded {
		names = append(names, ShardCollection)
	}

	return names
}

// refusal tells whether err is mongobench refusing to touch data that is
// not verifiably its own, which the user settles (bad input, exit 2).
func refusal(err error) bool {
	var (
		noe *targets.NotOwnedError
		fce *targets.ForeignCollectionError
		cee *targets.CollectionExistsError
		nve *targets.NotVerifiedError
	)

	return errors.As(err, &noe) || errors.As(err, &fce) || errors.As(err, &cee) || errors.As(err, &nve)
}

// claimCollections records, in a database the user allowed mongobench to use
// (--allow-existing-db), the workload's collections as mongobench's, after
// removing those an earlier run left; a collection of the same name that
// mongobench did not create is bad input.
func claimCollections(ctx context.Context, client *mongo.Client, spec *workload.Spec, own *targets.Ownership) error {
	names := make([]string, 0, len(spec.Collections))
	for _, c := range spec.Collections {
		names = append(names, c.Name)
	}

	err := targets.ClaimCollections(ctx, client, own, names)

	var cee *targets.CollectionExistsError
	if errors.As(err, &cee) {
		return badInput("%s", err)
	}

	if err != nil {
		return failed("preparing database %q: %v", spec.Database, err)
	}

	return nil
}
