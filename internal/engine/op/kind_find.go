package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// findKind reads every matching document, iterating the cursor to its end.
func findKind() kind {
	return kind{
		name: opkind.Find,
		bind: func(o *Operation, _ *mongo.Database, coll *mongo.Collection) Func {
			return func(ctx context.Context, s *datagen.Scope) (int64, error) {
				opts := options.Find()
				if o.projection != nil {
					opts.SetProjection(o.projection.Value(s))
				}

				if o.sort != nil {
					opts.SetSort(o.sort.Value(s))
				}

				if n := o.limitOf(s); n > 0 {
					opts.SetLimit(n)
				}

				if n := o.skipOf(s); n > 0 {
					opts.SetSkip(n)
				}

				if n := o.batchSizeOf(s); n > 0 {
					opts.SetBatchSize(int32(n)) //nolint:gosec // validated to be <= 100000
				}

				cur, err := coll.Find(ctx, o.filterValue(s), opts)
				if err != nil {
					return 0, err
				}

				return drain(ctx, cur, o.decode)
			}
		},
		explain: func(o *Operation, s *datagen.Scope) bson.D {
			cmd := o.findCommand(s)
			if n := o.limitOf(s); n > 0 {
				cmd = append(cmd, bson.E{Key: "limit", Value: n})
			}

			return cmd
		},
	}
}
