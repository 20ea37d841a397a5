package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// updateOneKind updates the first matching document, counting it when it
// was modified or upserted.
func updateOneKind() kind {
	return kind{
		name: opkind.UpdateOne,
		bind: func(o *Operation, _ *mongo.Database, coll *mongo.Collection) Func {
			return func(ctx context.Context, s *datagen.Scope) (int64, error) {
				res, err := coll.UpdateOne(ctx, o.filterValue(s), o.update.Value(s), options.UpdateOne().SetUpsert(o.Spec.Upsert))
				return updated(res, err)
			}
		},
		explain: func(o *Operation, s *datagen.Scope) bson.D {
			return o.updateCommand(o.update.Value(s), false, s)
		},
	}
}
