package bench

import (
	"context"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/explain"
	"github.com/mongobench/mongobench/internal/targets/serverstats"
)

// sampling runs the server-counter sampler on a connection of its own, so
// that it never takes a connection from the measured workers.
type sampling struct {
	client  *mongo.Client
	sampler *serverstats.Sampler
	phase   atomic.Value // string: the phase running now

	// ctx is sampling's context, cancelled when the run did not complete.
	ctx context.Context
}

// startSampling connects a second client and starts sampling; it returns
// nil (with a warning) when that fails, since the counters are evidence,
// not the measurement.
func startSampling(ctx context.Context, msgs Messages, t *openedTarget, spec *workload.Spec, interval time.Duration) *sampling {
	client, err := targets.Connect(ctx, t.uri, targets.ConnectOptions{MaxPoolSize: 2})
	if err != nil {
		msgs.Printf("Warning: server counters will not be sampled: %s\n", redact.Error(err, t.uri))
		return nil
	}

	s := &sampling{client: client, ctx: ctx}
	s.phase.Store("setup")

	colls := make([]string, 0, len(spec.Collections))
	for _, c := range spec.Collections {
		colls = append(colls, c.Name)
	}

	s.sampler = serverstats.Start(ctx, serverstats.Config{
		Client:      client,
		Database:    spec.Database,
		Collections: colls,
		Interval:    interval,
		Phase:       func() string { return s.phase.Load().(string) },
	})

	return s
}

// setPhase records the phase now running, for labelling samples.
func (s *sampling) setPhase(name string) {
	if s != nil {
		s.phase.Store(name)
	}
}

// stop ends sampling and returns what was sampled.
func (s *sampling) stop() *result.Server {
	if s == nil {
		return nil
	}

	out := s.sampler.Stop()

	disconnect := func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()

		_ = s.client.Disconnect(ctx)
	}

	// After a run that did not complete the server may not answer: the
	// counters' own connection is let go without holding up the exit.
	if s.ctx.Err() != nil {
		go disconnect()
	} else {
		disconnect()
	}

	return out
}

// explainTimeout bounds explaining all operations, so that a slow server
// does not hold the end of a run.
const explainTimeout = 30 * time.Second

// explainOperations explains one representative instance of every
// operation that has a plan, with values generated as in the run.
func explainOperations(ctx context.Context, db *mongo.Database, w *Compiled) []result.Explain {
	ctx, cancel := context.WithTimeout(ctx, explainTimeout)
	defer cancel()

	// A scope of its own, numbered apart from the workers', so that the
	// explained values are like the run's without repeating its sequence.
	s := w.Env.NewScope(1_000_000)

	var out []result.Explain

	type named struct {
		name string
		op   *op.Operation
	}

	var all []named

	for _, o := range w.Ops {
		all = append(all, named{o.Name(), o})

		// A composite's steps are explained under the names their
		// figures have.
		for _, st := range o.Steps {
			all = append(all, named{workload.StepName(o.Name(), st.Name()), st})
		}
	}

	for _, n := range all {
		o := n.op

		cmd, ok := o.ExplainCommand(s)
		if !ok {
			continue
		}

		e := explain.Run(ctx, db, n.name, o.Spec.Collection, cmd)
		if e.Command == "" {
			if b, err := bson.MarshalExtJSON(cmd, false, false); err == nil {
				e.Command = string(b)
			}
		}

		out = append(out, e)
	}

	return out
}
