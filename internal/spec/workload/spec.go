// Package workload defines the workload file: what a benchmark creates, loads
// and measures. It parses YAML strictly (unknown fields are errors) and
// validates it, and every problem it reports names file, line, column and
// field path.
package workload

import (
	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/spec/targetspec"
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

	// Run holds settings shared by all phases, and is the measured phase
	// itself when Phases is empty.
	Run Run `yaml:"run" json:"run"`

	// Phases, when set, run in order after loading.
	Phases []Phase `yaml:"phases" json:"phases,omitempty"`

	// Operations are the named operations the run phase executes.
	Operations []Operation `yaml:"operations" json:"operations"`

	// Variants are named alternatives, each a patch over this spec (an
	// operation, its options, an index set, a collection option), compared
	// side by side in interleaved trials.
	Variants []Variant `yaml:"variants" json:"variants,omitempty"`

	// Trials configures repeated, interleaved trials of the variants.
	Trials Trials `yaml:"trials" json:"trials"`

	// Targets names the servers to run on (the command line may add more).
	Targets []TargetSpec `yaml:"targets" json:"targets,omitempty"`

	// Durability, when set, adds a durability phase after the trials:
	// a crash of each crashable target under load, and a count of the
	// acknowledged writes it lost (see Durability).
	Durability *Durability `yaml:"durability" json:"durability,omitempty"`

	// Capacity holds the settings of `mongobench capacity` for this
	// workload (see Capacity); nil when the file has no such section.
	Capacity *Capacity `yaml:"capacity" json:"capacity,omitempty"`

	// Thresholds are performance conditions checked at the end of a run
	// (see Thresholds).
	Thresholds Thresholds `yaml:"thresholds" json:"thresholds,omitzero"`

	// Variant is the name of the variant this spec is (empty for the base).
	Variant string `yaml:"-" json:"variant,omitempty"`

	// Params are the file's parameters with the values the run used (its
	// params block is taken out of the file before decoding; see Param).
	Params []Param `yaml:"-" json:"params,omitempty"`

	// nodes maps field paths to their YAML nodes so that Validate can
	// position its messages.
	nodes map[string]*yaml.Node

	// file is the name used in messages.
	file string

	// source is the file's text.
	source []byte

	// root is the parsed document, kept to build variants from.
	root *yaml.Node
}

// Variant is a named patch over the base spec. Its fields are merged into
// the base document before parsing: mappings key by key, lists of named
// items (collections, operations, phases; load steps by collection) item by
// item, anything else replaced.
type Variant struct {
	// Name labels the variant in tables.
	Name string `yaml:"name" json:"name"`

	// Description is free text.
	Description string `yaml:"description" json:"description,omitempty"`

	// Group puts the variant in a comparison group: verdicts and the
	// comparison block rank each group's variants among themselves (like
	// with like: a cleanup with 100 documents present against the other
	// cleanup with 100 documents, not against one of an empty
	// collection), each group against its first variant (or run.reference
	// when it is in the group). Variants without a group form one group.
	Group string `yaml:"group" json:"group,omitempty"`

	// The patchable parts of a spec, kept as YAML to merge.
	Vars        *Template `yaml:"vars" json:"vars,omitempty"`
	Collections *Template `yaml:"collections" json:"collections,omitempty"`
	Load        *Template `yaml:"load" json:"load,omitempty"`
	Run         *Template `yaml:"run" json:"run,omitempty"`
	Phases      *Template `yaml:"phases" json:"phases,omitempty"`
	Operations  *Template `yaml:"operations" json:"operations,omitempty"`
}

// Trials configures interleaved trials: every round runs each (target,
// variant) once, in an order reversed every other round (A B C C B A …), so
// that drift on a noisy machine favours none of them.
type Trials struct {
	// Rounds is the number of rounds (default 6 with variants or several
	// targets, else 1); run.rounds and --rounds win over it. A verdict
	// needs at least 6.
	Rounds int `yaml:"rounds" json:"rounds"`

	// Duration overrides the measured duration of the duration-timed
	// phases in each trial.
	Duration Duration `yaml:"duration" json:"duration,omitempty"`
}

// TargetSpec names a server to run on, launched by mongobench or existing
// (see package targetspec; its kind is checked against the registry of
// kinds by CheckTargets, which the caller runs with that registry).
type TargetSpec = targetspec.Spec

// MongodSpec configures launched mongod processes. Its binary is read only
// to be refused: a workload file names no program to run.
type MongodSpec = targetspec.Mongod

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

