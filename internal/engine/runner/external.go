package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/spec/datagen"
)

// externalLoop runs a closed-loop phase in an external client stack (see
// package client): the adapter process runs the workers; mongobench
// generates every operation's arguments, with the same per-worker scopes
// and weighted picks as the Go engine's workers, and sends them ahead in
// batches; the adapter times each call and reports it, and this executor
// files the reports into the phase's registry through the same record
// path as the Go engine's operations (warm-up, errors by kind, documents,
// max_operations).
//
// Time: the adapter reports an operation's start in nanoseconds on its own
// monotonic clock since it received the phase line; the origin here is
// the instant just before that line was written, so a start is placed at
// most the pipe's delivery time (microseconds) early. The latency is the
// adapter's own measurement, as the application would see it. An
// operation is filed in the interval that is open when its report
// arrives; adapters report at least every 100 ms, so at most that late
// after it ended.
type externalLoop struct {
	engine *Engine
	mix    *mix
	n      int
	name   string

	// recOf maps protocol operation ids to registry entries, idOf back.
	recOf map[int]int
	idOf  map[int]int

	// decOf maps a registry entry to its decode-time entry (0: none).
	decOf []int

	// starved receives the adapter's count of waits on an empty queue.
	result *PhaseResult
}

// externalBatch bounds one ops line: operations, and bytes (large
// insertMany batches).
const (
	externalBatchOps   = 128
	externalBatchBytes = 1 << 20
)

// newExternal is the executor of a phase run by an external client.
func newExternal(ps *phaseSetup) Executor {
	x := &externalLoop{
		engine: ps.engine, mix: ps.newMix(), n: ps.spec.Concurrency, name: ps.spec.Name,
		recOf: map[int]int{}, idOf: map[int]int{}, result: ps.result,
	}

	for rec, name := range ps.bound.names {
		if id, ok := ps.engine.Client.OpID(name); ok {
			x.recOf[id], x.idOf[rec] = rec, id
		}

		x.decOf = append(x.decOf, ps.bound.nodes[rec].dec)
	}

	return x
}

// Setup has nothing to hook: the plan is the phase's concurrency.
func (*externalLoop) Setup(*phaseRun) {}

// Run starts the adapter's phase, feeds its workers until no new operation
// may start, then stops it and files its last reports.
func (x *externalLoop) Run(ctx context.Context, pr *phaseRun) {
	a := x.engine.Client
	abort := func(err error) { pr.cancel(&abortError{reason: err.Error()}) }

	scopes := make([]*datagen.Scope, x.n)
	for w := range scopes {
		scopes[w] = x.engine.Env.NewScope(w)
	}

	origin := time.Now()
	if err := a.Phase(x.name, x.n); err != nil {
		abort(err)
		return
	}

	var line client.OpsLine

	for w := range scopes {
		if err := x.fill(a, &line, w, scopes[w]); err != nil {
			abort(err)
			return
		}
	}

	h := pr.newHandles()
	issue := pr.issueCtx.Done()

	var (
		stopAt  time.Time
		stopped <-chan time.Time
	)

	for {
		for {
			r, ok, err := a.Next()
			if err != nil {
				abort(err)
				return
			}

			if !ok {
				break
			}

			switch r.Type {
			case "need":
				if stopAt.IsZero() && r.Worker >= 0 && r.Worker < x.n {
					if err := x.fill(a, &line, r.Worker, scopes[r.Worker]); err != nil {
						abort(err)
						return
					}
				}
			case "done":
				if err := x.file(ctx, pr, h, origin, stopAt, r.Records); err != nil {
					abort(fmt.Errorf("client %s: %w", a.Stack().Name, err))
					return
				}
			case "stopped":
				x.result.Starved += r.Starved
				return
			}
		}

		select {
		case <-issue:
			issue, stopAt = nil, time.Now()
			if err := a.Stop(); err != nil {
				abort(err)
				return
			}

			// The operations in flight have the operation timeout to end
			// at a planned stop; after an abort (a hung or silent server)
			// they are abandoned after abortGrace, as the Go engine's are
			// cancelled at once, so that the rule that ends a run on a hung
			// server is the same whatever the client.
			bound := x.engine.Timeout + 10*time.Second
			if aborted(pr) {
				bound = abortGrace
			}

			stopped = time.After(bound)
		case <-stopped:
			if !aborted(pr) {
				abort(fmt.Errorf("client %s did not confirm the stop within %s", a.Stack().Name, x.engine.Timeout+10*time.Second))
			}

			return
		case <-a.Wake():
		}
	}
}

// abortGrace is how long an adapter has, after the phase was aborted, to
// report the operations that ended and confirm its stop; those still in
// flight on a server that does not answer are abandoned (the adapter is
// closed after the phase).
const abortGrace = 2 * time.Second

// aborted tells whether the phase was aborted (rather than stopped as
// planned or by the user).
func aborted(pr *phaseRun) bool {
	var ae *abortError

	return errors.As(context.Cause(pr.runCtx), &ae)
}

// fill sends worker w its next batch of operations.
func (x *externalLoop) fill(a *client.Adapter, line *client.OpsLine, w int, s *datagen.Scope) error {
	line.Begin(w)

	for {
		if n, size := line.Len(); n >= externalBatchOps || size >= externalBatchBytes {
			break
		}

		s.NextIteration()

		nd := x.mix.pick(s)
		if nd.o == nil {
			return fmt.Errorf("client %s: an iteration of phase %q is not a single operation", a.Stack().Name, x.name)
		}

		args, err := nd.o.Args(s)
		if err != nil {
			return err
		}

		if err := line.Add(x.idOf[nd.rec], &args); err != nil {
			return err
		}
	}

	// The adapter's errors name the client and its log.
	return a.SendOps(line)
}

// file records a done line's operations. Those that started after the
// stop are artefacts of stopping and dropped; those started in warm-up are
// dropped by record; past max_operations, the rest are dropped too.
func (x *externalLoop) file(ctx context.Context, pr *phaseRun, h handles, origin, stopAt time.Time, recs []client.Record) error {
	var end time.Time
	if pr.phase.Duration > 0 {
		end = pr.measureFrom.Add(pr.phase.Duration)
	}

	for _, r := range recs {
		rec, ok := x.recOf[r.Op]
		if !ok || r.StartNS < 0 || r.Latency < 0 {
			return fmt.Errorf("a done record of unknown operation %d or negative times (%d, %d)", r.Op, r.StartNS, r.Latency)
		}

		start := origin.Add(time.Duration(r.StartNS))
		if (!stopAt.IsZero() && !start.Before(stopAt)) || (!end.IsZero() && !start.Before(end)) {
			continue
		}

		if !start.Before(pr.measureFrom) && !pr.ticket() {
			continue
		}

		var err error
		if r.Err != nil {
			err = r.Err.Err()
		}

		kept := pr.record(ctx, h, rec, start, start, start.Add(time.Duration(r.Latency)), r.Docs, err)

		if dec := x.decOf[rec]; dec > 0 && kept && r.DecodeNS >= 0 {
			pr.recordDecode(h, dec, start, time.Duration(r.DecodeNS), r.Docs, err)
		}
	}

	return nil
}
