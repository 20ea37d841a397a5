package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// insertManyKind inserts batch_size generated documents per call, checking
// when compiling that one batch stays under the generation cap.
func insertManyKind() kind {
	return kind{
		name: opkind.InsertMany,
		compile: func(o *Operation, spec *workload.Spec, p string) error {
			return checkBatch(spec, p, int(o.Spec.BatchSize.N), o.document)
		},
		bind: func(o *Operation, _ *mongo.Database, coll *mongo.Collection) Func {
			n := int(o.Spec.BatchSize.N) // validated to be a constant in [1, 100000]
			opts := options.InsertMany()
			if o.Spec.Ordered != nil {
				opts.SetOrdered(*o.Spec.Ordered)
			}

			return func(ctx context.Context, s *datagen.Scope) (int64, error) {
				docs := make([]any, n)
				for i := range docs {
					docs[i] = o.document.Value(s)
				}

				res, err := coll.InsertMany(ctx, docs, opts)
				if res != nil && len(res.InsertedIDs) > 0 {
					return int64(len(res.InsertedIDs)), err
				}

				return written(err, int64(n))
			}
		},
	}
}
