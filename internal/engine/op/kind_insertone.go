package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// insertOneKind inserts one generated document per call.
func insertOneKind() kind {
	return kind{
		name: opkind.InsertOne,
		bind: func(o *Operation, _ *mongo.Database, coll *mongo.Collection) Func {
			return func(ctx context.Context, s *datagen.Scope) (int64, error) {
				_, err := coll.InsertOne(ctx, o.document.Value(s))
				return written(err, 1)
			}
		},
	}
}
