package op

import (
	"github.com/mongobench/mongobench/internal/datagen"
	"github.com/mongobench/mongobench/internal/workload"
	"github.com/mongobench/mongobench/internal/yamlpos"
)

// compileCounts compiles a generated limit or skip. The generator must
// yield integers of a range known when compiling, and never negative ones,
// so that a call cannot send a value the server reads differently (a
// negative limit means "one batch" to MongoDB).
func (o *Operation) compileCounts(env *datagen.Env, p string) []error {
	var errs []error

	for _, c := range []struct {
		dst   **datagen.Template
		count workload.Count
		field string
	}{
		{&o.limit, o.Spec.Limit, "limit"},
		{&o.skip, o.Spec.Skip, "skip"},
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

		if lo, _, ok := t.IntRange(); !ok || lo < 0 {
			errs = append(errs, yamlpos.At(c.count.Gen.Node(), path,
				"must generate integers >= 0 of a known range, such as {^int: {min: 1, max: 100}}"))

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

// skipOf is the call's skip (0: none).
func (o *Operation) skipOf(s *datagen.Scope) int64 { return countOf(s, o.skip, o.Spec.Skip) }