// Run holds the settings every phase shares, and, when the workload has no
// phases list, the one measured phase itself (named "run").
type Run struct {
	// Phase is the single measured phase of a workload without phases.
	Phase `yaml:",inline"`

	// Interval is the period of progress lines and interval snapshots.
	Interval Duration `yaml:"interval" json:"interval"`

	// Timeout bounds every operation unless the operation sets its own.
	Timeout Duration `yaml:"timeout" json:"timeout"`

	// MaxErrorRate is the fraction of failed operations tolerated before
	// the run counts as failed (exit code 1).
	MaxErrorRate float64 `yaml:"max_error_rate" json:"max_error_rate"`

	// AbortAfter ends a phase when no operation has succeeded for this
	// long, so that a dead server never makes a run hang.
	AbortAfter Duration `yaml:"abort_after" json:"abort_after"`

	// ServerSelectionTimeout is how long the driver waits for a usable
	// server before an operation fails. A phase whose operations fail with
	// network errors and in which nothing succeeded for this long is
	// aborted, so it also bounds how long a run outlives a dead server.
	ServerSelectionTimeout Duration `yaml:"server_selection_timeout" json:"server_selection_timeout"`

	// Rounds is the number of interleaved trial rounds of a comparison; it
	// wins over trials.rounds, and --rounds wins over both (see
	// Spec.TrialRounds).
	Rounds int `yaml:"rounds" json:"rounds,omitempty"`

	// CompareOn names the figure the workload's question is about:
	// "iteration" (a sequence's whole iteration) or an operation's name
	// (a composite's step as "composite/step"). Analysis and printing put
	// it first.
	CompareOn string `yaml:"compare_on" json:"compare_on,omitempty"`

	// CompareBy is the metric of the comparison block: any metric of the
	// threshold grammar (p50, p99.9, mean, max, throughput, error_rate),
	// "per_doc" for the median latency per returned document, or "decode"
	// for the client's decode time per returned document (the p50 of the
	// decode-time entries, docs/results.md). Empty means p50.
	CompareBy string `yaml:"compare_by" json:"compare_by,omitempty"`

	// MinEffect is the smallest change a verdict calls a difference, as a
	// percentage ("5%", the default; "0%" for none): a smaller change that
	// the data establish is "no meaningful difference".
	MinEffect string `yaml:"min_effect" json:"min_effect,omitempty"`

	// Reference names the variant (or, comparing targets, the target) the
	// others are compared with; empty means the first. It is declared, not
	// chosen from the results: the best of several equal contenders is
	// best by chance.
	Reference string `yaml:"reference" json:"reference,omitempty"`

	// CompareCost adds to each line of the comparison block its difference
	// from the best with a confidence interval, for questions that are
	// costs (decode cost per document = struct − none).
	CompareCost bool `yaml:"compare_cost" json:"compare_cost,omitempty"`

	// CompareOperations says that the operations of each measured phase
	// are alternatives answering one question, as a sequence's are, even
	// when the phase mixes them by weight: the comparison block also ranks
	// them against each other (per variant and target round by round, or
	// interval by interval in a single run). It is how a study compares
	// two forms of a query through an external client stack, which runs
	// weighted mixes but no sequences.
	CompareOperations bool `yaml:"compare_operations" json:"compare_operations,omitempty"`

	// Client is the client stack that runs the measured phases: "go"
	// (empty; mongobench's own engine) or an external stack such as
	// node-mongoose (see package client and docs/clients.md). It is
	// checked by package client, which owns the list of stacks.
	Client string `yaml:"client" json:"client,omitempty"`
}

