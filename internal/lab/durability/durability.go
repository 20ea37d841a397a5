// Package durability runs the durability phase: what a write concern or a
// server's durability setting buys when the server crashes. In the manner
// of Jepsen's acknowledged-writes check, writers insert documents with
// unique _ids and record every one the server acknowledges; once enough are
// acknowledged the server is killed with SIGKILL while the writes go on,
// started again on the same data, and every acknowledged _id is looked for.
// An acknowledged document that is missing is a lost write: the server said
// it had the document and did not keep it.
//
// The server is anything that can be killed and restarted (Server);
// package targets launches the real ones (targets.Crashable).
package durability

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/mongobench/mongobench/internal/results/result"
)

// Server is a server the check can crash and restart on the same data.
type Server interface {
	// URI is the connection string of the running server; it may change
	// at Restart.
	URI() string

	// Kill crashes the server (SIGKILL) and returns once it is gone.
	Kill() error

	// Restart starts it again on its data and returns once it accepts
	// connections.
	Restart(ctx context.Context) error
}

// Config is one check's size and writes.
type Config struct {
	// Database and Collection are where the documents are written; the
	// collection is dropped first.
	Database, Collection string

	// Documents is how many acknowledged documents trigger the crash.
	Documents int

	// BatchSize is the documents per insert; Writers the concurrent
	// writers.
	BatchSize, Writers int

	// WriteConcern is the writes' write concern; nil is the deployment's
	// default.
	WriteConcern *writeconcern.WriteConcern

	// OpTimeout bounds each insert and the read-back's find; zero means
	// 30 seconds. A write still unanswered when the server dies fails
	// with the connection, well before it.
	OpTimeout time.Duration
}

// padding makes each document about 200 bytes, a small record.
var padding = strings.Repeat("x", 160)

// Check runs one durability check on srv and returns its counts. An error
// means the check could not be completed (the server did not start again,
// a write failed before the crash, the read-back failed): the counts are
// then no answer, and the caller records the error.
func Check(ctx context.Context, srv Server, cfg Config) (result.Durability, error) {
	var out result.Durability

	if cfg.Documents <= 0 || cfg.BatchSize <= 0 || cfg.Writers <= 0 {
		return out, fmt.Errorf("durability check: documents, batch size and writers must be > 0 (got %d, %d, %d)",
			cfg.Documents, cfg.BatchSize, cfg.Writers)
	}

	if cfg.OpTimeout <= 0 {
		cfg.OpTimeout = 30 * time.Second
	}

	client, err := connect(srv.URI(), cfg, 2*time.Second)
	if err != nil {
		return out, err
	}

	coll := client.Database(cfg.Database).Collection(cfg.Collection,
		options.Collection().SetWriteConcern(cfg.WriteConcern))

	if err := coll.Drop(ctx); err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return out, fmt.Errorf("durability check: drop %s.%s: %w", cfg.Database, cfg.Collection, err)
	}

	w := &writes{cfg: cfg, coll: coll, crash: make(chan struct{}), killed: make(chan struct{})}

	started := time.Now()

	var killErr error

	go func() {
		select {
		case <-w.crash:
		case <-ctx.Done():
		}

		if ctx.Err() == nil {
			killErr = srv.Kill()
		}

		close(w.killed)
	}()

	w.run(ctx)

	<-w.killed

	out.LoadS = time.Since(started).Seconds()

	_ = client.Disconnect(context.WithoutCancel(ctx))

	switch {
	case ctx.Err() != nil:
		return out, fmt.Errorf("durability check: %w", ctx.Err())
	case killErr != nil:
		return out, fmt.Errorf("durability check: crash the server: %w", killErr)
	case w.early != nil:
		return out, fmt.Errorf("durability check: a write failed before the crash: %w", w.early)
	}

	restarted := time.Now()

	if err := srv.Restart(ctx); err != nil {
		return out, fmt.Errorf("durability check: restart after the crash: %w", err)
	}

	present, err := readBack(ctx, srv.URI(), cfg)
	if err != nil {
		return out, err
	}

	out.RestartS = time.Since(restarted).Seconds()

	count(&out, w.acked, w.unacked, present)

	return out, nil
}

// writes is the load of one check: each writer inserts batches of fresh
// _ids until the server is killed.
type writes struct {
	cfg  Config
	coll *mongo.Collection

	next  atomic.Int64 // the next _id to hand out
	total atomic.Int64 // documents acknowledged

	crash     chan struct{} // closed once Documents are acknowledged
	crashOnce sync.Once
	killed    chan struct{} // closed once the server is dead

	mu      sync.Mutex
	acked   []int64 // _ids the server acknowledged
	unacked []int64 // _ids sent whose insert failed (after the kill)
	early   error   // a write that failed before the kill
}

