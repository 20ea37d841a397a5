package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// replaceOneKind replaces the first matching document with a generated one.
func replaceOneKind() kind {
	return kind{
		name: opkind.ReplaceOne,
		bind: func(o *Operation, _ *mongo.Database, coll *mongo.Collection) Func {
			return func(ctx context.Context, s *datagen.Scope) (int64, error) {
				res, err := coll.ReplaceOne(ctx, o.filterValue(s), o.replacement.Value(s), options.Replace().SetUpsert(o.Spec.Upsert))
				return updated(res, err)
			}
		},
		explain: func(o *Operation, s *datagen.Scope) bson.D {
			return o.updateCommand(o.replacement.Value(s), false, s)
		},
	}
}