// Phase is one stage of a run with its own operations and load model:
// closed-loop workers (default), an open-loop rate, ramping stages, or
// repeated growth blocks; optionally with latency-paced background jobs.
type Phase struct {
	// Name labels the phase in results ("run" for the run section).
	Name string `yaml:"name" json:"name,omitempty"`

	// Measure false runs the phase (e.g. to warm caches) without reporting
	// it among the measured figures.
	Measure *bool `yaml:"measure" json:"measure,omitempty"`

	// Verdict false measures and reports the phase but keeps it out of
	// every verdict and comparison block: a read-back that checks what the
	// measured phase wrote, or a set-up step, is not the question, and a
	// "2.6× slower" on it would read as the answer.
	Verdict *bool `yaml:"verdict" json:"verdict,omitempty"`

	// Operations restricts the phase's weighted mix to these operations
	// (default: all operations not used as background jobs).
	Operations []string `yaml:"operations" json:"operations,omitempty"`

	// Sequence, when set, runs these operations in order each iteration
	// instead of a weighted mix.
	Sequence []string `yaml:"sequence" json:"sequence,omitempty"`

	// Concurrency is the number of closed-loop workers (clients).
	Concurrency int `yaml:"concurrency" json:"concurrency"`

	// Duration is how long to measure, after warm-up.
	Duration Duration `yaml:"duration" json:"duration"`

	// MaxOperations stops the phase after this many measured operations
	// (0: no limit). With both set, whichever comes first ends the phase.
	MaxOperations int64 `yaml:"max_operations" json:"max_operations,omitempty"`

	// Warmup runs the phase for this long before measuring; its
	// operations are not in any reported figure.
	Warmup Duration `yaml:"warmup" json:"warmup"`

	// ThinkTime is how long each worker of a closed-loop phase waits after
	// an iteration returns before it starts the next, as an application's
	// user or code does between requests. Without it a closed loop sends
	// back to back, which offers far more load than an application that
	// thinks; the wait is not in any latency. 0 (default): no wait.
	ThinkTime Duration `yaml:"think_time" json:"think_time,omitempty"`

	// Rate makes the phase open-loop: operations start on a fixed schedule
	// from the phase's start, whether earlier ones returned or not, and
	// latency counts from the scheduled start.
	Rate Rate `yaml:"rate" json:"rate,omitempty"`

	// MaxInFlight bounds the operations of an open-loop phase in flight at
	// once; more due operations wait (and count as late).
	MaxInFlight int `yaml:"max_in_flight" json:"max_in_flight,omitempty"`

	// MaxBacklog bounds the due operations waiting for an in-flight slot;
	// operations beyond it are dropped and counted.
	MaxBacklog int `yaml:"max_backlog" json:"max_backlog,omitempty"`

	// Stages ramp the rate (open-loop) or the concurrency (closed-loop).
	Stages []Stage `yaml:"stages" json:"stages,omitempty"`

	// Blocks repeats a block of steps until a condition holds, recording
	// latency and collection size per block (growth curves).
	Blocks *Blocks `yaml:"blocks" json:"blocks,omitempty"`

	// Background runs jobs alongside the phase's operations.
	Background []Background `yaml:"background" json:"background,omitempty"`

	// Replay runs a recorded timeline instead of a mix: a worker per
	// recorded connection starts that connection's operations in order at
	// their recorded offsets (see Replay).
	Replay *Replay `yaml:"replay" json:"replay,omitempty"`
}

// Stage is one step of a ramp: over Duration the rate (or concurrency)
// moves to its target, linearly or at once.
type Stage struct {
	// Duration of the stage.
	Duration Duration `yaml:"duration" json:"duration"`

	// Rate is the target rate of an open-loop ramp.
	Rate Rate `yaml:"rate" json:"rate,omitempty"`

	// Concurrency is the target number of workers of a closed-loop ramp.
	Concurrency int `yaml:"concurrency" json:"concurrency,omitempty"`

	// Shape is "linear" (default) or "step".
	Shape string `yaml:"shape" json:"shape,omitempty"`
}

// Blocks describes growth blocks: the steps run in order, as one block, and
// the block repeats until one of the Until conditions holds.
type Blocks struct {
	// Steps make up one block.
	Steps []Step `yaml:"steps" json:"steps"`

	// Until ends the repetition.
	Until Until `yaml:"until" json:"until"`
}

// Step runs a number of operations at a concurrency.
type Step struct {
	// Operations is the step's weighted mix.
	Operations []string `yaml:"operations" json:"operations,omitempty"`

	// Sequence runs these operations in order each iteration instead.
	Sequence []string `yaml:"sequence" json:"sequence,omitempty"`

	// Count is the number of operations the step runs.
	Count int64 `yaml:"count" json:"count"`

	// Concurrency is the number of workers (default: the phase's).
	Concurrency int `yaml:"concurrency" json:"concurrency,omitempty"`
}

// Until is the stop condition of growth blocks; the first that holds wins.
type Until struct {
	// Documents stops once Collection holds at least this many documents.
	Documents int64 `yaml:"documents" json:"documents,omitempty"`

	// Collection is the collection whose size is recorded after each block
	// and checked against Documents.
	Collection string `yaml:"collection" json:"collection"`

	// Duration stops after this much time.
	Duration Duration `yaml:"duration" json:"duration,omitempty"`

	// Blocks stops after this many blocks.
	Blocks int `yaml:"blocks" json:"blocks,omitempty"`
}

