package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// dropKind drops the collection (a cleanup strategy measured on its own).
func dropKind() kind {
	return kind{
		name: opkind.Drop,
		bind: func(_ *Operation, _ *mongo.Database, coll *mongo.Collection) Func {
			return func(ctx context.Context, _ *datagen.Scope) (int64, error) {
				return 0, coll.Drop(ctx)
			}
		},
	}
}
