package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// deleteManyKind deletes every matching document.
func deleteManyKind() kind {
	return kind{
		name: opkind.DeleteMany,
		bind: func(o *Operation, _ *mongo.Database, coll *mongo.Collection) Func {
			return func(ctx context.Context, s *datagen.Scope) (int64, error) {
				return deleted(coll.DeleteMany(ctx, o.filterValue(s)))
			}
		},
		explain: func(o *Operation, s *datagen.Scope) bson.D {
			// A limit of 0 deletes every match.
			return o.deleteCommand(0, s)
		},
	}
}
