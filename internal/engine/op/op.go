// Package op turns the operations of a workload file into functions that run
// them against a database with the official driver.
//
// Compiling (templates, options) is separate from binding to a database so
// that `mongobench validate` checks everything without a server, and so that
// the per-call work on the load engine's hot path is only generating values
// and calling the driver.
//
// Each operation kind is one file, kind_*.go, listed in the registry of
// kinds.go; package opkind holds what a workload may write for each kind.
package op

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// Func runs an operation once with the worker's generator scope. It returns
// the number of documents returned or written.
type Func func(ctx context.Context, s *datagen.Scope) (docs int64, err error)

// Operation is a compiled operation, ready to be bound to a database.
type Operation struct {
	// Spec is the operation as written in the workload file.
	Spec *workload.Operation

	// Weight is the share of the operation in a weighted mix.
	Weight float64

	// Timeout bounds one execution.
	Timeout time.Duration

	document, filter, projection, sort, pipeline, update, replacement, command *datagen.Template

	// limit, skip and batchSize are the generators of a generated limit,
	// skip or cursor batch size.
	limit, skip, batchSize *datagen.Template

	indexes []mongo.IndexModel

	// decode maps returned documents; nil only counts them.
	decode decoder

	// Steps are a composite operation's compiled steps, run in order as
	// one iteration (nil for a plain operation).
	Steps []*Operation
}

// Name is the operation's label in results.
func (o *Operation) Name() string { return o.Spec.Name }

// Compile compiles every operation of the spec. All problems are returned
// at once as positioned errors.
func Compile(spec *workload.Spec, env *datagen.Env) ([]*Operation, []error) {
	var errs []error

	ops := make([]*Operation, 0, len(spec.Operations))

	for i := range spec.Operations {
		o, e := compileOne(spec, env, i)
		errs = append(errs, e...)
		ops = append(ops, o)
	}

	if len(errs) > 0 {
		yamlpos.Sort(errs)
		return nil, yamlpos.WithFile(spec.File(), errs)
	}

	return ops, nil
}

// compileOperation compiles the operation so, written at field path p.
func compileOperation(spec *workload.Spec, env *datagen.Env, so *workload.Operation, p string) (*Operation, []error) {
	o := &Operation{Spec: so, Weight: so.WeightOf(), Timeout: so.Timeout.D()}

	if wc := so.WriteConcern; wc != nil && wc.WTimeout > 0 && wc.WTimeout.D() < o.Timeout {
		// Driver v2 has no server-side wtimeout; the bound is enforced on
		// the client, as the driver's own migration guide recommends.
		o.Timeout = wc.WTimeout.D()
	}

	var errs []error

	for _, f := range []struct {
		dst   **datagen.Template
		node  *workload.Template
		field string
	}{
		{&o.document, so.Document, "document"},
		{&o.filter, so.Filter, "filter"},
		{&o.projection, so.Projection, "projection"},
		{&o.sort, so.Sort, "sort"},
		{&o.pipeline, so.Pipeline, "pipeline"},
		{&o.update, so.Update, "update"},
		{&o.replacement, so.Replacement, "replacement"},
		{&o.command, so.Command, "command"},
	} {
		if f.node == nil {
			continue
		}

		t, e := env.Compile(f.node.Node(), yamlpos.Field(p, f.field))
		errs = append(errs, e...)
		*f.dst = t
	}

	errs = append(errs, o.compileCounts(env, p)...)

	if so.Decode == "struct" {
		typ, err := structTypeFor(spec, so.Collection, yamlpos.Field(p, "decode"))
		if err != nil {
			errs = append(errs, err)
		} else {
			o.decode = newDecoder(so.Decode, typ)
		}
	} else {
		o.decode = newDecoder(so.Decode, nil)
	}

	if k, ok := lookupKind(so.Op); ok && k.compile != nil {
		if err := k.compile(o, spec, p); err != nil {
			errs = append(errs, err)
		}
	}

	return o, errs
}
