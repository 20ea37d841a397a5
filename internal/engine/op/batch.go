package op

import (
	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// MaxBatchValues caps what one insertMany generates: its batch_size times
// the most values (documents, arrays, scalars, a value per 16 bytes of
// string) its document template can produce. A worker builds the whole batch
// in memory before the driver encodes it, so a large batch of large
// documents, times the workers, is what could exhaust the machine; the cap
// equals the most values a single document may have (datagen's limit, which
// matches BSON's 16 MiB), at roughly 50 bytes of Go memory each at most.
const MaxBatchValues = 1 << 22

// checkBatch reports a batch whose documents may add up to more than
// MaxBatchValues values. parent is the load step's or operation's path;
// doc is its compiled document template (nil if it did not compile).
func checkBatch(spec *workload.Spec, parent string, batch int, doc *datagen.Template) error {
	if doc == nil || batch <= 0 {
		return nil
	}

	path := yamlpos.Field(parent, "batch_size")

	n := spec.Node(path)
	if n == nil {
		// A default batch size: point at the step.
		n = spec.Node(parent)
	}

	total := float64(batch) * doc.MaxValues()
	if total <= MaxBatchValues {
		return nil
	}

	return yamlpos.At(n, path, "%d documents of up to %.3g values each may generate %.3g values per "+
		"insertMany, above the cap of %d: each worker builds its whole batch in memory; lower batch_size or the "+
		"document's array lengths and string sizes", batch, doc.MaxValues(), total, MaxBatchValues)
}
