package bench

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mongooptions "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// Shard makes a run one shard of a distributed run: several mongobench
// processes, on one machine or many, that together apply one workload's
// load to one database.
type Shard struct {
	// Index is this shard's number, from 0; Count the number of shards.
	Index, Count int

	// StartAt is the wall-clock instant every shard starts measuring its
	// first phase; zero: each starts when it is ready, unless AutoStart.
	StartAt time.Time

	// AutoStart makes the shards meet through the target database: each
	// registers once shard 0's set-up is done, and shard 0 publishes the
	// start instant when all have (StartAt is then that instant).
	AutoStart bool

	// NoSetup is for a database set up beforehand, or a server that
	// stores nothing: no shard drops, creates or loads anything, and no
	// shard waits for another.
	NoSetup bool

	// Wait bounds every wait for the other shards: for shard 0's set-up,
	// for all shards at the start barrier, for the others to finish
	// before shard 0 drops the database.
	Wait time.Duration
}

// ShardCollection is the collection, in the workload's database, through
// which the shards of a run meet: shard 0's ready marker, the start
// barrier's registrations and instant, and the others' done markers. Shard
// 0's set-up empties it, and dropping the database at the end removes it.
const ShardCollection = "mongobench.shards"

// shardPoll is how often a waiting shard looks at the shard collection.
const shardPoll = 100 * time.Millisecond

// startLead is how far ahead of the barrier shard 0 puts the start
// instant, so that every shard sees it before it comes.
const startLead = 2 * time.Second

// Check refuses a plan a shard cannot run.
func (s *Shard) Check() error {
	switch {
	case s.Count < 1 || s.Index < 0 || s.Index >= s.Count:
		return badInput("shard %d/%d: the index must be between 0 and %d", s.Index, s.Count, s.Count-1)
	case s.AutoStart && s.NoSetup:
		return badInput("--start-at auto meets through the database shard 0 sets up; with --shard-setup none give --start-at TIME")
	case s.Wait <= 0:
		return badInput("--shard-wait must be > 0")
	}

	return nil
}

// CheckShares refuses a workload whose phases the shards cannot share (see
// workload.Phase.ShardShare), naming the file.
func (s *Shard) CheckShares(spec *workload.Spec) error {
	phases, _ := spec.PhaseList()
	for _, p := range phases {
		if _, err := p.ShardShare(s.Index, s.Count); err != nil {
			return badInput("%s: %v", spec.File(), err)
		}
	}

	return nil
}

// SpecHash is the SHA-256 of the workload as the results file records it,
// the same in every shard of one run.
func SpecHash(spec *workload.Spec) (string, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("hashing the workload: %w", err)
	}

	sum := sha256.Sum256(data)

	return hex.EncodeToString(sum[:]), nil
}

// shardRun is a shard's state during its trial.
type shardRun struct {
	*Shard
	coll    *mongo.Collection
	hash    string
	started time.Time // when this process began the trial
	running bool      // the shard got past set-up and the start barrier
}

// shardDoc is a document of the shard collection.
type shardDoc struct {
	ID       string           `bson:"_id"`
	Spec     string           `bson:"spec"`
	At       time.Time        `bson:"at"`
	Setup    time.Time        `bson:"setup,omitempty"`
	Counters map[string]int64 `bson:"counters,omitempty"`
	Status   string           `bson:"status,omitempty"`
}

func (s *shardRun) sets() bool { return s.Index == 0 && !s.NoSetup }

// ready is called after the load: shard 0 publishes its ready marker with
// the key counters the load left; the others wait for it and continue the
// counters from there. Then every shard takes its share of the keys and
// seeds, and, with AutoStart, the shards meet and learn the start instant.
func (s *shardRun) ready(ctx context.Context, c *Compiled, msgs Messages) error {
	if !s.NoSetup {
		if s.Index == 0 {
			doc := shardDoc{ID: "ready", Spec: s.hash, At: time.Now(), Setup: s.started, Counters: c.Env.Counters()}
			if err := s.put(ctx, doc); err != nil {
				return failed("publishing shard 0's ready marker: %v", err)
			}
		} else {
			msgs.Printf("Shard %d/%d: waiting for shard 0 to set up database %q (at most %s)\n", s.Index, s.Count, s.coll.Database().Name(), s.Wait)
			msgs.Step("waiting for shard 0 to set up the database (at most %s)", s.Wait)

			doc, err := s.await(ctx, "ready", "shard 0's set-up (its ready marker)", func(d *shardDoc) bool {
				// A marker from before this run (a database kept by
				// an earlier one) is older than the wait.
				return d.Setup.After(s.started.Add(-s.Wait))
			})
			if err != nil {
				return err
			}

			if err := c.Env.SetCounters(doc.Counters); err != nil {
				return badInput("shard %d/%d: shard 0 runs another workload: %v", s.Index, s.Count, err)
			}
		}
	}

	if err := c.Env.Shard(s.Index, s.Count); err != nil {
		return failed("%v", err)
	}

	if s.AutoStart {
		return s.barrier(ctx, msgs)
	}

	return nil
}

