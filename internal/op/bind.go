package op

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/mongobench/mongobench/internal/datagen"
	"github.com/mongobench/mongobench/internal/workload"
)

// Bind returns the function that runs the operation against db, bounded by
// the operation's timeout. Collection handles and options are built here,
// once, not on every call.
func (o *Operation) Bind(db *mongo.Database) Func {
	run := o.BindUntimed(db)
	timeout := o.Timeout

	return func(ctx context.Context, s *datagen.Scope) (int64, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()

		return run(ctx, s)
	}
}

// BindUntimed is Bind without the timeout: the caller must enforce
// o.Timeout itself. The load engine does, with one watchdog per phase,
// because a context with a deadline per operation is the largest part of
// its own cost per operation (see docs/overhead.md).
func (o *Operation) BindUntimed(db *mongo.Database) Func {
	so := o.Spec

	var coll *mongo.Collection
	if so.Collection != "" {
		copts := options.Collection()
		if wc := writeConcern(so.WriteConcern); wc != nil {
			copts.SetWriteConcern(wc)
		}

		if rp := readPref(so.ReadPreference); rp != nil {
			copts.SetReadPreference(rp)
		}

		coll = db.Collection(so.Collection, copts)
	}

	return o.body(db, coll)
}

// body returns the kind-specific part of the operation.
//
//nolint:gocognit,gocyclo // one case per operation kind reads best as a switch
func (o *Operation) body(db *mongo.Database, coll *mongo.Collection) Func {
	so := o.Spec

	switch so.Op {
	case workload.KindInsertOne:
		return func(ctx context.Context, s *datagen.Scope) (int64, error) {
			_, err := coll.InsertOne(ctx, o.document.Value(s))
			return written(err, 1)
		}

	case workload.KindInsertMany:
		n := int(so.BatchSize.N) // validated to be a constant in [1, 100000]
		opts := options.InsertMany()
		if so.Ordered != nil {
			opts.SetOrdered(*so.Ordered)
		}

		return func(ctx context.Context, s *datagen.Scope) (int64, error) {
			docs := make([]any, n)
			for i := range docs {
				docs[i] = o.document.Value(s)
			}

			res, err := coll.InsertMany(ctx, docs, opts)
			if res != nil && len(res.InsertedIDs) > 0 {
				return int64(len(res.InsertedIDs)), err
			}

			return written(err, int64(n))
		}

	case workload.KindFindOne:
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
				if err := o.decode(raw); err != nil {
					return 0, err
				}
			}

			return 1, nil
		}

	case workload.KindFind:
		return func(ctx context.Context, s *datagen.Scope) (int64, error) {
			opts := options.Find()
			if o.projection != nil {
				opts.SetProjection(o.projection.Value(s))
			}

			if o.sort != nil {
				opts.SetSort(o.sort.Value(s))
			}

			if n := o.limitOf(s); n > 0 {
				opts.SetLimit(n)
			}

			if n := o.skipOf(s); n > 0 {
				opts.SetSkip(n)
			}

			if n := o.batchSizeOf(s); n > 0 {
				opts.SetBatchSize(int32(n)) //nolint:gosec // validated to be <= 100000
			}

			cur, err := coll.Find(ctx, o.filterValue(s), opts)
			if err != nil {
				return 0, err
			}

			return drain(ctx, cur, o.decode)
		}

	case workload.KindCountDocuments:
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

	case workload.KindAggregate:
		return func(ctx context.Context, s *datagen.Scope) (int64, error) {
			opts := options.Aggregate()
			if n := o.batchSizeOf(s); n > 0 {
				opts.SetBatchSize(int32(n)) //nolint:gosec // validated to be <= 100000
			}

			cur, err := coll.Aggregate(ctx, o.pipeline.Value(s), opts)
			if err != nil {
				return 0, err
			}

			return drain(ctx, cur, o.decode)
		}

	case workload.KindUpdateOne, workload.KindUpdateMany:
		many := so.Op == workload.KindUpdateMany

		return func(ctx context.Context, s *datagen.Scope) (int64, error) {
			var (
				res *mongo.UpdateResult
				err error
			)

			if many {
				res, err = coll.UpdateMany(ctx, o.filterValue(s), o.update.Value(s), options.UpdateMany().SetUpsert(so.Upsert))
			} else {
				res, err = coll.UpdateOne(ctx, o.filterValue(s), o.update.Value(s), options.UpdateOne().SetUpsert(so.Upsert))
			}

			return updated(res, err)
		}

	case workload.KindReplaceOne:
		return func(ctx context.Context, s *datagen.Scope) (int64, error) {
			res, err := coll.ReplaceOne(ctx, o.filterValue(s), o.replacement.Value(s), options.Replace().SetUpsert(so.Upsert))
			return updated(res, err)
		}

	case workload.KindDeleteOne, workload.KindDeleteMany:
		many := so.Op == workload.KindDeleteMany

		return func(ctx context.Context, s *datagen.Scope) (int64, error) {
			var (
				res *mongo.DeleteResult
				err error
			)

			if many {
				res, err = coll.DeleteMany(ctx, o.filterValue(s))
			} else {
				res, err = coll.DeleteOne(ctx, o.filterValue(s))
			}

			if res != nil {
				return res.DeletedCount, err
			}

			return 0, err
		}

	case workload.KindDrop:
		return func(ctx context.Context, _ *datagen.Scope) (int64, error) {
			return 0, coll.Drop(ctx)
		}

	case workload.KindCreateIndexes:
		models := o.indexes

		return func(ctx context.Context, _ *datagen.Scope) (int64, error) {
			_, err := coll.Indexes().CreateMany(ctx, models)
			return 0, err
		}

	case workload.KindRunCommand:
		rp := readPref(so.ReadPreference)

		return func(ctx context.Context, s *datagen.Scope) (int64, error) {
			opts := options.RunCmd()
			if rp != nil {
				opts.SetReadPreference(rp)
			}

			return 0, db.RunCommand(ctx, o.command.Value(s), opts).Err()
		}
	}

	// Validation rejects unknown kinds; reaching this is a bug, reported as
	// an error of every call rather than a crash.
	err := fmt.Errorf("internal error: operation kind %q has no implementation", so.Op)

	return func(context.Context, *datagen.Scope) (int64, error) { return 0, err }
}

