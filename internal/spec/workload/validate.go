package workload

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/spec/opkind"
)

var (
	// nameRe restricts names used as labels in tables and file names.
	nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

	readPreferences = []string{"primary", "primaryPreferred", "secondary", "secondaryPreferred", "nearest"}

	indexTypes = []string{"text", "2dsphere", "2d", "hashed"}
)

// Limits that keep a typo (an extra zero) from exhausting the machine.
const (
	maxConcurrency = 10000
	maxBatchSize   = 100000
	minInterval    = 100 * time.Millisecond
)

// validator collects positioned errors.
type validator struct {
	s    *Spec
	errs []error
}

// at reports a problem with the field at path; when the field was not written
// the nearest written parent gives the position.
func (v *validator) at(path, format string, args ...any) {
	n := v.s.node(path)
	for p := path; n == nil && p != ""; {
		p = parentPath(p)
		n = v.s.node(p)
	}

	e := yamlpos.At(n, path, format, args...)
	e.File = v.s.file
	v.errs = append(v.errs, e)
}

// parentPath strips the last element of a field path.
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}

	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}

	return ""
}

func (v *validator) set(path string) bool { return v.s.node(path) != nil }

// Validate checks the spec's consistency without any server. It is called by
// Parse; callers that build specs in code call it themselves. Templates are
// checked by the op package, which compiles them.
func (s *Spec) Validate() []error {
	if s.nodes == nil {
		s.nodes = map[string]*yaml.Node{}
	}

	v := &validator{s: s}

	switch {
	case s.Name == "":
		v.at("name", "is required")
	case !nameRe.MatchString(s.Name):
		v.at("name", "%q: use letters, digits, '_', '.' and '-' only", s.Name)
	}

	v.database()

	collections := v.collections()

	for i, l := range s.Load {
		v.load(yamlpos.Index("load", i), l, collections)
	}

	ops := v.operations(collections)
	v.settings()
	v.phases(ops, collections)
	v.sequenceWeights()
	v.budget()
	v.comparison()
	v.compareOn()
	v.documents()
	v.zeroRates()
	v.thresholds(ops)
	v.durability(ops, collections)
	v.capacity(ops)

	yamlpos.Sort(v.errs)

	return v.errs
}

func (v *validator) database() {
	db := v.s.Database

	switch {
	case db == "":
		v.at("database", "is required: name the database mongobench owns for this workload")
	case len(db) > 63:
		v.at("database", "must be at most 63 characters")
	case strings.ContainsAny(db, "/\\. \"$*<>:|?"):
		v.at("database", "%q: must not contain any of / \\ . space \" $ * < > : | ?", db)
	case slices.Contains([]string{"admin", "local", "config"}, db):
		v.at("database", "%q is a system database; mongobench never benchmarks in it", db)
	}
}

// collections validates the declarations and returns them by name.
func (v *validator) collections() map[string]*Collection {
	byName := make(map[string]*Collection, len(v.s.Collections))

	for i := range v.s.Collections {
		c := &v.s.Collections[i]
		p := yamlpos.Index("collections", i)

		switch {
		case c.Name == "":
			v.at(yamlpos.Field(p, "name"), "is required")
		case strings.ContainsAny(c.Name, "$\x00") || strings.HasPrefix(c.Name, "system.") || c.Name == OwnerCollection:
			v.at(yamlpos.Field(p, "name"), "%q is not a valid collection name", c.Name)
		case byName[c.Name] != nil:
			v.at(yamlpos.Field(p, "name"), "collection %q is declared twice", c.Name)
		default:
			byName[c.Name] = c
		}

		if c.Capped && c.Size <= 0 {
			v.at(yamlpos.Field(p, "size"), "a capped collection needs size > 0 (bytes)")
		}

		if !c.Capped && (c.Size != 0 || c.Max != 0) {
			v.at(yamlpos.Field(p, "capped"), "size and max apply to capped collections only; add capped: true")
		}

		if c.Max < 0 {
			v.at(yamlpos.Field(p, "max"), "must be >= 0")
		}

		names := map[string]bool{}

		for j, idx := range c.Indexes {
			ip := yamlpos.Index(yamlpos.Field(p, "indexes"), j)
			v.index(ip, idx, names)
		}
	}

	return byName
}

func (v *validator) index(p string, idx Index, names map[string]bool) {
	keys, err := IndexKeys(idx.Keys.Node(), yamlpos.Field(p, "keys"))
	if err != nil {
		err.File = v.s.file
		v.errs = append(v.errs, err)

		return
	}

	name := idx.Name
	if name == "" {
		name = DefaultIndexName(keys)
	}

	if names[name] {
		v.at(p, "index %q is declared twice", name)
	}

	names[name] = true

	if idx.ExpireAfter != nil && len(keys) != 1 {
		v.at(yamlpos.Field(p, "expire_after"), "a TTL index must have exactly one key")
	}
}

