package capacity

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mongooptions "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// A sharded search (capacity --shard I/N --start-at auto) runs in N
// processes that share every step: shard 0 searches, and for every step
// publishes an instruction (the aggregate rate or the workers, the step's
// length) that the others follow; every shard runs the step as one shard
// of a sharded run of package bench (which divides the rate, re-meets the
// shards at a start barrier of their own for the step, and leaves the
// set-up and loading to shard 0), then publishes what it observed; shard
// 0 merges the observations and judges the step on the merged one.
//
// The instructions and observations cannot live in the workload's
// database, whose every step drops and re-creates it (and the shard
// collection with it) while another shard may not have read them yet:
// they live in a database of their own, CoordinationDatabase, which shard
// 0 claims as mongobench's with the owner key (refusing one that is not)
// and drops at the end.

// CoordinationDatabase is the database through which the shards of a
// search on the workload's database db meet.
func CoordinationDatabase(db string) string { return db + "_capacity" }

// coordCollection is the collection of CoordinationDatabase that holds
// the search's documents.
const coordCollection = "steps"

// coordPoll is how often a waiting shard looks at the coordination
// collection.
const coordPoll = 100 * time.Millisecond

// endGrace bounds shard 0's wait for the others to read the end of a
// search that failed: one that is still there reads it within a poll.
const endGrace = 10 * time.Second

// coordDoc is a document of the coordination collection: the search's
// announcement ("search"), an instruction ("step-K"), an observation
// ("obs-K-I") or a shard's farewell ("bye-I").
type coordDoc struct {
	ID      string    `bson:"_id"`
	Session string    `bson:"session"`
	Spec    string    `bson:"spec,omitempty"`
	Count   int       `bson:"count,omitempty"`
	At      time.Time `bson:"at"`

	// An instruction: the step's kind (result.CapacityStep*), its
	// aggregate rate or workers, its measured length and warm-up; or the
	// end of the search (End), with the step whose results every shard
	// keeps (Report, -1 for none) or why it failed (Error).
	Kind       string  `bson:"kind,omitempty"`
	Rate       float64 `bson:"rate,omitempty"`
	Workers    int     `bson:"workers,omitempty"`
	DurationNS int64   `bson:"duration_ns,omitempty"`
	WarmupNS   int64   `bson:"warmup_ns,omitempty"`
	End        bool    `bson:"end,omitempty"`
	Report     int     `bson:"report,omitempty"`

	// An observation, as JSON (wireObservation), or the error of the
	// shard's step.
	Obs   string `bson:"obs,omitempty"`
	Error string `bson:"error,omitempty"`
}

// wireObservation is an Observation as a shard publishes it.
type wireObservation struct {
	Ops       []result.Operation `json:"ops"`
	DurationS float64            `json:"duration_s"`
	Schedule  *result.Schedule   `json:"schedule,omitempty"`
	ClientCPU float64            `json:"client_cpu"`
}

// coordinator is one shard's end of the search's coordination.
type coordinator struct {
	shard   bench.Shard
	client  *mongo.Client
	coll    *mongo.Collection
	own     targets.Ownership
	session string
	spec    string
	started time.Time
}

// openCoordination connects to the target and, for shard 0, claims the
// coordination database, empties it of an earlier search's documents and
// announces the search; another shard waits for the announcement of a
// search of the same workload and shard count.
func openCoordination(ctx context.Context, uri string, spec *workload.Spec, sh bench.Shard, key *targets.OwnerKey) (*coordinator, error) {
	hash, err := bench.SpecHash(spec)
	if err != nil {
		return nil, err
	}

	client, err := targets.Connect(ctx, uri, targets.ConnectOptions{})
	if err != nil {
		return nil, fmt.Errorf("connecting to coordinate the shards: %s", redact.Error(err, uri))
	}

	name := CoordinationDatabase(spec.Database)
	c := &coordinator{shard: sh, client: client, coll: client.Database(name).Collection(coordCollection), spec: hash, started: time.Now()}

	if err := c.open(ctx, name, key); err != nil {
		_ = client.Disconnect(context.Background())
		return nil, err
	}

	return c, nil
}

