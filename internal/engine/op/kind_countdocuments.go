package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// countDocumentsKind counts matching documents; the count is not a number
// of documents returned, so the operation reports 0 of those.
func countDocumentsKind() kind {
	return kind{
		name: opkind.CountDocuments,
		bind: func(o *Operation, _ *mongo.Database, coll *mongo.Collection) Func {
			return func(ctx context.Context, s *datagen.Scope) (int64, error) {
				opts := options.Count()
				if n := o.limitOf(s); n > 0 {
					opts.SetLimit(n)
				}

				if n := o.skipOf(s); n > 0 {
					opts.SetSkip(n)
				}

				_, err := coll.CountDocuments(ctx, o.filterValue(s), opts)

				return 0, err
			}
		},
		explain: func(o *Operation, s *datagen.Scope) bson.D {
			// countDocuments is an aggregation in the driver: explain that.
			so := o.Spec
			pipeline := bson.A{bson.D{{Key: "$match", Value: o.filterValue(s)}}}
			if n := o.skipOf(s); n > 0 {
				pipeline = append(pipeline, bson.D{{Key: "$skip", Value: n}})
			}

			if n := o.limitOf(s); n > 0 {
				pipeline = append(pipeline, bson.D{{Key: "$limit", Value: n}})
			}

			pipeline = append(pipeline, bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}})

			return bson.D{{Key: "aggregate", Value: so.Collection}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}
		},
	}
}