func (v *validator) load(p string, l LoadStep, collections map[string]*Collection) {
	v.collectionRef(yamlpos.Field(p, "collection"), l.Collection, collections)

	if l.Documents <= 0 {
		v.at(yamlpos.Field(p, "documents"), "must be > 0")
	}

	if l.BatchSize <= 0 || l.BatchSize > maxBatchSize {
		v.at(yamlpos.Field(p, "batch_size"), "must be between 1 and %d", maxBatchSize)
	}

	if l.Concurrency <= 0 || l.Concurrency > maxConcurrency {
		v.at(yamlpos.Field(p, "concurrency"), "must be between 1 and %d", maxConcurrency)
	}

	if l.Document == nil {
		v.at(yamlpos.Field(p, "document"), "is required: the template of the documents to insert")
	}
}

func (v *validator) collectionRef(p, name string, collections map[string]*Collection) {
	switch {
	case name == "":
		v.at(p, "is required")
	case collections[name] == nil:
		v.at(p, "collection %q is not declared in collections", name)
	}
}

func (v *validator) operations(collections map[string]*Collection) map[string]bool {
	ops := v.s.Operations
	byName := map[string]bool{}

	if len(ops) == 0 {
		v.at("operations", "at least one operation is required")
		return byName
	}

	for i := range ops {
		v.operation(yamlpos.Index("operations", i), &ops[i], collections, byName)
	}

	return byName
}

func (v *validator) operation(p string, o *Operation, collections map[string]*Collection, names map[string]bool) {
	switch {
	case o.Name == "":
		v.at(yamlpos.Field(p, "name"), "is required")
	case !nameRe.MatchString(o.Name):
		v.at(yamlpos.Field(p, "name"), "%q: use letters, digits, '_', '.' and '-' only", o.Name)
	case names[o.Name]:
		v.at(yamlpos.Field(p, "name"), "operation %q is defined twice", o.Name)
	case o.Name == IterationUnit:
		v.at(yamlpos.Field(p, "name"), "%q is reserved for a sequence's whole iteration", o.Name)
	default:
		names[o.Name] = true
	}

	if o.Weight != nil && *o.Weight <= 0 {
		v.at(yamlpos.Field(p, "weight"), "must be > 0")
	}

	if v.set(yamlpos.Field(p, "steps")) {
		v.composite(p, o, collections)
		return
	}

	if v.set(yamlpos.Field(p, "timeout")) && o.Timeout <= 0 {
		v.at(yamlpos.Field(p, "timeout"), "must be > 0")
	}

	kind, ok := opkind.Lookup(o.Op)
	allowed := kind.Fields()
	if !ok {
		if o.Op == "" {
			v.at(yamlpos.Field(p, "op"), "is required (one of %s)", strings.Join(opkind.Names(), ", "))
		} else {
			v.at(yamlpos.Field(p, "op"), "unknown operation %q (one of %s)", o.Op, strings.Join(opkind.Names(), ", "))
		}

		return
	}

	for _, f := range []string{
		"collection", "document", "batch_size", "ordered", "filter", "projection", "sort", "limit", "skip",
		"pipeline", "update", "replacement", "upsert", "command", "indexes", "write_concern", "read_preference", "decode",
	} {
		if v.set(yamlpos.Field(p, f)) && !slices.Contains(allowed, f) {
			v.at(yamlpos.Field(p, f), "is not used by %s", o.Op)
		}
	}

	for _, f := range kind.Required {
		if !v.set(yamlpos.Field(p, f)) {
			v.at(yamlpos.Field(p, f), "is required for %s", o.Op)
		}
	}

	if o.Collection != "" {
		v.collectionRef(yamlpos.Field(p, "collection"), o.Collection, collections)
	}

	v.operationValues(p, o, collections)
}