// run runs the writers until every one has seen its write fail after the
// kill (or ctx end), then returns.
func (w *writes) run(ctx context.Context) {
	var wg sync.WaitGroup

	for range w.cfg.Writers {
		wg.Go(func() { w.writer(ctx) })
	}

	wg.Wait()
}

// writer inserts batches until an insert fails. A failure before the crash
// was asked for is recorded as early (it voids the check) and asks for the
// crash anyway, so that the other writers stop too.
func (w *writes) writer(ctx context.Context) {
	for ctx.Err() == nil {
		n := int64(w.cfg.BatchSize)
		first := w.next.Add(n) - n

		docs := make([]any, n)
		ids := make([]int64, n)

		for i := range n {
			ids[i] = first + i
			docs[i] = bson.D{{Key: "_id", Value: first + i}, {Key: "pad", Value: padding}}
		}

		opCtx, cancel := context.WithTimeout(ctx, w.cfg.OpTimeout)
		_, err := w.coll.InsertMany(opCtx, docs, options.InsertMany().SetOrdered(true))

		cancel()

		w.mu.Lock()

		if err != nil {
			w.unacked = append(w.unacked, ids...)

			// Once the crash is asked for, failures are the crash's;
			// before, a failure is the server's and voids the check.
			select {
			case <-w.crash:
			default:
				if w.early == nil && ctx.Err() == nil {
					w.early = err
				}
			}

			w.mu.Unlock()
			w.trigger() // a failing writer must not wait forever for the others

			return
		}

		w.acked = append(w.acked, ids...)
		w.mu.Unlock()

		if w.total.Add(n) >= int64(w.cfg.Documents) {
			w.trigger()
		}
	}
}

// trigger asks for the crash, once.
func (w *writes) trigger() {
	w.crashOnce.Do(func() { close(w.crash) })
}

// connect makes a client for the check: one server, no retried writes
// (a write retried on the restarted server would hide what the crash did),
// and a server selection bounded by selection: short for the writers, so
// that their writes fail soon once the server is dead, longer for the
// read-back, which a recovering server may keep waiting.
func connect(uri string, cfg Config, selection time.Duration) (*mongo.Client, error) {
	opts := options.Client().ApplyURI(uri).
		SetDirect(true).
		SetRetryWrites(false).
		SetRetryReads(false).
		SetServerSelectionTimeout(selection).
		SetConnectTimeout(5 * time.Second).
		SetMaxPoolSize(uint64(cfg.Writers) + 2)

	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("durability check: connect: %w", err)
	}

	return client, nil
}

// readBack connects to the restarted server and returns every _id of the
// collection.
func readBack(ctx context.Context, uri string, cfg Config) (map[int64]bool, error) {
	client, err := connect(uri, cfg, cfg.OpTimeout)
	if err != nil {
		return nil, err
	}

	defer func() { _ = client.Disconnect(context.WithoutCancel(ctx)) }()

	opCtx, cancel := context.WithTimeout(ctx, cfg.OpTimeout)
	defer cancel()

	cur, err := client.Database(cfg.Database).Collection(cfg.Collection).Find(opCtx, bson.D{},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(10000))
	if err != nil {
		return nil, fmt.Errorf("durability check: read back after the restart: %w", err)
	}

	defer func() { _ = cur.Close(context.WithoutCancel(ctx)) }()

	present := map[int64]bool{}

	for cur.Next(opCtx) {
		id, ok := cur.Current.Lookup("_id").AsInt64OK()
		if !ok {
			return nil, fmt.Errorf("durability check: read back: a document whose _id is not an integer: %s", cur.Current)
		}

		present[id] = true
	}

	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("durability check: read back after the restart: %w", err)
	}

	return present, nil
}

// count fills the counts of out from the _ids acknowledged, sent without an
// answer, and found.
func count(out *result.Durability, acked, unacked []int64, present map[int64]bool) {
	out.Acknowledged = int64(len(acked))
	out.Unacknowledged = int64(len(unacked))
	out.Present = int64(len(present))

	for _, id := range acked {
		if !present[id] {
			out.Lost++
		}
	}

	for _, id := range unacked {
		if present[id] {
			out.UnacknowledgedPresent++
		}
	}
}
