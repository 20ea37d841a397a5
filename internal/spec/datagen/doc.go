// Package datagen turns the document templates of a workload file (insert
// documents, filters, updates, pipelines, commands) into values that the
// MongoDB driver can send, generating fresh random data for every operation.
//
// A template is ordinary YAML: mappings become bson.D (keeping key order),
// sequences bson.A, and scalars int64, float64, string, bool or nil according
// to their YAML tag. Dates are never parsed implicitly: 2024-01-01 stays a
// string; use ^date for BSON dates. MongoDB operators such as $gt, $set and
// $match are plain keys. YAML anchors, aliases and merge keys (<<) work.
//
// A mapping whose only key starts with ^ is a generator, as in MongoDB's genny
// tool (^ never starts a MongoDB operator). The generators, with the default
// of each optional argument (the others are required):
//
//	^seq:      {start: 0, step: 1}              int64 counter shared by all workers and phases of a run
//	                                            (in shard i of n, every n-th value from the i-th: Env.Shard)
//	^seq:      {counter: name, start: 0}        the named counter name: one live key space for every ^seq
//	                                            and key distribution that names it (Env.ResetKeySpaces)
//	^int:      {min: a, max: b}                 uniform int64 in [min, max]
//	^float:    {min: a, max: b}                 uniform float64 in [min, max)
//	^bool:     {p: 0.5}      or  ^bool: 0.5     true with probability p
//	^zipf:     {min: 0, max: b, s: 1.1}         Zipf-distributed int64 in [min, max], min most frequent (s > 1)
//	^hotspot:  {min: a, max: b | counter: name, hot_fraction: 0.1, hot_probability: 0.9}
//	                                            uniform in the first hot_fraction of [min, max] with
//	                                            probability hot_probability, else uniform in the rest
//	^uniform, ^zipfian, ^latest, ^exponential, ^sequential, ^key
//	                                            YCSB's request distributions over [min, max] or over a
//	                                            live range [min, newest key of counter]; see keys.go
//	^keyname:  {key: <int>, prefix: user, order: hashed, zeropadding: 1}
//	                                            the record name as YCSB writes it: prefix, zeros, then YCSB's
//	                                            hash of key (|FNV-1a| as a signed number), or key itself
//	^fields:   {count: n, of: <template>, prefix: field, id: <template>}
//	                                            a document _id, field0 .. field(n-1)
//	^field:    {count: n, of: <template>, prefix: field}
//	                                            a document of one of those fields, chosen uniformly
//	^choice:   {values: [...], weights: [...]}  one of values (templates); weights default to equal
//	^pool:     {size: n, of: <template>}        one of n values (1 to 1,000,000) generated once, when
//	                                            the template is compiled, and shared by all workers
//	^array:    {length: n, of: <template>}      bson.A; length may be a template yielding an int
//	^var:      name                             the value of iteration variable name (see NewEnv)
//	^words:    {count: 3}    or  ^words: 3      random words joined by spaces
//	^sentence: {words: 6}    or  ^sentence: 6   random words, capitalized, ending with a full stop
//	^string:   {length: 16}  or  ^string: 16    random letters and digits
//	^ycsbBytes: {length: 100} or ^ycsbBytes: 100
//	                                            BSON binary of YCSB's RandomByteIterator bytes (0x20-0x7f)
//	^name: {}, ^email: {}, ^uuid: {}            fake person name, e-mail address, UUID string
//	^date:     {from: "2020-01-01T00:00:00Z", to: "2025-01-01"}
//	                                            uniform time.Time in [from, to), UTC, millisecond precision
//	^date:     "2024-01-01T00:00:00Z"           that date
//	^now: {}                                    the current time, millisecond precision
//	^objectId: {}                               a new bson.ObjectID
//
// A generated value may hold at most 4,194,304 values (a BSON document is at
// most 16 MiB), so array lengths must be bounded: a ^int, ^zipf, ^hotspot or
// ^choice of those has a known bound, other length templates are clamped to
// [0, 1,000,000] when generating.
//
// Arguments are checked when a template is compiled, and every problem is
// reported as a *yamlpos.Error naming the line, column and field path.
//
// Random generators draw from the Scope of the worker evaluating the
// template, seeded from the workload seed and the worker index, so a run with
// the same seed and number of workers generates the same data (except ^seq,
// ^now, ^objectId, which depend on time and on the other workers).
package datagen
