package workload

import "github.com/mongobench/mongobench/internal/base/yamlpos"

// DefaultDurabilityConcurrency is how many writers a durability phase runs
// when its concurrency is not given.
const DefaultDurabilityConcurrency = 4

// maxDurabilityConcurrency bounds a durability phase's writers.
const maxDurabilityConcurrency = 256

// Durability configures the durability phase: after the trials, on each
// target mongobench can crash, writers insert documents with unique _ids
// and record each one the server acknowledges; once Documents are
// acknowledged the server is killed (SIGKILL) while the writes go on, then
// restarted on the same data, and the acknowledged documents that are
// missing are counted, as Jepsen's acknowledged-writes check does. See
// docs/workloads.md#durability.
type Durability struct {
	// Documents is how many acknowledged documents trigger the crash (a
	// few more may be acknowledged before it lands; all are counted).
	Documents int `yaml:"documents" json:"documents"`

	// BatchSize is the documents per insert (insertMany when above 1).
	BatchSize int `yaml:"batch_size" json:"batch_size"`

	// Concurrency is the number of writers; 0 means
	// DefaultDurabilityConcurrency.
	Concurrency int `yaml:"concurrency" json:"concurrency,omitempty"`

	// Collection is the declared collection written to.
	Collection string `yaml:"collection" json:"collection"`

	// Operation, when set, names the operation whose write concern the
	// writes use, so that variants which change it are checked under
	// their own write concern; empty uses the deployment's default.
	Operation string `yaml:"operation" json:"operation,omitempty"`
}

// Writers returns the number of writers the phase runs.
func (d *Durability) Writers() int {
	if d.Concurrency > 0 {
		return d.Concurrency
	}

	return DefaultDurabilityConcurrency
}

// DurabilityWriteConcern returns the write concern of the operation the
// durability phase names, nil (the default) when it names none.
func (s *Spec) DurabilityWriteConcern() *WriteConcern {
	if s.Durability == nil || s.Durability.Operation == "" {
		return nil
	}

	for i := range s.Operations {
		if s.Operations[i].Name == s.Durability.Operation {
			return s.Operations[i].WriteConcern
		}
	}

	return nil
}

// durability validates the durability block.
func (v *validator) durability(ops map[string]bool, collections map[string]*Collection) {
	d := v.s.Durability
	if d == nil {
		return
	}

	const p = "durability"

	if d.Documents <= 0 {
		v.at(yamlpos.Field(p, "documents"), "must be > 0: the acknowledged documents after which the server is crashed")
	}

	if d.BatchSize <= 0 || d.BatchSize > maxBatchSize {
		v.at(yamlpos.Field(p, "batch_size"), "must be between 1 and %d", maxBatchSize)
	}

	if d.Concurrency < 0 || d.Concurrency > maxDurabilityConcurrency {
		v.at(yamlpos.Field(p, "concurrency"), "must be between 1 and %d (0 or absent: %d)", maxDurabilityConcurrency, DefaultDurabilityConcurrency)
	}

	v.collectionRef(yamlpos.Field(p, "collection"), d.Collection, collections)

	if d.Operation != "" && !ops[d.Operation] {
		v.at(yamlpos.Field(p, "operation"), "operation %q is not declared in operations", d.Operation)
	}
}
