// Package serverstats samples a server's own counters while a benchmark
// runs, so that results can show what the server was doing (operations,
// connections, network, WiredTiger cache and tickets, per-collection time and
// size) next to what the clients measured.
//
// Servers differ in what they answer: MongoDB has serverStatus, top, dbStats
// and collStats; FerretDB has dbStats and collStats and a serverStatus
// without counters, and no top; a restricted user may be refused some of
// them. Each source is therefore tried once at Start, and those the server
// refuses are left out of every sample with a note saying why, rather than
// failing the run.
//
// Gauges (connections, WiredTiger cache and tickets, dbStats, collStats) are
// recorded as read. Counters (opcounters, network bytes, top's times) are
// deltas between consecutive samples, so the baseline sample has none, and a
// sample following one in which the source failed has none either (it is a
// new baseline) rather than a delta spanning two intervals. A counter that
// went backwards, as after a server restart, also starts a new baseline, with
// a note. Top's entries are keyed by namespace ("db.coll"), restricted to the
// workload's database, and left out when nothing happened in them.
//
// On FerretDB with SQLite, dbStats and collStats run ANALYZE over the tables
// concerned on every call, so their cost grows with the data (about 1µs per
// document each, i.e. about 100ms at 100,000 documents) and they wait for the
// writers' lock; SampleCostUS shows what sampling cost in a run.
//
// The package does no printing and never stops a run: everything it finds
// goes into the returned result.Server.
package serverstats

import (
	"context"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/results/result"
)

// Source names, as used as keys of result.Server.Supported and at the start
// of notes.
const (
	SourceServerStatus = "serverStatus"
	SourceTop          = "top"
	SourceDBStats      = "dbStats"
	SourceCollStats    = "collStats"
)

// DefaultInterval is the sampling period used when Config.Interval is not
// positive: often enough to follow phases of a few seconds, rarely enough
// that sampling a MongoDB server costs it next to nothing.
const DefaultInterval = time.Second

// MaxCommandTimeout bounds every command of a regular sample, which is also
// bounded by the interval (min(Interval, MaxCommandTimeout)) so that a slow
// sample delays the next one by little. It also bounds, as a whole, the
// detection at Start and the final sample at Stop, which get all of it
// whatever the interval, so that a server that stops answering delays
// neither Start nor Stop by more than this.
const MaxCommandTimeout = 5 * time.Second

// statusCommand asks serverStatus for its default sections minus the heavy
// ones mongobench does not read (replication, the metrics tree, lock
// statistics and others), so that a sample costs the server little. Servers
// ignore exclusions of sections they do not have.
var statusCommand = bson.D{
	{Key: "serverStatus", Value: 1},
	{Key: "repl", Value: 0},
	{Key: "metrics", Value: 0},
	{Key: "locks", Value: 0},
	{Key: "transactions", Value: 0},
	{Key: "electionMetrics", Value: 0},
	{Key: "flowControl", Value: 0},
}

// Config says what a Sampler samples and how often.
type Config struct {
	// Client is a client of the sampler's own: the caller connects a
	// separate client with a pool of 1 or 2 connections, so that sampling
	// never takes connections from the measured workers nor queues behind
	// them. Start does not disconnect it.
	Client *mongo.Client

	// Database is the workload's database, for dbStats, collStats and to
	// pick its namespaces out of top. Empty means that only serverStatus
	// is sampled.
	Database string

	// Collections are the collections of Database to sample collStats of;
	// empty means no collStats.
	Collections []string

	// Interval is the sampling period; zero or negative means
	// DefaultInterval.
	Interval time.Duration

	// Phase, when not nil, returns the name of the phase running now. It
	// is called at the start of every sample, from Start, Stop and the
	// sampling goroutine, so it must be safe for concurrent use.
	Phase func() string
}

// Sampler samples a server's counters on a goroutine of its own between
// Start and Stop. Its methods are safe for concurrent use.
type Sampler struct {
	cfg      Config
	interval time.Duration
	parent   context.Context // Start's, bounding Stop's final sample
	cancel   context.CancelFunc
	done     chan struct{} // closed when the sampling goroutine has ended

	// t belongs to the sampling goroutine until done is closed, then to
	// Stop.
	t *tracker

	stopOnce sync.Once
	res      *result.Server
}

