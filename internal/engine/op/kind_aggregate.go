package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// aggregateKind runs a pipeline, iterating the cursor to its end.
func aggregateKind() kind {
	return kind{
		name: opkind.Aggregate,
		bind: func(o *Operation, _ *mongo.Database, coll *mongo.Collection) Func {
			return func(ctx context.Context, s *datagen.Scope) (int64, error) {
				opts := options.Aggregate()
				if n := o.batchSizeOf(s); n > 0 {
					opts.SetBatchSize(int32(n)) //nolint:gosec // validated to be <= 100000
				}

				cur, err := coll.Aggregate(ctx, o.pipeline.Value(s), opts)
				if err != nil {
					return 0, err
				}

				return drain(ctx, cur, o.decode)
			}
		},
		explain: func(o *Operation, s *datagen.Scope) bson.D {
			return bson.D{{Key: "aggregate", Value: o.Spec.Collection}, {Key: "pipeline", Value: o.pipeline.Value(s)}, {Key: "cursor", Value: bson.D{}}}
		},
	}
}
