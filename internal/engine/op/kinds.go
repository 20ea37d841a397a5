package op

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// kind is what one operation kind contributes to the operation layer: how
// it runs against a server and, for kinds that have a query plan, the
// command explain wraps. Each kind lives in a file of its own
// (kind_*.go) and is found through the registry, kinds; what a workload may
// write for it (fields, reads or writes) is package opkind's table, and a
// test checks that both list the same kinds.
type kind struct {
	// name is the kind's name in workload files (an opkind name).
	name string

	// bind returns the function that runs o once. coll is the operation's
	// collection with its write concern and read preference, nil for kinds
	// without a collection; db is the workload's database.
	bind func(o *Operation, db *mongo.Database, coll *mongo.Collection) Func

	// explain returns the command that explain should wrap for one
	// instance of o with values from s; nil for kinds that have no plan
	// (inserts, drop, createIndexes, runCommand).
	explain func(o *Operation, s *datagen.Scope) bson.D

	// compile does the kind's own part of compiling o, at position p of
	// spec; nil when the templates common to all kinds are all it needs.
	compile func(o *Operation, spec *workload.Spec, p string) error
}

// kinds is the registry of operation kinds, in documentation order. It is a
// function rather than a variable so that no caller can change it.
func kinds() []kind {
	return []kind{
		insertOneKind(), insertManyKind(), findOneKind(), findKind(), countDocumentsKind(), aggregateKind(),
		updateOneKind(), updateManyKind(), replaceOneKind(), deleteOneKind(), deleteManyKind(),
		dropKind(), createIndexesKind(), runCommandKind(),
	}
}

// lookupKind returns the registered kind called name.
func lookupKind(name string) (kind, bool) {
	for _, k := range kinds() {
		if k.name == name {
			return k, true
		}
	}

	return kind{}, false
}

// body returns the kind-specific part of the operation.
func (o *Operation) body(db *mongo.Database, coll *mongo.Collection) Func {
	if k, ok := lookupKind(o.Spec.Op); ok {
		return k.bind(o, db, coll)
	}

	// Validation rejects unknown kinds; reaching this is a bug, reported as
	// an error of every call rather than a crash.
	err := fmt.Errorf("internal error: operation kind %q has no implementation", o.Spec.Op)

	return func(context.Context, *datagen.Scope) (int64, error) { return 0, err }
}
