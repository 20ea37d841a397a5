// Package opkind describes the operation kinds a workload may name: which
// fields each takes and needs, and whether it reads or writes. It is the one
// list that workload validation, the operation layer (package op, which
// binds each kind to the driver in a file of its own) and docs/workloads.md
// agree on; it imports nothing of the project so that both sides can use
// it without a cycle.
package opkind

import "slices"

// Names of the operation kinds, as written in workload files.
const (
	InsertOne      = "insertOne"
	InsertMany     = "insertMany"
	FindOne        = "findOne"
	Find           = "find"
	CountDocuments = "countDocuments"
	Aggregate      = "aggregate"
	UpdateOne      = "updateOne"
	UpdateMany     = "updateMany"
	ReplaceOne     = "replaceOne"
	DeleteOne      = "deleteOne"
	DeleteMany     = "deleteMany"
	Drop           = "drop"
	CreateIndexes  = "createIndexes"
	RunCommand     = "runCommand"
)

// Kind is what a workload file may write for one operation kind. Fields
// outside Required and Optional are errors: a "limit" on an insertOne is a
// mistake the user wants to hear about. Every operation also has name, op,
// weight and timeout, which are listed in neither.
type Kind struct {
	// Name is the value of an operation's op field.
	Name string

	// Required lists the fields the kind cannot do without.
	Required []string

	// Optional lists the other fields the kind uses.
	Optional []string

	// Reads is true when the kind reads, so that a read preference makes
	// sense for it.
	Reads bool

	// Writes is true when the kind writes, so that a write concern makes
	// sense for it.
	Writes bool

	// Stores names the field holding the whole documents the kind writes
	// to its collection ("document" for inserts, "replacement" for a
	// replace), so that a collection's document shape (schema checks,
	// decode: struct) is found without naming kinds; "" for kinds that
	// store no whole document.
	Stores string

	// Inserts is true when the kind adds its documents to the collection,
	// so that the documents acknowledged before a verify phase can be
	// counted (results' write verification).
	Inserts bool

	// Lists is true when the kind returns every document its filter
	// matches, so that a verify phase's count of them is what the
	// collection holds (results' write verification).
	Lists bool

	// Batches is true when the kind's batch_size is the number of
	// documents it builds per call rather than a cursor's batch size, so
	// that it must be a constant (it bounds each worker's memory).
	Batches bool

	// External is true when every client stack has a call for the kind
	// (the collection reads and writes), so that its executions can be
	// described as arguments and sent to an external client; the
	// administration kinds are left to the Go side.
	External bool
}

// Takes reports whether field is one the kind uses.
func (k Kind) Takes(field string) bool {
	return slices.Contains(k.Required, field) || slices.Contains(k.Optional, field)
}

// Fields returns every field the kind uses: Required, then Optional.
func (k Kind) Fields() []string {
	out := make([]string, 0, len(k.Required)+len(k.Optional))
	out = append(out, k.Required...)

	return append(out, k.Optional...)
}

// all is the table of kinds in documentation order. It is a function rather
// than a variable so that no caller can change it.
func all() []Kind {
	return []Kind{
		{Name: InsertOne, Required: []string{"collection", "document"}, Optional: []string{"write_concern"}, Writes: true, Stores: "document", Inserts: true, External: true},
		{Name: InsertMany, Required: []string{"collection", "document", "batch_size"}, Optional: []string{"ordered", "write_concern"}, Writes: true, Stores: "document", Inserts: true, Batches: true, External: true},
		{Name: FindOne, Required: []string{"collection"}, Optional: []string{"filter", "projection", "sort", "skip", "read_preference", "decode"}, Reads: true, External: true},
		{Name: Find, Required: []string{"collection"}, Optional: []string{"filter", "projection", "sort", "limit", "skip", "batch_size", "read_preference", "decode"}, Reads: true, Lists: true, External: true},
		// countDocuments counts the whole collection without a filter.
		{Name: CountDocuments, Required: []string{"collection"}, Optional: []string{"filter", "limit", "skip", "read_preference"}, Reads: true, External: true},
		{Name: Aggregate, Required: []string{"collection", "pipeline"}, Optional: []string{"batch_size", "read_preference", "decode"}, Reads: true, External: true},
		{Name: UpdateOne, Required: []string{"collection", "filter", "update"}, Optional: []string{"upsert", "write_concern"}, Writes: true, External: true},
		{Name: UpdateMany, Required: []string{"collection", "filter", "update"}, Optional: []string{"upsert", "write_concern"}, Writes: true, External: true},
		{Name: ReplaceOne, Required: []string{"collection", "filter", "replacement"}, Optional: []string{"upsert", "write_concern"}, Writes: true, Stores: "replacement", External: true},
		{Name: DeleteOne, Required: []string{"collection", "filter"}, Optional: []string{"write_concern"}, Writes: true, External: true},
		{Name: DeleteMany, Required: []string{"collection", "filter"}, Optional: []string{"write_concern"}, Writes: true, External: true},
		{Name: Drop, Required: []string{"collection"}, Optional: []string{"write_concern"}, Writes: true},
		{Name: CreateIndexes, Required: []string{"collection"}, Optional: []string{"indexes", "write_concern"}, Writes: true},
		// runCommand may read or write; a read preference applies to it.
		{Name: RunCommand, Required: []string{"command"}, Optional: []string{"read_preference"}, Reads: true},
	}
}

// Names returns the names of every operation kind, in documentation order.
func Names() []string {
	ks := all()
	names := make([]string, len(ks))

	for i, k := range ks {
		names[i] = k.Name
	}

	return names
}

// Lookup returns the kind called name.
func Lookup(name string) (Kind, bool) {
	for _, k := range all() {
		if k.Name == name {
			return k, true
		}
	}

	return Kind{}, false
}

// Inserts reports whether the kind called name adds its documents to its
// collection; false for an unknown name. Results' write verification asks
// it rather than naming the insert kinds.
func Inserts(name string) bool {
	k, ok := Lookup(name)
	return ok && k.Inserts
}

// Lists reports whether the kind called name returns every document its
// filter matches; false for an unknown name. Results' write verification
// asks it to find the verify phase's reads.
func Lists(name string) bool {
	k, ok := Lookup(name)
	return ok && k.Lists
}

// Stored returns the field holding the whole documents the kind called name
// writes to its collection, "" when it writes none or name is unknown.
func Stored(name string) string {
	k, _ := Lookup(name)
	return k.Stores
}

// External returns the names of the kinds every client stack has a call
// for, in documentation order.
func External() []string {
	var names []string

	for _, k := range all() {
		if k.External {
			names = append(names, k.Name)
		}
	}

	return names
}
