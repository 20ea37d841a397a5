// Package opkind describes the operation kinds a workload may name: which
// fields each takes and needs, and whether it reads or writes. It is the one
// list that workload validation, the operation layer (package op, which
// binds each kind to the driver in a file of its own) and docs/workloads.md
// agree on; it imports nothing so that both sides can use it without a
// cycle.
package opkind

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
		{Name: InsertOne, Required: []string{"collection", "document"}, Optional: []string{"write_concern"}, Writes: true},
		{Name: InsertMany, Required: []string{"collection", "document", "batch_size"}, Optional: []string{"ordered", "write_concern"}, Writes: true},
		{Name: FindOne, Required: []string{"collection"}, Optional: []string{"filter", "projection", "sort", "skip", "read_preference", "decode"}, Reads: true},
		{Name: Find, Required: []string{"collection"}, Optional: []string{"filter", "projection", "sort", "limit", "skip", "batch_size", "read_preference", "decode"}, Reads: true},
		// countDocuments counts the whole collection without a filter.
		{Name: CountDocuments, Required: []string{"collection"}, Optional: []string{"filter", "limit", "skip", "read_preference"}, Reads: true},
		{Name: Aggregate, Required: []string{"collection", "pipeline"}, Optional: []string{"batch_size", "read_preference", "decode"}, Reads: true},
		{Name: UpdateOne, Required: []string{"collection", "filter", "update"}, Optional: []string{"upsert", "write_concern"}, Writes: true},
		{Name: UpdateMany, Required: []string{"collection", "filter", "update"}, Optional: []string{"upsert", "write_concern"}, Writes: true},
		{Name: ReplaceOne, Required: []string{"collection", "filter", "replacement"}, Optional: []string{"upsert", "write_concern"}, Writes: true},
		{Name: DeleteOne, Required: []string{"collection", "filter"}, Optional: []string{"write_concern"}, Writes: true},
		{Name: DeleteMany, Required: []string{"collection", "filter"}, Optional: []string{"write_concern"}, Writes: true},
		{Name: Drop, Required: []string{"collection"}, Optional: []string{"write_concern"}, Writes: true},
		{Name: CreateIndexes, Required: []string{"collection"}, Optional: []string{"indexes", "write_concern"}, Writes: true},
		// runCommand may read or write; a read preference applies to it.
		{Name: RunCommand, Required: []string{"command"}, Optional: []string{"read_preference"}, Reads: true},
	}
}

// All returns every operation kind, in documentation order.
func All() []Kind { return all() }

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
