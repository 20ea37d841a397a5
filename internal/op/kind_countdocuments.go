package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/datagen"
	"github.com/mongobench/mongobench/internal/opkind"
)

// countDocumentsKind counts matching documents; the count is not a number
// of documents returned, so the operation reports 0 of those.
func countDocumentsKind() kind {
	return kind{
		name: opkind.CountDocuments,
		bind: func(o *Operation, _ *mongo.Database, coll *mongo.Collection) Func {
			so := o.Spec

			return func(ctx context.Context, s *datagen.Scope) (int64, error) {
				opts := options.Count()
				if so.Limit > 0 {
					opts.SetLimit(so.Limit)
				}

				if so.Skip > 0 {
					opts.SetSkip(so.Skip)
				}

				_, err := coll.CountDocuments(ctx, o.filterValue(s), opts)

				return 0, err
			}
		},
		explain: func(o *Operation, s *datagen.Scope) bson.D {
			// countDocuments is an aggregation in the driver: explain that.
			so := o.Spec
			pipeline := bson.A{bson.D{{Key: "$match", Value: o.filterValue(s)}}}
			if so.Skip > 0 {
				pipeline = append(pipeline, bson.D{{Key: "$skip", Value: so.Skip}})
			}

			if so.Limit > 0 {
				pipeline = append(pipeline, bson.D{{Key: "$limit", Value: so.Limit}})
			}

			pipeline = append(pipeline, bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}})

			return bson.D{{Key: "aggregate", Value: so.Collection}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}
		},
	}
}
