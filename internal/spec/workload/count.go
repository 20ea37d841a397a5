package workload

import (
	"encoding/json"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// Count is an operation's limit or skip: a constant integer, or a
// generator that draws one for every call (YCSB's workload E draws its scan
// length uniformly: limit: {^int: {min: 1, max: 100}}).
type Count struct {
	// N is the constant, when Gen is nil.
	N int64

	// Gen is the generator, compiled by the op package, which checks that
	// it yields integers of a known range.
	Gen *Template
}

// Set reports whether the count was written (a constant above 0, or a
// generator).
func (c Count) Set() bool { return c.Gen != nil || c.N > 0 }

func (c *Count) decodeNode(n *yaml.Node, path string) *yamlpos.Error {
	if n.Kind == yaml.MappingNode {
		c.Gen = (*Template)(n)

		return nil
	}

	var i int64
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
		return yamlpos.At(n, path, "must be an integer or a generator such as {^int: {min: 1, max: 100}}, not %s", describe(n))
	}

	c.N = i

	return nil
}

// MarshalJSON writes the constant, or the generator as written.
func (c Count) MarshalJSON() ([]byte, error) {
	if c.Gen != nil {
		return c.Gen.MarshalJSON()
	}

	return json.Marshal(c.N)
}

// IsZero lets omitempty leave an unset count out of the results.
func (c Count) IsZero() bool { return !c.Set() }

// MaxBatchSize is the largest batch_size, constant or generated.
const MaxBatchSize = maxBatchSize