// Background is a job run beside a phase's operations at a fixed or a
// latency-paced rate, such as a bulk update that must not hurt the
// foreground's latency.
type Background struct {
	// Operation names the job's operation.
	Operation string `yaml:"operation" json:"operation"`

	// Rate is a fixed rate for the job.
	Rate Rate `yaml:"rate" json:"rate,omitempty"`

	// Pacing adjusts the job's rate each interval from its latency.
	Pacing *Pacing `yaml:"pacing" json:"pacing,omitempty"`

	// MaxInFlight bounds the job's operations in flight (default 4).
	MaxInFlight int `yaml:"max_in_flight" json:"max_in_flight,omitempty"`
}

// Pacing is latency-paced rate control: each interval, below Low the rate is
// multiplied by SpeedUp, at or above High by SlowDown, in between it holds,
// always within [Min, Max].
type Pacing struct {
	// Start, Min and Max are the initial rate, the floor and the ceiling.
	Start Rate `yaml:"start" json:"start"`
	Min   Rate `yaml:"min" json:"min"`
	Max   Rate `yaml:"max" json:"max"`

	// Low and High are the latency thresholds.
	Low  Duration `yaml:"low" json:"low"`
	High Duration `yaml:"high" json:"high"`

	// SpeedUp and SlowDown are the rate factors.
	SpeedUp  float64 `yaml:"speed_up" json:"speed_up"`
	SlowDown float64 `yaml:"slow_down" json:"slow_down"`

	// Percentile of the job's latency compared with the thresholds
	// (default 99).
	Percentile float64 `yaml:"percentile" json:"percentile"`
}

// Operation is one named operation.
type Operation struct {
	// Name labels the operation's figures.
	Name string `yaml:"name" json:"name"`

	// Op is the kind: insertOne, find, ... (see package opkind).
	Op string `yaml:"op" json:"op"`

	// Weight is the operation's share of a weighted mix (default 1).
	Weight *float64 `yaml:"weight" json:"weight,omitempty"`

	// Collection the operation works on.
	Collection string `yaml:"collection" json:"collection,omitempty"`

	// Document is the template inserted by insertOne and insertMany.
	Document *Template `yaml:"document" json:"document,omitempty"`

	// BatchSize is the number of documents of an insertMany (a
	// constant), or the cursor batch size of a find or aggregate (a
	// constant or a generator drawn for every call).
	BatchSize Count `yaml:"batch_size" json:"batch_size,omitzero"`

	// Ordered makes insertMany stop at the first error (default true).
	Ordered *bool `yaml:"ordered" json:"ordered,omitempty"`

	// Filter selects documents.
	Filter *Template `yaml:"filter" json:"filter,omitempty"`

	// Projection selects fields of returned documents.
	Projection *Template `yaml:"projection" json:"projection,omitempty"`

	// Sort orders returned documents.
	Sort *Template `yaml:"sort" json:"sort,omitempty"`

	// Limit caps the number of documents: a constant or a generator drawn
	// for every call.
	Limit Count `yaml:"limit" json:"limit,omitzero"`

	// Skip skips documents: a constant or a generator drawn for every call.
	Skip Count `yaml:"skip" json:"skip,omitzero"`

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

	// Decode maps returned documents (find, findOne, aggregate) so that the
	// mapping cost is measured: "none" (default: count raw documents),
	// "raw" (walk the raw BSON), "map" (bson.M) or "struct" (a typed struct
	// derived from the collection's document template).
	Decode string `yaml:"decode" json:"decode,omitempty"`

	// Timeout bounds the operation (default: run.timeout).
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`

	// Steps, when set, make the operation composite: one entry of a
	// weighted mix (or of a sequence) that runs these operations in order
	// as one iteration, so that they share iteration variables, and is
	// measured as one unit beside each step (see composite.go).
	Steps []Operation `yaml:"steps" json:"steps,omitempty"`
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

// DecodeModes lists the decode modes of read operations.
var DecodeModes = []string{"none", "raw", "map", "struct"}

// Source returns the text the spec was parsed from.
func (s *Spec) Source() []byte { return s.source }

// File returns the file name the spec was parsed from.
func (s *Spec) File() string { return s.file }

// Node returns the YAML node at a field path such as "operations[1].weight",
// or nil when the field was not written in the file.
func (s *Spec) Node(path string) *yaml.Node { return s.nodes[path] }
