package op

import (
	"fmt"
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// Args are the arguments of one execution of an operation, generated but not
// sent: what an external client stack (see package client) receives so
// that it runs the very operations the Go engine would, drawn from the same
// seeded worker scopes. Only the fields the operation's kind uses are set.
type Args struct {
	// Filter, Document, Update, Replacement, Projection, Sort and Pipeline
	// are generated values (nil when the kind or the operation has none).
	Filter, Document, Update, Replacement, Projection, Sort, Pipeline any

	// Documents are an insertMany's batch.
	Documents []any

	// Limit, Skip and BatchSize are the call's counts (0: none). BatchSize
	// is a cursor batch size; an insertMany's batch is Documents.
	Limit, Skip, BatchSize int64

	// Ordered is an insertMany's ordered flag (nil: the driver default).
	Ordered *bool

	// Upsert is an update's or replace's upsert flag.
	Upsert bool
}

// Args generates the arguments of one execution with the worker's scope s.
// Values are drawn in the order the kind's driver call draws them in
// kind_*.go (projection, sort, limit, skip, batch size, filter, then the
// document, update, replacement or pipeline), so that an external stack is
// sent what the Go engine would have sent. Composite operations and kinds
// without a collection have no Args: validation keeps them from external
// stacks, and Args returns an error for them.
func (o *Operation) Args(s *datagen.Scope) (Args, error) {
	k, ok := opkind.Lookup(o.Spec.Op)
	if !ok || o.Composite() || !slices.Contains(ArgsKinds(), k.Name) {
		return Args{}, fmt.Errorf("operation %q: kind %s cannot be sent to an external client", o.Name(), o.Spec.Op)
	}

	has := k.Takes
	insertMany := k.Batches // batch_size counts documents, not a cursor's batch

	var a Args

	if o.projection != nil {
		a.Projection = o.projection.Value(s)
	}

	if o.sort != nil {
		a.Sort = o.sort.Value(s)
	}

	if has("limit") {
		a.Limit = o.limitOf(s)
	}

	if has("skip") {
		a.Skip = o.skipOf(s)
	}

	if has("batch_size") && !insertMany {
		a.BatchSize = o.batchSizeOf(s)
	}

	if has("filter") {
		a.Filter = o.filterValue(s)
	}

	switch {
	case insertMany:
		n := int(o.Spec.BatchSize.N) // validated to be a constant in [1, 100000]
		a.Documents = make([]any, n)

		for i := range a.Documents {
			a.Documents[i] = o.document.Value(s)
		}

		a.Ordered = o.Spec.Ordered
	case o.document != nil:
		a.Document = o.document.Value(s)
	}

	if o.update != nil {
		a.Update = o.update.Value(s)
	}

	if o.replacement != nil {
		a.Replacement = o.replacement.Value(s)
	}

	if o.pipeline != nil {
		a.Pipeline = o.pipeline.Value(s)
	}

	a.Upsert = o.Spec.Upsert

	return a, nil
}

// ArgsKinds are the operation kinds whose executions Args can describe:
// the collection reads and writes every client stack has a call for, as
// the registry of kinds marks them (opkind.Kind.External). drop,
// createIndexes and runCommand are administration, left to the Go side.
func ArgsKinds() []string {
	return opkind.External()
}

// AppendJSON appends the arguments as one JSON object: the generated values
// in canonical Extended JSON v2 (so that int32, int64, double, dates and
// ObjectIds keep their BSON types), the counts as plain numbers and the
// flags as booleans, as the client protocol specifies (docs/clients.md).
func (a *Args) AppendJSON(dst []byte) ([]byte, error) {
	var values bson.D

	for _, f := range a.DocumentFields() {
		if f.Value != nil {
			values = append(values, bson.E{Key: f.Key, Value: f.Value})
		}
	}

	if a.Documents != nil {
		values = append(values, bson.E{Key: "documents", Value: bson.A(a.Documents)})
	}

	if values == nil {
		values = bson.D{}
	}

	text, err := bson.MarshalExtJSON(values, true, false)
	if err != nil {
		return dst, fmt.Errorf("encoding the arguments as Extended JSON: %w", err)
	}

	// text is a JSON object; the plain fields go before its closing brace.
	dst = append(dst, text[:len(text)-1]...)
	dst = a.AppendPlain(dst, len(values) > 0)

	return append(dst, '}'), nil
}

// Field is one document-valued argument of an operation, by its protocol
// name.
type Field struct {
	Key   string
	Value any
}

// DocumentFields are the document-valued arguments in the order the
// client protocol writes them (docs/clients.md), Value nil where unset;
// Documents, an array, follows them. An array, not a slice: the adapters'
// encoder asks for them on every operation without allocating.
func (a *Args) DocumentFields() [7]Field {
	return [7]Field{
		{"filter", a.Filter},
		{"document", a.Document},
		{"update", a.Update},
		{"replacement", a.Replacement},
		{"projection", a.Projection},
		{"sort", a.Sort},
		{"pipeline", a.Pipeline},
	}
}

// AppendPlain appends the counts (as plain numbers) and flags (as
// booleans) that are set, each as `"name":value` and each after a comma
// when a field precedes it (sep says whether one already does): the part
// of the protocol's arguments object that is no document.
func (a *Args) AppendPlain(dst []byte, sep bool) []byte {
	field := func(name string) {
		if sep {
			dst = append(dst, ',')
		}

		sep = true
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
	}

	for _, c := range [...]struct {
		name string
		n    int64
	}{{"limit", a.Limit}, {"skip", a.Skip}, {"batch_size", a.BatchSize}} {
		if c.n > 0 {
			field(c.name)
			dst = strconv.AppendInt(dst, c.n, 10)
		}
	}

	if a.Ordered != nil {
		field("ordered")
		dst = strconv.AppendBool(dst, *a.Ordered)
	}

	if a.Upsert {
		field("upsert")
		dst = strconv.AppendBool(dst, true)
	}

	return dst
}