// filterValue returns the filter, or an empty one when none was written.
func (o *Operation) filterValue(s *datagen.Scope) any {
	if o.filter == nil {
		return bson.D{}
	}

	return o.filter.Value(s)
}

// drain iterates a cursor to its end, so that the measured time includes
// every getMore, and maps each document with dec (nil: no mapping cost).
func drain(ctx context.Context, cur *mongo.Cursor, dec decoder) (int64, error) {
	var n int64

	for cur.Next(ctx) {
		n++

		if dec != nil {
			if err := dec(cur.Current); err != nil {
				_ = cur.Close(context.WithoutCancel(ctx))
				return n, err
			}
		}
	}

	err := cur.Err()
	if cerr := cur.Close(context.WithoutCancel(ctx)); err == nil {
		err = cerr
	}

	return n, err
}

func written(err error, n int64) (int64, error) {
	if err != nil {
		return 0, err
	}

	return n, nil
}

func updated(res *mongo.UpdateResult, err error) (int64, error) {
	if res == nil {
		return 0, err
	}

	return res.ModifiedCount + res.UpsertedCount, err
}

// writeConcern converts the spec's write concern for the driver. wtimeout is
// handled as a client-side timeout by Compile because driver v2 removed it.
func writeConcern(wc *workload.WriteConcern) *writeconcern.WriteConcern {
	if wc == nil || (wc.W == nil && wc.J == nil) {
		return nil
	}

	out := &writeconcern.WriteConcern{Journal: wc.J}

	if wc.W != nil {
		if wc.W.Tag != "" {
			out.W = wc.W.Tag
		} else {
			out.W = wc.W.N
		}
	}

	return out
}

func readPref(mode string) *readpref.ReadPref {
	switch mode {
	case "primaryPreferred":
		return readpref.PrimaryPreferred()
	case "secondary":
		return readpref.Secondary()
	case "secondaryPreferred":
		return readpref.SecondaryPreferred()
	case "nearest":
		return readpref.Nearest()
	case "primary":
		return readpref.Primary()
	}

	return nil
}
