package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// createIndexesKind creates the collection's declared indexes (or those the
// operation names), built once when compiling.
func createIndexesKind() kind {
	return kind{
		name: opkind.CreateIndexes,
		compile: func(o *Operation, spec *workload.Spec, _ string) error {
			o.indexes = IndexModels(spec, o.Spec.Collection, o.Spec.Indexes)
			return nil
		},
		bind: func(o *Operation, _ *mongo.Database, coll *mongo.Collection) Func {
			models := o.indexes

			return func(ctx context.Context, _ *datagen.Scope) (int64, error) {
				_, err := coll.Indexes().CreateMany(ctx, models)
				return 0, err
			}
		},
	}
}