// barrier registers the shard and waits for the start instant, which shard
// 0 publishes once every shard has registered.
func (s *shardRun) barrier(ctx context.Context, msgs Messages) error {
	arrived := time.Now()

	if err := s.put(ctx, shardDoc{ID: fmt.Sprintf("arrive-%d", s.Index), Spec: s.hash, At: time.Now()}); err != nil {
		return failed("registering shard %d at the start barrier: %v", s.Index, err)
	}

	msgs.Printf("Shard %d/%d: waiting for all %d shards at the start barrier (at most %s)\n", s.Index, s.Count, s.Count, s.Wait)
	msgs.Step("waiting for all %d shards at the start barrier (at most %s)", s.Count, s.Wait)

	if s.Index == 0 {
		deadline := time.Now().Add(s.Wait)

		for {
			n, err := s.coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^arrive-"}}}, {Key: "spec", Value: s.hash}})
			if err != nil {
				return failed("counting the shards at the start barrier: %v", err)
			}

			if n >= int64(s.Count) {
				break
			}

			if time.Now().After(deadline) {
				return failed("start barrier: %d of %d shards arrived within --shard-wait %s", n, s.Count, s.Wait)
			}

			if err := SleepCtx(ctx, shardPoll); err != nil {
				return failed("interrupted at the start barrier")
			}
		}

		at := time.Now().Add(startLead).Truncate(time.Millisecond)
		if err := s.put(ctx, shardDoc{ID: "start", Spec: s.hash, At: at}); err != nil {
			return failed("publishing the start instant: %v", err)
		}

		s.StartAt = at.UTC()

		return nil
	}

	// Shard 0 publishes the instant a lead ahead of the last arrival, so
	// this run's is after this shard arrived; an earlier one, left in a
	// database an interrupted run kept, is not (the lead's worth of
	// tolerance is for the machines' clocks).
	doc, err := s.await(ctx, "start", "the start instant from shard 0", func(d *shardDoc) bool {
		return d.At.After(arrived.Add(-startLead))
	})
	if err != nil {
		return err
	}

	s.StartAt = doc.At.UTC()

	return nil
}

// finished is called by every shard when its phases are over: the others
// mark themselves done; shard 0 waits for them before its database is
// dropped, and reports whether it may drop it.
func (s *shardRun) finished(msgs Messages, last *runner.PhaseResult) bool {
	ctx, cancel := context.WithTimeout(context.Background(), s.Wait)
	defer cancel()

	if s.NoSetup {
		return false
	}

	// A shard 0 that failed before its phases (at the start barrier,
	// say) has no other shard running to wait for.
	if s.Index == 0 && !s.running {
		s.removeCollection(ctx, msgs)
		return true
	}

	final := "not started"
	if last != nil {
		final = string(last.Status)
	}

	if s.Index != 0 {
		if err := s.put(ctx, shardDoc{ID: fmt.Sprintf("done-%d", s.Index), Spec: s.hash, At: time.Now(), Status: final}); err != nil {
			msgs.Printf("Warning: could not tell shard 0 that shard %d is done: %v\n", s.Index, err)
		}

		return false
	}

	if final != string(runner.StatusCompleted) {
		msgs.Printf("Warning: shard 0 did not complete (%s); database %q is left for the other shards\n", final, s.coll.Database().Name())
		return false
	}

	others := fmt.Sprintf("the other %d shards", s.Count-1)
	if s.Count == 2 {
		others = "shard 1"
	}

	msgs.Printf("Shard 0/%d: waiting for %s to finish before dropping database %q (at most %s)\n",
		s.Count, others, s.coll.Database().Name(), s.Wait)
	msgs.Step("waiting for the other %d shards to finish before dropping the database (at most %s)", s.Count-1, s.Wait)

	for {
		n, err := s.coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^done-"}}}, {Key: "spec", Value: s.hash}})
		if err == nil && n >= int64(s.Count-1) {
			s.removeCollection(ctx, msgs)
			return true
		}

		if SleepCtx(ctx, shardPoll) != nil {
			msgs.Printf("Warning: %d of the other %d shards said they were done within --shard-wait %s; the database is left for them\n", n, s.Count-1, s.Wait)
			return false
		}
	}
}

// removeCollection drops the shard collection once no shard needs it: in a
// database mongobench only uses (--allow-existing-db), dropping the
// workload's collections afterwards would leave it.
func (s *shardRun) removeCollection(ctx context.Context, msgs Messages) {
	if err := s.coll.Drop(ctx); err != nil {
		msgs.Printf("Warning: could not remove %s: %v\n", ShardCollection, err)
	}
}

