package op

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// findOneKind reads the first matching document, counting 1 when there is
// one and 0 when there is none (not an error).
func findOneKind() kind {
	return kind{
		name: opkind.FindOne,
		bind: func(o *Operation, _ *mongo.Database, coll *mongo.Collection) Func {
			return func(ctx context.Context, s *datagen.Scope) (int64, error) {
				opts := options.FindOne()
				if o.projection != nil {
					opts.SetProjection(o.projection.Value(s))
				}

				if o.sort != nil {
					opts.SetSort(o.sort.Value(s))
				}

				if n := o.skipOf(s); n > 0 {
					opts.SetSkip(n)
				}

				raw, err := coll.FindOne(ctx, o.filterValue(s), opts).Raw()
				switch {
				case errors.Is(err, mongo.ErrNoDocuments):
					return 0, nil
				case err != nil:
					return 0, err
				}

				if o.decode != nil {
					if err := o.decode.timed(decodeClockOf(ctx), raw); err != nil {
						return 0, err
					}
				}

				return 1, nil
			}
		},
		explain: func(o *Operation, s *datagen.Scope) bson.D {
			// The driver sends findOne as a find of one document in a
			// single batch.
			return append(o.findCommand(s), bson.E{Key: "limit", Value: int64(1)}, bson.E{Key: "singleBatch", Value: true})
		},
	}
}
