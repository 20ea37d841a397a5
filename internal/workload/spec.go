// Package workload defines the workload file: what a benchmark creates, loads
// and measures. It parses YAML strictly (unknown fields are errors) and
// validates it, and every problem it reports names file, line, column and
// field path.
package workload

import (
	"gopkg.in/yaml.v3"
)

// Spec is a parsed workload file.
//
// Fields holding document templates (documents, filters, updates, pipelines,
// commands) are kept as YAML nodes: the datagen package compiles them, and
// keeping the nodes keeps their positions for error messages.
type Spec struct {
	// Name identifies the workload in results and default file names.
	Name string `yaml:"name" json:"name"`

	// Description is free text shown in reports.
	Description string `yaml:"description" json:"description,omitempty"`

	// Database is the database mongobench owns for this workload: it is
	// created, reset and dropped by mongobench, and nothing outside it is
	// touched.
	Database string `yaml:"database" json:"database"`

	// Seed makes generated data repeatable; the command line may override it.
	Seed int64 `yaml:"seed" json:"seed"`

	// Vars are iteration variables: templates evaluated at most once per
	// iteration, so that two operations of one iteration can share a value
	// (search for the error just created).
	Vars *Template `yaml:"vars" json:"vars,omitempty"`

	// Collections declares the collections with their options and indexes.
	Collections []Collection `yaml:"collections" json:"collections"`

	// Load lists the bulk inserts done before measurement starts.
	Load []LoadStep `yaml:"load" json:"load,omitempty"`

	// Run configures the measured phase.
	Run Run `yaml:"run" json:"run"`

	// Operations are the named operations the run phase executes.
	Operations []Operation `yaml:"operations" json:"operations"`

	// nodes maps field paths to their YAML nodes so that Validate can
	// position its messages.
	nodes map[string]*yaml.Node

	// file is the name used in messages.
	file string

	// source is the file's text.
	source []byte
}

// Collection is one collection of the workload's database.
type Collection struct {
	// Name of the collection.
	Name string `yaml:"name" json:"name"`

	// Capped makes the collection a capped collection of Size bytes (and at
	// most Max documents when Max > 0).
	Capped bool `yaml:"capped" json:"capped,omitempty"`

	// Size is the capped collection's size in bytes.
	Size int64 `yaml:"size" json:"size,omitempty"`

	// Max is the capped collection's maximum number of documents.
	Max int64 `yaml:"max" json:"max,omitempty"`

	// Indexes are created after the collection, before loading.
	Indexes []Index `yaml:"indexes" json:"indexes,omitempty"`
}

// Index is an index declaration. Keys is an ordered mapping of field (dotted
// paths allowed) to direction 1 or -1, or to an index type such as "text",
// "2dsphere" or "hashed".
type Index struct {
	// Name of the index; derived from the keys as MongoDB does when empty.
	Name string `yaml:"name" json:"name,omitempty"`

	// Keys is kept as a node because its order matters.
	Keys *Template `yaml:"keys" json:"keys"`

	// Unique rejects documents with duplicate keys.
	Unique bool `yaml:"unique" json:"unique,omitempty"`

	// Sparse skips documents without the indexed field.
	Sparse bool `yaml:"sparse" json:"sparse,omitempty"`

	// ExpireAfter makes the index a TTL index.
	ExpireAfter *Duration `yaml:"expire_after" json:"expire_after,omitempty"`
}

// LoadStep inserts generated documents into a collection before measuring.
type LoadStep struct {
	// Collection to fill; it must be declared in collections.
	Collection string `yaml:"collection" json:"collection"`

	// Documents is how many documents to insert.
	Documents int64 `yaml:"documents" json:"documents"`

	// BatchSize is the number of documents per insertMany.
	BatchSize int `yaml:"batch_size" json:"batch_size"`

	// Concurrency is the number of loading workers (default: the run's).
	Concurrency int `yaml:"concurrency" json:"concurrency"`

	// Document is the template of each inserted document.
	Document *Template `yaml:"document" json:"document"`
}

// Run configures the measured phase.
type Run struct {
	// Concurrency is the number of closed-loop workers (clients).
	Concurrency int `yaml:"concurrency" json:"concurrency"`

	// Duration is how long to measure, after warm-up.
	Duration Duration `yaml:"duration" json:"duration"`

	// MaxOperations stops the run after this many measured operations
	// (0: no limit). With both set, whichever comes first ends the run.
	MaxOperations int64 `yaml:"max_operations" json:"max_operations,omitempty"`

	// Warmup runs the workload for this long before measuring; its
	// operations are not in any reported figure.
	Warmup Duration `yaml:"warmup" json:"warmup"`

	// Interval is the period of progress lines and interval snapshots.
	Interval Duration `yaml:"interval" json:"interval"`

	// Timeout bounds every operation unless the operation sets its own.
	Timeout Duration `yaml:"timeout" json:"timeout"`

	// MaxErrorRate is the fraction of failed operations tolerated before
	// the run counts as failed (exit code 1).
	MaxErrorRate float64 `yaml:"max_error_rate" json:"max_error_rate"`

	// AbortAfter ends the run when no operation has succeeded for this
	// long, so that a dead server never makes a run hang.
	AbortAfter Duration `yaml:"abort_after" json:"abort_after"`

	// Sequence, when set, runs these operations in order each iteration
	// instead of a weighted mix of all operations.
	Sequence []string `yaml:"sequence" json:"sequence,omitempty"`
}