func (c *coordinator) open(ctx context.Context, name string, key *targets.OwnerKey) error {
	if c.shard.Index != 0 {
		doc, err := c.await(ctx, "search", "shard 0's announcement of the search", func(d *coordDoc) bool {
			// An announcement left by an earlier search is older than the
			// wait, as bench judges shard 0's ready marker.
			return d.At.After(c.started.Add(-c.shard.Wait))
		})
		if err != nil {
			return err
		}

		if doc.Spec != c.spec || doc.Count != c.shard.Count {
			return &InputError{Msg: fmt.Sprintf("shard %d/%d: shard 0 searches another workload or shard count (%d shards, workload hash %.12s, this shard's %.12s)",
				c.shard.Index, c.shard.Count, doc.Count, doc.Spec, c.spec)}
		}

		c.session = doc.Session

		return nil
	}

	if key == nil {
		return fmt.Errorf("no owner key to claim database %q with", name)
	}

	own, err := targets.Claim(ctx, c.client, name, false, key)
	if err != nil {
		var noe *targets.NotOwnedError
		if errors.As(err, &noe) {
			return &InputError{Msg: fmt.Sprintf("a sharded search meets through database %q: %s", name, err)}
		}

		return fmt.Errorf("claiming database %q: %w", name, err)
	}

	c.own = own

	// Reset drops an earlier search's documents and records the
	// collection as mongobench's, so that Drop removes it at the end.
	if err := targets.Reset(ctx, c.client, name, own, []string{coordCollection}); err != nil {
		var fce *targets.ForeignCollectionError
		if errors.As(err, &fce) {
			return &InputError{Msg: fmt.Sprintf("a sharded search meets through database %q: %s", name, err)}
		}

		return fmt.Errorf("resetting database %q: %w", name, err)
	}

	c.session = rand.Text()

	return c.put(ctx, coordDoc{ID: "search", Session: c.session, Spec: c.spec, Count: c.shard.Count, At: time.Now()})
}

// close ends the coordination: shard 0 drops the coordination database,
// warning when it cannot; every shard disconnects.
func (c *coordinator) close(msgs bench.Messages) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if c.shard.Index == 0 && c.own.DB != "" {
		if err := targets.Drop(ctx, c.client, c.own.DB, c.own); err != nil && msgs != nil {
			msgs.Printf("Warning: could not drop database %q after the search: %v\n", c.own.DB, err)
		}
	}

	_ = c.client.Disconnect(ctx)
}

// instruct publishes step k's instruction (shard 0).
func (c *coordinator) instruct(ctx context.Context, k int, in coordDoc) error {
	in.ID, in.Session, in.At = fmt.Sprintf("step-%d", k), c.session, time.Now()
	if err := c.put(ctx, in); err != nil {
		return fmt.Errorf("publishing step %d to the other shards: %w", k, err)
	}

	return nil
}

// finish publishes the end of the search (shard 0): the step whose results
// every shard keeps, or why the search failed; then it waits, at most
// --shard-wait after a search that ended (endGrace after one that failed),
// for every other shard to have read it, so that dropping the
// coordination database does not leave one waiting.
func (c *coordinator) finish(k, report int, failure error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.shard.Wait)
	defer cancel()

	end := coordDoc{End: true, Report: report}
	if failure != nil {
		end.Error = failure.Error()
	}

	if err := c.instruct(ctx, k, end); err != nil {
		return
	}

	wait := c.shard.Wait
	if failure != nil {
		wait = min(wait, endGrace)
	}

	deadline := time.Now().Add(wait)

	for time.Now().Before(deadline) {
		n, err := c.coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^bye-"}}}, {Key: "session", Value: c.session}})
		if err == nil && n >= int64(c.shard.Count-1) {
			return
		}

		if bench.SleepCtx(ctx, coordPoll) != nil {
			return
		}
	}
}

// gather waits for the other shards' observations of step k (shard 0), in
// shard order after shard 0's own.
func (c *coordinator) gather(ctx context.Context, k int, own Observation) ([]Observation, error) {
	parts := []Observation{own}

	for i := 1; i < c.shard.Count; i++ {
		doc, err := c.await(ctx, fmt.Sprintf("obs-%d-%d", k, i), fmt.Sprintf("shard %d's observation of step %d", i, k), func(d *coordDoc) bool {
			return d.Session == c.session
		})
		if err != nil {
			return nil, err
		}

		if doc.Error != "" {
			return nil, fmt.Errorf("shard %d/%d failed step %d: %s", i, c.shard.Count, k, doc.Error)
		}

		var w wireObservation
		if err := json.Unmarshal([]byte(doc.Obs), &w); err != nil {
			return nil, fmt.Errorf("shard %d's observation of step %d: %w", i, k, err)
		}

		parts = append(parts, Observation{Ops: w.Ops, DurationS: w.DurationS, Schedule: w.Schedule, ClientCPU: w.ClientCPU})
	}

	return parts, nil
}