// put writes a document of the shard collection, replacing one with its _id.
func (s *shardRun) put(ctx context.Context, doc shardDoc) error {
	_, err := s.coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: doc.ID}}, doc, mongooptions.Replace().SetUpsert(true))
	return err
}

// await polls for the document id of this run's workload until ok accepts
// it, for at most Wait.
func (s *shardRun) await(ctx context.Context, id, what string, ok func(*shardDoc) bool) (*shardDoc, error) {
	doc, err := AwaitDocument(ctx, s.coll, id, s.Wait, shardPoll, ok)

	switch {
	case err == nil && doc.Spec != s.hash:
		return nil, badInput("shard %d/%d: shard 0 runs another workload (spec hash %.12s, this shard's %.12s)", s.Index, s.Count, doc.Spec, s.hash)
	case err == nil:
		return doc, nil
	case errors.Is(err, ErrWaitedOut):
		return nil, failed("shard %d/%d: gave up waiting for %s after --shard-wait %s", s.Index, s.Count, what, s.Wait)
	case ctx.Err() != nil:
		return nil, failed("shard %d/%d: interrupted while waiting for %s", s.Index, s.Count, what)
	}

	return nil, failed("shard %d/%d: reading %s: %v", s.Index, s.Count, ShardCollection, err)
}

// ErrWaitedOut is AwaitDocument's error when its wait passed without a
// document it accepts.
var ErrWaitedOut = errors.New("waited out")

// AwaitDocument polls coll every poll for the document id, decoded as a T,
// until ok accepts it, for at most wait: how the processes of a sharded run
// (and of a sharded capacity search) wait for each other through the
// target database. It returns ErrWaitedOut when wait passed, ctx's error
// when ctx ended while it waited, and an error reading the document (other
// than its absence) as it is; the callers word each.
func AwaitDocument[T any](ctx context.Context, coll *mongo.Collection, id string, wait, poll time.Duration, ok func(*T) bool) (*T, error) {
	deadline := time.Now().Add(wait)

	for {
		var doc T

		err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)

		switch {
		case err == nil && ok(&doc):
			return &doc, nil
		case err != nil && !errors.Is(err, mongo.ErrNoDocuments) && ctx.Err() == nil:
			return nil, err
		}

		if time.Now().After(deadline) {
			return nil, ErrWaitedOut
		}

		if err := SleepCtx(ctx, poll); err != nil {
			return nil, err
		}
	}
}

// SleepCtx waits d, or until ctx ends, and then returns ctx's error.
func SleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()

	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// record is the results file's record of the shard.
func (s *shardRun) record() *result.Shard {
	mode := ""

	switch {
	case s.AutoStart:
		mode = "auto"
	case !s.StartAt.IsZero():
		mode = "time"
	}

	return &result.Shard{
		Index: s.Index, Count: s.Count, StartAt: s.StartAt, StartAtMode: mode,
		SeedScheme: result.SeedScheme, SpecSHA256: s.hash,
	}
}

// shardRun returns the shard's state for a trial on db, or nil when the run
// is not sharded.
func (r *run) shardRun(db *mongo.Database, spec *workload.Spec) (*shardRun, error) {
	sh := r.opts.Shard
	if sh == nil {
		return nil, nil
	}

	hash, err := SpecHash(spec)
	if err != nil {
		return nil, failed("%v", err)
	}

	cp := *sh

	return &shardRun{Shard: &cp, coll: db.Collection(ShardCollection), hash: hash, started: time.Now()}, nil
}

// prepareShardDatabase sets the database up as an unsharded run does when
// this process sets it up (no shard, or shard 0), emptying the shard
// collection of an earlier run; the other shards leave it to shard 0. With
// --shard-setup none, where no shard sets anything up, each first verifies
// that the database is mongobench's (see target.Verify): the database was
// set up by an earlier mongobench run, signed with the same owner key, or
// holds nothing yet; a shard never writes into collections that are not
// verifiably mongobench's.
func (r *run) prepareShardDatabase(ctx context.Context, tgt *openedTarget, spec *workload.Spec, sr *shardRun) (targets.Ownership, error) {
	if sr != nil && sr.NoSetup {
		if r.opts.OwnerKey == nil {
			return targets.Ownership{}, failed("no owner key to verify database %q with", spec.Database)
		}

		err := targets.Verify(ctx, tgt.client, spec.Database, createdCollections(spec, false), r.opts.OwnerKey)
		if refusal(err) {
			return targets.Ownership{}, badInput("shard %d/%d with --shard-setup none: %s; it writes only into a database "+
				"an earlier mongobench run set up (with --keep-db) and signed with the same owner key (%s)",
				sr.Index, sr.Count, err, targets.OwnerKeyEnv)
		}

		if err != nil {
			return targets.Ownership{}, failed("verifying database %q: %s", spec.Database, redact.Error(err, tgt.uri))
		}

		return targets.Ownership{}, nil
	}

	if sr != nil {
		if err := sr.checkAbsent(ctx); err != nil {
			return targets.Ownership{}, err
		}
	}

	if sr != nil && !sr.sets() {
		return targets.Ownership{}, nil
	}

	if r.opts.OwnerKey == nil {
		return targets.Ownership{}, failed("no owner key to claim database %q with", spec.Database)
	}

	own, err := prepareDatabase(ctx, tgt.client, spec, r.opts.AllowExisting, sr != nil, r.opts.OwnerKey)
	if err != nil || sr == nil {
		return own, err
	}

	if err := sr.coll.Drop(ctx); err != nil {
		return own, failed("emptying %s: %v", ShardCollection, err)
	}

	return own, sr.checkStored(ctx)
}

