package op

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
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

// filterValue returns the filter, or an empty one when none was written.
func (o *Operation) filterValue(s *datagen.Scope) any {
	if o.filter == nil {
		return bson.D{}
	}

	return o.filter.Value(s)
}

// drain iterates a cursor to its end, so that the measured time includes
// every getMore, and maps each document with dec (nil: no mapping cost),
// timing the mapping alone on the context's DecodeClock when it has one.
func drain(ctx context.Context, cur *mongo.Cursor, dec decoder) (int64, error) {
	var n int64

	var clock *DecodeClock
	if dec != nil {
		clock = decodeClockOf(ctx)
	}

	for cur.Next(ctx) {
		n++

		if dec != nil {
			if err := dec.timed(clock, cur.Current); err != nil {
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

// deleted counts the documents a delete removed.
func deleted(res *mongo.DeleteResult, err error) (int64, error) {
	if res == nil {
		return 0, err
	}

	return res.DeletedCount, err
}

func updated(res *mongo.UpdateResult, err error) (int64, error) {
	if res == nil {
		return 0, err
	}

	return res.ModifiedCount + res.UpsertedCount, err
}

// WriteConcern converts a spec's write concern for the driver (nil for
// the deployment's default), for callers that write outside an operation,
// such as the durability phase.
func WriteConcern(wc *workload.WriteConcern) *writeconcern.WriteConcern {
	return writeConcern(wc)
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
