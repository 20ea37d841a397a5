package op

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/datagen"
	"github.com/mongobench/mongobench/internal/workload"
)

// ExplainCommand returns the command document that explain should wrap for
// one representative instance of the operation, with values generated from
// s as in the run, and false for kinds that have no plan (inserts, drop,
// createIndexes, runCommand).
func (o *Operation) ExplainCommand(s *datagen.Scope) (bson.D, bool) {
	so := o.Spec
	coll := so.Collection

	s.NextIteration()

	switch so.Op {
	case workload.KindFind, workload.KindFindOne:
		cmd := bson.D{{Key: "find", Value: coll}, {Key: "filter", Value: o.filterValue(s)}}
		if o.projection != nil {
			cmd = append(cmd, bson.E{Key: "projection", Value: o.projection.Value(s)})
		}

		if o.sort != nil {
			cmd = append(cmd, bson.E{Key: "sort", Value: o.sort.Value(s)})
		}

		if n := o.skipOf(s); n > 0 {
			cmd = append(cmd, bson.E{Key: "skip", Value: n})
		}

		switch n := o.limitOf(s); {
		case so.Op == workload.KindFindOne:
			cmd = append(cmd, bson.E{Key: "limit", Value: int64(1)}, bson.E{Key: "singleBatch", Value: true})
		case n > 0:
			cmd = append(cmd, bson.E{Key: "limit", Value: n})
		}

		return cmd, true

	case workload.KindCountDocuments:
		// countDocuments is an aggregation in the driver: explain that.
		pipeline := bson.A{bson.D{{Key: "$match", Value: o.filterValue(s)}}}
		if n := o.skipOf(s); n > 0 {
			pipeline = append(pipeline, bson.D{{Key: "$skip", Value: n}})
		}

		if n := o.limitOf(s); n > 0 {
			pipeline = append(pipeline, bson.D{{Key: "$limit", Value: n}})
		}

		pipeline = append(pipeline, bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}})

		return bson.D{{Key: "aggregate", Value: coll}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}, true

	case workload.KindAggregate:
		return bson.D{{Key: "aggregate", Value: coll}, {Key: "pipeline", Value: o.pipeline.Value(s)}, {Key: "cursor", Value: bson.D{}}}, true

	case workload.KindUpdateOne, workload.KindUpdateMany, workload.KindReplaceOne:
		var u any
		if o.update != nil {
			u = o.update.Value(s)
		} else {
			u = o.replacement.Value(s)
		}

		stmt := bson.D{
			{Key: "q", Value: o.filterValue(s)},
			{Key: "u", Value: u},
			{Key: "upsert", Value: so.Upsert},
			{Key: "multi", Value: so.Op == workload.KindUpdateMany},
		}

		return bson.D{{Key: "update", Value: coll}, {Key: "updates", Value: bson.A{stmt}}}, true

	case workload.KindDeleteOne, workload.KindDeleteMany:
		limit := int32(1)
		if so.Op == workload.KindDeleteMany {
			limit = 0
		}

		stmt := bson.D{{Key: "q", Value: o.filterValue(s)}, {Key: "limit", Value: limit}}

		return bson.D{{Key: "delete", Value: coll}, {Key: "deletes", Value: bson.A{stmt}}}, true
	}

	return nil, false
}