// noStorage is the refusal of a server through which the shards cannot
// meet: the first thing people try is the null test server, and a decoding
// error about its canned documents, or a wait of --shard-wait, says nothing
// about the cause.
func (s *shardRun) noStorage(what string) error {
	return badInput("shard %d/%d: the server does not store documents (%s), so the shards cannot meet through %s; "+
		"for such a server (the null test server, mongobench testserver) use --shard-setup none", s.Index, s.Count, what, ShardCollection)
}

// checkAbsent looks for a document that cannot exist: a server that
// returns one answers finds with canned documents, whatever the filter.
// It only reads, so every shard can run it before anything else.
func (s *shardRun) checkAbsent(ctx context.Context) error {
	id := "absent-" + rand.Text()

	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Err()

	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return nil
	case err != nil:
		return failed("shard %d/%d: reading %s: %v", s.Index, s.Count, ShardCollection, err)
	default:
		return s.noStorage("a find for a document never written returned one")
	}
}

// checkStored writes a document into the shard collection and reads it
// back, for shard 0, which owns the database by then: a server that drops
// writes (one that answers finds with nothing) would leave the other
// shards waiting for a marker that never comes.
func (s *shardRun) checkStored(ctx context.Context) error {
	probe := shardDoc{ID: "probe", Spec: s.hash, At: time.Now()}
	if err := s.put(ctx, probe); err != nil {
		return failed("writing to %s: %v", ShardCollection, err)
	}

	var got shardDoc

	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: probe.ID}}).Decode(&got)

	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return s.noStorage("a document just written could not be read back")
	case err != nil || got.Spec != probe.Spec:
		return s.noStorage("a document just written was read back different")
	}

	if _, err := s.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: probe.ID}}); err != nil {
		return failed("removing the probe from %s: %v", ShardCollection, err)
	}

	return nil
}

// loads returns the load steps this process runs: all of them, except in a
// shard that does not set up the database.
func (s *shardRun) loads(w *Compiled) []*op.Load {
	if s != nil && !s.sets() {
		return nil
	}

	return w.Loads
}

// start readies a shard once the load is over (see ready), sets the engine
// to start its first phase at the common instant, and records the shard in
// the result with its share of the workers. It does nothing when the run is
// not sharded or the load did not complete.
func (s *shardRun) start(ctx context.Context, w *Compiled, load *runner.PhaseResult, msgs Messages, eng *runner.Engine, res *result.Result) error {
	if s == nil || (load != nil && load.Status != runner.StatusCompleted) {
		return nil
	}

	if err := s.ready(ctx, w, msgs); err != nil {
		return err
	}

	if !s.StartAt.IsZero() {
		if time.Until(s.StartAt) < 0 {
			msgs.Printf("Warning: shard %d/%d was ready %s after the start instant %s; it starts now, its intervals late\n",
				s.Index, s.Count, time.Since(s.StartAt).Round(time.Millisecond), s.StartAt.Format(time.RFC3339Nano))
		}

		if d := time.Until(s.StartAt); d > 0 {
			msgs.Printf("Shard %d/%d: starting to measure at %s (in %s)\n", s.Index, s.Count, s.StartAt.Format(time.RFC3339Nano), d.Round(100*time.Millisecond))
		}

		msgs.Step("waiting for the start instant %s", s.StartAt.Format(time.RFC3339Nano))
		eng.StartAt = s.StartAt
	}

	s.running = true
	res.Shard = s.record()
	res.Concurrency = int(workload.Split(int64(res.Concurrency), s.Index, s.Count))

	return nil
}

// share returns the shard's share of phase p (see workload.Phase.ShardShare),
// or p when the run is not sharded.
func (s *shardRun) share(p *workload.Phase) (*workload.Phase, error) {
	if s == nil {
		return p, nil
	}

	sp, err := p.ShardShare(s.Index, s.Count)
	if err != nil {
		return nil, badInput("%v", err)
	}

	return sp, nil
}
