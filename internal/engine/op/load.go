package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// Load is a compiled load step: bulk inserts of generated documents done
// before measuring.
type Load struct {
	// Spec is the step as written in the workload file.
	Spec *workload.LoadStep

	document *datagen.Template
}

// Name labels the step's figures, e.g. "load_errors".
func (l *Load) Name() string { return "load_" + l.Spec.Collection }

// CompileLoad compiles the load steps of the spec. It runs after Compile,
// so it also reports the key distributions whose named counter no ^seq of
// the load or the operations declares.
func CompileLoad(spec *workload.Spec, env *datagen.Env) ([]*Load, []error) {
	var errs []error

	loads := make([]*Load, 0, len(spec.Load))

	for i := range spec.Load {
		ls := &spec.Load[i]
		t, e := env.Compile(ls.Document.Node(), yamlpos.Field(yamlpos.Index("load", i), "document"))
		errs = append(errs, e...)

		if err := checkBatch(spec, yamlpos.Index("load", i), ls.BatchSize, t); err != nil {
			errs = append(errs, err)
		}
		loads = append(loads, &Load{Spec: ls, document: t})
	}

	errs = append(errs, env.UndeclaredCounters()...)

	if len(errs) > 0 {
		yamlpos.Sort(errs)
		return nil, yamlpos.WithFile(spec.File(), errs)
	}

	return loads, nil
}

// BatchFunc inserts n generated documents with one insertMany.
type BatchFunc func(ctx context.Context, s *datagen.Scope, n int) (int64, error)

// Bind returns the batch insert function for db. Every document is its own
// iteration, so iteration variables differ between documents.
func (l *Load) Bind(db *mongo.Database, timeout func(context.Context) (context.Context, context.CancelFunc)) BatchFunc {
	coll := db.Collection(l.Spec.Collection)
	opts := options.InsertMany().SetOrdered(false)

	return func(ctx context.Context, s *datagen.Scope, n int) (int64, error) {
		docs := make([]any, n)
		for i := range docs {
			s.NextIteration()
			docs[i] = l.document.Value(s)
		}

		ctx, cancel := timeout(ctx)
		defer cancel()

		res, err := coll.InsertMany(ctx, docs, opts)
		if res != nil {
			return int64(len(res.InsertedIDs)), err
		}

		return 0, err
	}
}