// Operation is one named operation.
type Operation struct {
	// Name labels the operation's figures.
	Name string `yaml:"name" json:"name"`

	// Op is the kind: insertOne, find, ... (see Kinds).
	Op string `yaml:"op" json:"op"`

	// Weight is the operation's share of a weighted mix (default 1).
	Weight *float64 `yaml:"weight" json:"weight,omitempty"`

	// Collection the operation works on.
	Collection string `yaml:"collection" json:"collection,omitempty"`

	// Document is the template inserted by insertOne and insertMany.
	Document *Template `yaml:"document" json:"document,omitempty"`

	// BatchSize is the number of documents of an insertMany, or the
	// cursor batch size of a find.
	BatchSize int `yaml:"batch_size" json:"batch_size,omitempty"`

	// Ordered makes insertMany stop at the first error (default true).
	Ordered *bool `yaml:"ordered" json:"ordered,omitempty"`

	// Filter selects documents.
	Filter *Template `yaml:"filter" json:"filter,omitempty"`

	// Projection selects fields of returned documents.
	Projection *Template `yaml:"projection" json:"projection,omitempty"`

	// Sort orders returned documents.
	Sort *Template `yaml:"sort" json:"sort,omitempty"`

	// Limit caps the number of documents.
	Limit int64 `yaml:"limit" json:"limit,omitempty"`

	// Skip skips documents.
	Skip int64 `yaml:"skip" json:"skip,omitempty"`

	// Pipeline is an aggregation pipeline.
	Pipeline *Template `yaml:"pipeline" json:"pipeline,omitempty"`

	// Update is an update document or an update pipeline.
	Update *Template `yaml:"update" json:"update,omitempty"`

	// Replacement is replaceOne's new document.
	Replacement *Template `yaml:"replacement" json:"replacement,omitempty"`

	// Upsert inserts when nothing matches.
	Upsert bool `yaml:"upsert" json:"upsert,omitempty"`

	// Command is runCommand's command document, run on the workload's
	// database.
	Command *Template `yaml:"command" json:"command,omitempty"`

	// Indexes names the declared indexes createIndexes creates (default:
	// all indexes declared for the collection).
	Indexes []string `yaml:"indexes" json:"indexes,omitempty"`

	// WriteConcern overrides the deployment's default for writes.
	WriteConcern *WriteConcern `yaml:"write_concern" json:"write_concern,omitempty"`

	// ReadPreference routes reads: primary, primaryPreferred, secondary,
	// secondaryPreferred or nearest.
	ReadPreference string `yaml:"read_preference" json:"read_preference,omitempty"`

	// Timeout bounds the operation (default: run.timeout).
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
}

// WriteConcern is a write concern as MongoDB defines it.
type WriteConcern struct {
	// W is a number of members (0 = unacknowledged) or a tag such as
	// "majority".
	W *W `yaml:"w" json:"w,omitempty"`

	// J requests acknowledgement after the journal is written.
	J *bool `yaml:"j" json:"j,omitempty"`

	// WTimeout bounds waiting for replication.
	WTimeout Duration `yaml:"wtimeout" json:"wtimeout,omitempty"`
}

// Kind names of operations, as written in workload files.
const (
	KindInsertOne      = "insertOne"
	KindInsertMany     = "insertMany"
	KindFindOne        = "findOne"
	KindFind           = "find"
	KindCountDocuments = "countDocuments"
	KindAggregate      = "aggregate"
	KindUpdateOne      = "updateOne"
	KindUpdateMany     = "updateMany"
	KindReplaceOne     = "replaceOne"
	KindDeleteOne      = "deleteOne"
	KindDeleteMany     = "deleteMany"
	KindDrop           = "drop"
	KindCreateIndexes  = "createIndexes"
	KindRunCommand     = "runCommand"
)

// Kinds lists every operation kind in documentation order.
var Kinds = []string{
	KindInsertOne, KindInsertMany, KindFindOne, KindFind, KindCountDocuments, KindAggregate,
	KindUpdateOne, KindUpdateMany, KindReplaceOne, KindDeleteOne, KindDeleteMany,
	KindDrop, KindCreateIndexes, KindRunCommand,
}

// IsWrite reports whether the operation kind writes, so that a write concern
// makes sense for it.
func IsWrite(kind string) bool {
	switch kind {
	case KindInsertOne, KindInsertMany, KindUpdateOne, KindUpdateMany, KindReplaceOne,
		KindDeleteOne, KindDeleteMany, KindDrop, KindCreateIndexes:
		return true
	}

	return false
}

// IsRead reports whether the operation kind reads, so that a read preference
// makes sense for it.
func IsRead(kind string) bool {
	switch kind {
	case KindFindOne, KindFind, KindCountDocuments, KindAggregate, KindRunCommand:
		return true
	}

	return false
}

// Source returns the text the spec was parsed from.
func (s *Spec) Source() []byte { return s.source }

// File returns the file name the spec was parsed from.
func (s *Spec) File() string { return s.file }

// Node returns the YAML node at a field path such as "operations[1].weight",
// or nil when the field was not written in the file.
func (s *Spec) Node(path string) *yaml.Node { return s.nodes[path] }