func (v *validator) operationValues(p string, o *Operation, collections map[string]*Collection) {
	if o.Limit.N < 0 {
		v.at(yamlpos.Field(p, "limit"), "must be >= 0")
	}

	if o.Skip.N < 0 {
		v.at(yamlpos.Field(p, "skip"), "must be >= 0")
	}

	kind, _ := opkind.Lookup(o.Op)

	switch {
	case o.BatchSize.Gen != nil && kind.Batches:
		v.at(yamlpos.Field(p, "batch_size"), "must be a constant for %s: it bounds the memory of the batch each worker builds", o.Op)
	case o.BatchSize.Gen == nil && v.set(yamlpos.Field(p, "batch_size")) && (o.BatchSize.N <= 0 || o.BatchSize.N > maxBatchSize):
		v.at(yamlpos.Field(p, "batch_size"), "must be between 1 and %d", maxBatchSize)
	}

	if o.Pipeline != nil && o.Pipeline.Kind != yaml.SequenceNode {
		v.at(yamlpos.Field(p, "pipeline"), "must be a list of stages")
	}

	if o.Update != nil && o.Update.Kind != yaml.MappingNode && o.Update.Kind != yaml.SequenceNode {
		v.at(yamlpos.Field(p, "update"), "must be an update document or an update pipeline (a list)")
	}

	for _, f := range []struct {
		name string
		n    *Template
	}{
		{"filter", o.Filter},
		{"projection", o.Projection},
		{"sort", o.Sort},
		{"replacement", o.Replacement},
		{"command", o.Command},
	} {
		if f.n != nil && f.n.Kind != yaml.MappingNode {
			v.at(yamlpos.Field(p, f.name), "must be a mapping")
		}
	}

	if o.Decode != "" && !slices.Contains(DecodeModes, o.Decode) {
		v.at(yamlpos.Field(p, "decode"), "unknown decode mode %q (one of %s)", o.Decode, strings.Join(DecodeModes, ", "))
	}

	if o.ReadPreference != "" && !slices.Contains(readPreferences, o.ReadPreference) {
		v.at(yamlpos.Field(p, "read_preference"), "unknown read preference %q (one of %s)",
			o.ReadPreference, strings.Join(readPreferences, ", "))
	}

	if wc := o.WriteConcern; wc != nil {
		if wc.W != nil && wc.W.Tag == "" && wc.W.N == 0 && wc.J != nil && *wc.J {
			v.at(yamlpos.Field(p, "write_concern.j"), "j: true needs an acknowledged write (w >= 1)")
		}
	}

	if kind.Takes("indexes") && o.Collection != "" {
		if c := collections[o.Collection]; c != nil {
			v.indexRefs(p, o, c)
		}
	}
}

func (v *validator) indexRefs(p string, o *Operation, c *Collection) {
	declared := map[string]bool{}

	for _, idx := range c.Indexes {
		name := idx.Name
		if name == "" {
			keys, err := IndexKeys(idx.Keys.Node(), "")
			if err != nil {
				continue
			}

			name = DefaultIndexName(keys)
		}

		declared[name] = true
	}

	if len(declared) == 0 {
		v.at(yamlpos.Field(p, "collection"), "collection %q declares no indexes to create", o.Collection)
	}

	for i, name := range o.Indexes {
		if !declared[name] {
			v.at(yamlpos.Index(yamlpos.Field(p, "indexes"), i), "index %q is not declared for collection %q", name, o.Collection)
		}
	}
}

// IndexKey is one field of an index key pattern. Value is 1, -1 or an index
// type name.
type IndexKey struct {
	Field string
	Value any
}

// IndexKeys reads an index key pattern, keeping its order.
func IndexKeys(n *yaml.Node, path string) ([]IndexKey, *yamlpos.Error) {
	n = yamlpos.Resolve(n)
	if n == nil || n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		return nil, yamlpos.At(n, path, "must be a non-empty mapping of field to 1, -1 or an index type (%s)",
			strings.Join(indexTypes, ", "))
	}

	keys := make([]IndexKey, 0, len(n.Content)/2)

	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], yamlpos.Resolve(n.Content[i+1])
		fp := yamlpos.Field(path, k.Value)

		if k.Value == "" || strings.HasPrefix(k.Value, "$") {
			return nil, yamlpos.At(k, fp, "invalid field name %q", k.Value)
		}

		switch {
		case val.Tag == "!!int" && (val.Value == "1" || val.Value == "-1"):
			d := 1
			if val.Value == "-1" {
				d = -1
			}

			keys = append(keys, IndexKey{Field: k.Value, Value: d})
		case val.Tag == "!!str" && slices.Contains(indexTypes, val.Value):
			keys = append(keys, IndexKey{Field: k.Value, Value: val.Value})
		default:
			return nil, yamlpos.At(val, fp, "must be 1, -1 or an index type (%s)", strings.Join(indexTypes, ", "))
		}
	}

	return keys, nil
}

// DefaultIndexName derives an index name from its keys the way MongoDB does
// ("a_1_b_-1"), so that operations can refer to unnamed indexes.
func DefaultIndexName(keys []IndexKey) string {
	parts := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		parts = append(parts, k.Field, fmt.Sprint(k.Value))
	}

	return strings.Join(parts, "_")
}

// OwnerCollection is the marker collection by which mongobench recognises
// databases it created; workloads may not declare it.
const OwnerCollection = "mongobench.owner"
