package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// runCommandKind runs a generated command on the workload's database.
func runCommandKind() kind {
	return kind{
		name: opkind.RunCommand,
		bind: func(o *Operation, db *mongo.Database, _ *mongo.Collection) Func {
			rp := readPref(o.Spec.ReadPreference)

			return func(ctx context.Context, s *datagen.Scope) (int64, error) {
				opts := options.RunCmd()
				if rp != nil {
					opts.SetReadPreference(rp)
				}

				return 0, db.RunCommand(ctx, o.command.Value(s), opts).Err()
			}
		},
	}
}
