package result

import (
	"errors"
	"fmt"

	"github.com/mongobench/mongobench/internal/targets"
)

// Kind returns what r holds: KindMatrix for a comparison run, KindRun for a
// single run.
func (r *Result) Kind() string {
	if r.Matrix != nil || r.Target.Kind == KindMatrix {
		return KindMatrix
	}

	return KindRun
}

// CheckContents reports whether r holds measurements that report and
// compare can show: the phases of a single run, or the trials of a matrix.
// Unlike Check it does not verify the numbers; it catches files that parse
// but hold nothing, such as "phases": null.
func (r *Result) CheckContents() error {
	if r.Kind() == KindMatrix {
		switch {
		case r.Matrix == nil:
			return fmt.Errorf("target kind is %q but the file has no matrix", KindMatrix)
		case len(r.Matrix.Trials) == 0:
			return errors.New("the matrix has no trials")
		}

		for i, tr := range r.Matrix.Trials {
			if tr.Result == nil {
				return fmt.Errorf("matrix trial %d (%s · %s · round %d) has no result", i, tr.Target, tr.Variant, tr.Round)
			}

			if len(tr.Result.Phases) == 0 {
				return fmt.Errorf("matrix trial %d (%s · %s · round %d) has no phases", i, tr.Target, tr.Variant, tr.Round)
			}
		}

		return nil
	}

	if len(r.Phases) == 0 {
		return errors.New("the file has no phases (\"phases\" is empty or null), so there is nothing to show")
	}

	return nil
}

// checkKind checks the target kind against the result kind: a matrix says
// KindMatrix, a single run names a registered target kind.
func (c *checker) checkKind(r *Result) {
	switch {
	case r.Matrix != nil && r.Target.Kind != KindMatrix:
		c.addf("target kind %q, but a result with a matrix has kind %q", r.Target.Kind, KindMatrix)
	case r.Matrix == nil && r.Target.Kind == KindMatrix:
		c.addf("target kind %q, but the result has no matrix", KindMatrix)
	case r.Matrix == nil:
		if _, ok := targets.LookupKind(r.Target.Kind); !ok {
			c.addf("target kind %q is not %s, nor %q", r.Target.Kind, targets.KindList(), KindMatrix)
		}
	}
}

// checkMatrix checks a matrix's targets and trials; every trial is checked
// as a result of its own, its problems prefixed with where it is.
func (c *checker) checkMatrix(m *Matrix) {
	names := map[string]bool{}

	for i, t := range m.Targets {
		if _, ok := targets.LookupKind(t.Kind); !ok {
			c.addf("matrix target %d (%s): kind %q is not %s", i, t.Name, t.Kind, targets.KindList())
		}

		names[t.Name] = true
	}

	variants := map[string]bool{}
	for _, v := range m.Variants {
		variants[v] = true
	}

	for i, tr := range m.Trials {
		where := fmt.Sprintf("matrix trial %d (%s · %s · round %d)", i, tr.Target, tr.Variant, tr.Round)

		switch {
		case !names[tr.Target]:
			c.addf("%s: target %q is not among the matrix's targets", where, tr.Target)
		case !variants[tr.Variant]:
			c.addf("%s: variant %q is not among the matrix's variants", where, tr.Variant)
		case tr.Round < 1 || tr.Round > m.Rounds:
			c.addf("%s: round %d is not between 1 and %d", where, tr.Round, m.Rounds)
		}

		if tr.Result == nil {
			c.addf("%s: no result", where)
			continue
		}

		if tr.Result.Matrix != nil {
			c.addf("%s: a trial cannot hold a matrix", where)
			continue
		}

		for _, err := range tr.Result.Check() {
			c.addf("%s: %v", where, err)
		}
	}
}