// next waits for instruction k (a shard other than 0).
func (c *coordinator) next(ctx context.Context, k int) (*coordDoc, error) {
	return c.await(ctx, fmt.Sprintf("step-%d", k), fmt.Sprintf("shard 0's instruction for step %d", k), func(d *coordDoc) bool {
		return d.Session == c.session
	})
}

// watchEnd returns a context that ends with ctx or when shard 0 publishes,
// as instruction k, the end of a failed search, and the function that
// stops watching (a shard other than 0, during a step).
func (c *coordinator) watchEnd(ctx context.Context, k int) (context.Context, func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	id := fmt.Sprintf("step-%d", k)

	go func() {
		defer close(done)

		for bench.SleepCtx(wctx, coordPoll) == nil {
			var doc coordDoc

			err := c.coll.FindOne(wctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
			if err == nil && doc.Session == c.session && doc.End && doc.Error != "" {
				cancel(fmt.Errorf("shard 0 ended the search: %s", doc.Error))
				return
			}
		}
	}()

	return wctx, func() {
		cancel(nil)
		<-done
	}
}

// observed publishes this shard's observation of step k, or the error that
// ended it (a shard other than 0).
func (c *coordinator) observed(ctx context.Context, k int, o Observation, stepErr error) error {
	doc := coordDoc{ID: fmt.Sprintf("obs-%d-%d", k, c.shard.Index), Session: c.session, At: time.Now()}

	if stepErr != nil {
		doc.Error = stepErr.Error()
	} else {
		data, err := json.Marshal(wireObservation{Ops: o.Ops, DurationS: o.DurationS, Schedule: o.Schedule, ClientCPU: o.ClientCPU})
		if err != nil {
			return err
		}

		doc.Obs = string(data)
	}

	if err := c.put(ctx, doc); err != nil {
		return fmt.Errorf("publishing step %d's observation to shard 0: %w", k, err)
	}

	return nil
}

// bye tells shard 0 this shard read the end of the search.
func (c *coordinator) bye(ctx context.Context) {
	_ = c.put(ctx, coordDoc{ID: fmt.Sprintf("bye-%d", c.shard.Index), Session: c.session, At: time.Now()})
}

func (c *coordinator) put(ctx context.Context, doc coordDoc) error {
	_, err := c.coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: doc.ID}}, doc, mongooptions.Replace().SetUpsert(true))
	return err
}

// await polls for document id until ok accepts it, for at most
// --shard-wait (bench.AwaitDocument).
func (c *coordinator) await(ctx context.Context, id, what string, ok func(*coordDoc) bool) (*coordDoc, error) {
	doc, err := bench.AwaitDocument(ctx, c.coll, id, c.shard.Wait, coordPoll, ok)

	switch {
	case err == nil:
		return doc, nil
	case errors.Is(err, bench.ErrWaitedOut):
		return nil, fmt.Errorf("shard %d/%d: gave up waiting for %s after --shard-wait %s", c.shard.Index, c.shard.Count, what, c.shard.Wait)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("interrupted: shard %d/%d was waiting for %s: %w", c.shard.Index, c.shard.Count, what, context.Cause(ctx))
	}

	return nil, fmt.Errorf("shard %d/%d: reading %s: %w", c.shard.Index, c.shard.Count, c.coll.Database().Name(), err)
}

// checkShard refuses a sharded search that cannot run: without --start-at
// auto the steps' shards have no barrier to meet at (a fixed instant
// serves one run, not a search of steps whose number is not known in
// advance), and without set-up by shard 0 nobody resets the database
// between steps; a sweep step's workers are split between the shards, so
// each needs at least one.
func checkShard(sh *bench.Shard, workers []int) error {
	switch {
	case sh == nil:
		return nil
	case !sh.AutoStart || sh.NoSetup:
		return &InputError{Msg: "capacity --shard needs --start-at auto (and --shard-setup shard0): every step's shards meet at a start barrier of their own, through the database shard 0 sets up for the step"}
	case len(workers) > 0 && workers[0] < sh.Count:
		return &InputError{Msg: fmt.Sprintf("--workers: each sweep step's workers are split between the %d shards, so the smallest count must be at least %d (it is %d)", sh.Count, sh.Count, workers[0])}
	}

	return nil
}
