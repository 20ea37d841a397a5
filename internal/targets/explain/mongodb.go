package explain

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/results/result"
)

// idIndex is the name of the index MongoDB keeps on _id, which IDHACK
// stages use without naming it.
const idIndex = "_id_"

// normalizeMongoDB fills e from a MongoDB explain reply and reports whether
// raw had that shape. It understands:
//   - find, count, distinct and write commands: queryPlanner.winningPlan
//     (a tree of inputStage/inputStages) and executionStats;
//   - the slot-based engine (explainVersion "2"), whose tree is in
//     winningPlan.queryPlan;
//   - aggregations whose first stage is a $cursor holding the query's own
//     queryPlanner and executionStats, followed by pipeline stages;
//   - sharded plans, whose winningPlan lists shards[].winningPlan, and
//     sharded aggregations, with a plan per shard under "shards".
func normalizeMongoDB(e *result.Explain, raw bson.Raw) bool {
	plan, stats, pipeline, ok := mongoParts(raw, 0)
	if !ok {
		return false
	}

	// Pipeline stages after $cursor consume its output: the last one is
	// the outermost.
	for i := len(pipeline) - 1; i >= 0; i-- {
		e.Stages = append(e.Stages, pipeline[i])
	}

	walkMongoPlan(e, plan, 0)

	if stats != nil {
		e.DocsReturned = lookupCount(stats, "nReturned")
		e.KeysExamined = lookupCount(stats, "totalKeysExamined")
		e.DocsExamined = lookupCount(stats, "totalDocsExamined")
		e.ExecutionMS = lookupNumber(stats, "executionTimeMillis")
	}

	return true
}

// mongoParts finds the winning plan, the execution statistics (nil when the
// verbosity was queryPlanner) and the names of the pipeline stages that
// follow a $cursor stage.
func mongoParts(raw bson.Raw, depth int) (plan, stats bson.Raw, pipeline []string, ok bool) {
	if depth > 2 {
		return nil, nil, nil, false
	}

	if qp, found := lookupDoc(raw, "queryPlanner"); found {
		if wp, found := lookupDoc(qp, "winningPlan"); found {
			stats, _ = lookupDoc(raw, "executionStats")

			return unwrapQueryPlan(wp), stats, stageNames(values(raw.Lookup("stages"))), true
		}
	}

	stages := values(raw.Lookup("stages"))
	if len(stages) > 0 {
		if first, found := stages[0].DocumentOK(); found {
			if cursor, found := lookupDoc(first, "$cursor"); found {
				plan, stats, _, ok = mongoParts(cursor, depth+1)
				if ok {
					return plan, stats, stageNames(stages[1:]), true
				}
			}
		}
	}

	// A sharded aggregation: {shards: {name: {<a reply of its own>}}}.
	if shards, found := lookupDoc(raw, "shards"); found {
		elems, err := shards.Elements()
		if err == nil && len(elems) > 0 {
			if shard, found := elems[0].Value().DocumentOK(); found {
				return mongoParts(shard, depth+1)
			}
		}
	}

	return nil, nil, nil, false
}

// unwrapQueryPlan returns the stage tree of a winning plan: the plan itself
// for the classic engine, its queryPlan for the slot-based engine.
func unwrapQueryPlan(wp bson.Raw) bson.Raw {
	if qp, ok := lookupDoc(wp, "queryPlan"); ok {
		return qp
	}

	return wp
}

// stageNames returns the name (first key, e.g. "$group") of each pipeline
// stage in stages, skipping the $cursor stage.
func stageNames(stages []bson.RawValue) []string {
	var names []string

	for _, v := range stages {
		doc, ok := v.DocumentOK()
		if !ok {
			continue
		}

		elems, err := doc.Elements()
		if err != nil || len(elems) == 0 || elems[0].Key() == "$cursor" {
			continue
		}

		names = append(names, elems[0].Key())
	}

	return names
}

// walkMongoPlan appends the stages of the tree rooted at node, outermost
// first, and notes the first index used and any collection scan.
func walkMongoPlan(e *result.Explain, node bson.Raw, depth int) {
	if node == nil || depth > maxDepth {
		return
	}

	stage, _ := lookupString(node, "stage")
	if stage != "" {
		e.Stages = append(e.Stages, stage)
	}

	if stage == "COLLSCAN" {
		e.CollectionScan = true
	}

	if e.Index == "" {
		if name, ok := lookupString(node, "indexName"); ok {
			e.Index = name
		} else if stage == "IDHACK" {
			e.Index = idIndex
		}
	}

	if child, ok := lookupDoc(node, "inputStage"); ok {
		walkMongoPlan(e, child, depth+1)
	}

	for _, v := range values(node.Lookup("inputStages")) {
		if child, ok := v.DocumentOK(); ok {
			walkMongoPlan(e, child, depth+1)
		}
	}

	// SHARD_MERGE and SINGLE_SHARD list each shard's own winning plan.
	for _, v := range values(node.Lookup("shards")) {
		shard, ok := v.DocumentOK()
		if !ok {
			continue
		}

		if wp, ok := lookupDoc(shard, "winningPlan"); ok {
			walkMongoPlan(e, unwrapQueryPlan(wp), depth+1)
		}
	}
}
