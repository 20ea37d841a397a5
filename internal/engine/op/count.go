package op

import (
	"math"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// compileCounts compiles a generated limit or skip. The generator must
// yield integers of a range known when compiling, and never negative ones,
// so that a call cannot send a value the server reads differently (a
// negative limit means "one batch" to MongoDB).
func (o *Operation) compileCounts(env *datagen.Env, p string) []error {
	var errs []error

	for _, c := range []struct {
		dst    **datagen.Template
		count  workload.Count
		field  string
		lo, hi int64
	}{
		{&o.limit, o.Spec.Limit, "limit", 0, math.MaxInt64},
		{&o.skip, o.Spec.Skip, "skip", 0, math.MaxInt64},
		{&o.batchSize, o.Spec.BatchSize, "batch_size", 1, workload.MaxBatchSize},
	} {
		if c.count.Gen == nil {
			continue
		}

		path := yamlpos.Field(p, c.field)

		t, e := env.Compile(c.count.Gen.Node(), path)
		if len(e) > 0 {
			errs = append(errs, e...)

			continue
		}

		if lo, hi, ok := t.IntRange(); !ok || lo < c.lo || hi > c.hi {
			errs = append(errs, yamlpos.At(c.count.Gen.Node(), path,
				"must generate integers in [%d, %d] of a known range, such as {^int: {min: 1, max: 100}}", c.lo, c.hi))

			continue
		}

		*c.dst = t
	}

	return errs
}

// countOf returns the value of a limit or skip for this call: the generated
// one, or the constant.
func countOf(s *datagen.Scope, gen *datagen.Template, c workload.Count) int64 {
	if gen != nil {
		if v, ok := gen.Value(s).(int64); ok {
			return v
		}
	}

	return c.N
}

// limitOf is the call's limit (0: none).
func (o *Operation) limitOf(s *datagen.Scope) int64 { return countOf(s, o.limit, o.Spec.Limit) }

// batchSizeOf is the call's cursor batch size (0: the server's default).
func (o *Operation) batchSizeOf(s *datagen.Scope) int64 {
	return countOf(s, o.batchSize, o.Spec.BatchSize)
}

// skipOf is the call's skip (0: none).
func (o *Operation) skipOf(s *datagen.Scope) int64 { return countOf(s, o.skip, o.Spec.Skip) }
