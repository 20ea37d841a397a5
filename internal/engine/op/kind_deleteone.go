package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// deleteOneKind deletes the first matching document.
func deleteOneKind() kind {
	return kind{
		name: opkind.DeleteOne,
		bind: func(o *Operation, _ *mongo.Database, coll *mongo.Collection) Func {
			return func(ctx context.Context, s *datagen.Scope) (int64, error) {
				return deleted(coll.DeleteOne(ctx, o.filterValue(s)))
			}
		},
		explain: func(o *Operation, s *datagen.Scope) bson.D {
			return o.deleteCommand(1, s)
		},
	}
}