// Start detects which sources the server answers, trying each once (a
// source refused with an error such as CommandNotFound, Unauthorized or
// NotImplemented is marked unsupported with a note), records that first
// answer as the baseline sample, and then samples every Interval on a
// goroutine of its own until Stop is called or ctx is done. Samples are
// scheduled on a fixed grid from the start, so they do not drift; a sample
// that overruns skips the grid points it missed. Start returns once the
// baseline is taken, within about MaxCommandTimeout; it never fails, since
// a server that answers nothing only yields a result with notes. The caller
// must call Stop.
func Start(ctx context.Context, cfg Config) *Sampler {
	interval := cfg.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}

	loopCtx, cancel := context.WithCancel(ctx)

	s := &Sampler{
		cfg:      cfg,
		interval: interval,
		parent:   ctx,
		cancel:   cancel,
		done:     make(chan struct{}),
	}

	start := time.Now()
	s.t = newTracker(cfg.Database, start)

	if cfg.Client == nil {
		s.t.note("", "no server statistics: no client to sample with")
		close(s.done)

		return s
	}

	// Detection gets MaxCommandTimeout whatever the interval: a source that
	// is merely slow once would otherwise be lost for the whole run.
	dctx, dcancel := context.WithTimeout(ctx, MaxCommandTimeout)
	s.t.detect(s.fetch(dctx, start, MaxCommandTimeout, nil))
	dcancel()

	if !s.t.anySupported() {
		close(s.done)
		return s
	}

	go s.loop(loopCtx, start)

	return s
}

// Stop ends sampling, takes a final sample within about MaxCommandTimeout
// (unless the context given to Start is done, so that an interrupted run
// stops at once), and returns everything sampled. It returns only after the
// sampling goroutine has ended. Stop is idempotent: later calls return the
// same result, which the caller must treat as read-only if it calls Stop
// more than once.
func (s *Sampler) Stop() *result.Server {
	s.stopOnce.Do(func() {
		s.cancel()
		<-s.done

		if s.parent.Err() == nil && s.t.anySupported() {
			// The final sample collides with no later one, so it gets
			// MaxCommandTimeout: the end state is the one a report
			// needs most, even from a server slowed down by the load.
			ctx, cancel := context.WithTimeout(s.parent, MaxCommandTimeout)
			f := s.fetch(ctx, time.Now(), MaxCommandTimeout, s.t.supported)
			cancel()

			// A run interrupted meanwhile gets no final sample rather
			// than one full of failures.
			if s.parent.Err() == nil {
				s.t.record(f)
			}
		}

		s.res = s.t.result(s.interval)
	})

	return s.res
}

// loop samples at start + k*interval until ctx is done. A sample cut short
// by Stop or by ctx is discarded rather than recorded as failed.
func (s *Sampler) loop(ctx context.Context, start time.Time) {
	defer close(s.done)

	timer := time.NewTimer(time.Until(start.Add(s.interval)))
	defer timer.Stop()

	timeout := s.commandTimeout()

	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}

		f := s.fetch(ctx, time.Now(), timeout, s.t.supported)
		if ctx.Err() != nil {
			return
		}

		s.t.record(f)

		k := time.Since(start)/s.interval + 1
		timer.Reset(time.Until(start.Add(k * s.interval)))
	}
}

// commandTimeout is the bound of each command of a regular sample:
// min(interval, MaxCommandTimeout).
func (s *Sampler) commandTimeout() time.Duration {
	return min(s.interval, MaxCommandTimeout)
}

// fetch runs the commands of one sample, one after the other on the
// sampler's client, each bounded by timeout. It asks only the sources
// marked true in sources, or every source when sources is nil (detection).
func (s *Sampler) fetch(ctx context.Context, at time.Time, timeout time.Duration, sources map[string]bool) fetched {
	f := fetched{at: at}

	if s.cfg.Phase != nil {
		f.phase = s.cfg.Phase()
	}

	ask := func(source string) bool {
		return sources == nil || sources[source]
	}

	run := func(db string, cmd bson.D) reply {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()

		raw, err := s.cfg.Client.Database(db).RunCommand(cctx, cmd).Raw()

		return reply{raw: raw, err: err}
	}

	if ask(SourceServerStatus) {
		r := run("admin", statusCommand)
		f.status = &r
	}

	if s.cfg.Database != "" {
		if ask(SourceTop) {
			r := run("admin", bson.D{{Key: "top", Value: 1}})
			f.top = &r
		}

		if ask(SourceDBStats) {
			r := run(s.cfg.Database, bson.D{{Key: "dbStats", Value: 1}})
			f.db = &r
		}

		if ask(SourceCollStats) {
			for _, c := range s.cfg.Collections {
				f.colls = append(f.colls, collReply{coll: c, reply: run(s.cfg.Database, bson.D{{Key: "collStats", Value: c}})})
			}
		}
	}

	f.cost = time.Since(at)

	return f
}
