package result

import (
	"errors"
	"fmt"
)

// Kind returns what r holds: KindMatrix for a comparison run, KindRun for a
// single run. It is ResultKind when that is set; a result without one (an
// older file, or one being built) is a matrix when it has a matrix or when
// its target kind is the "matrix" older files wrote there.
func (r *Result) Kind() string {
	switch {
	case r.ResultKind != "":
		return r.ResultKind
	case r.Matrix != nil || r.Target.Kind == legacyMatrixTarget:
		return KindMatrix
	default:
		return KindRun
	}
}

// legacyMatrixTarget is the target kind files written before the result
// kind field gave a matrix result. Such files read as matrix results (see
// upgrade); new files leave a matrix's target kind empty, its targets
// being listed in the matrix.
const legacyMatrixTarget = KindMatrix

// upgrade brings a result read from an older file to the current form: the
// result kind is set, and the legacy target kind "matrix" becomes the
// result kind rather than a target kind. Trials are upgraded too.
func (r *Result) upgrade() {
	if r.ResultKind == "" {
		r.ResultKind = r.Kind()
	}

	if r.ResultKind == KindMatrix && r.Target.Kind == legacyMatrixTarget {
		r.Target.Kind = ""
	}

	if r.Matrix == nil {
		return
	}

	for _, tr := range r.Matrix.Trials {
		if tr.Result != nil {
			tr.Result.upgrade()
		}
	}
}

// CheckContents reports whether r holds measurements that report and
// compare can show: the phases of a single run, or the trials of a matrix.
// Unlike Check it does not verify the numbers; it catches files that parse
// but hold nothing, such as "phases": null.
func (r *Result) CheckContents() error {
	if r.Kind() == KindMatrix {
		switch {
		case r.Matrix == nil:
			return fmt.Errorf("the result's kind is %q but the file has no matrix", KindMatrix)
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

// checkKind checks the result kind against the contents and the target
// kind's shape. The contract does not know the target kinds: that
// registry belongs to the launcher (package targets), and a results file
// written by a newer mongobench may name a kind this one lacks. It checks
// only that a single run names its target's kind as a word; a matrix
// names none (or, in older files, "matrix").
func (c *checker) checkKind(r *Result) {
	switch r.ResultKind {
	case "", KindRun, KindMatrix:
	default:
		c.addf("kind %q is not %q or %q", r.ResultKind, KindRun, KindMatrix)
		return
	}

	switch {
	case r.Matrix == nil && (r.Kind() == KindMatrix || r.Target.Kind == legacyMatrixTarget):
		c.addf("kind %q, but the result has no matrix", KindMatrix)
	case r.Kind() == KindRun && r.Matrix != nil:
		c.addf("kind %q, but the result has a matrix", KindRun)
	case r.Kind() == KindMatrix:
		if r.Target.Kind != "" && r.Target.Kind != legacyMatrixTarget {
			c.addf("target kind %q, but a matrix result names its targets in the matrix", r.Target.Kind)
		}
	default:
		if err := checkName(r.Target.Kind); err != nil {
			c.addf("target kind: %v", err)
		}
	}
}

// checkName checks that a recorded name (a target kind) has the shape of
// one: a non-empty word of lower-case letters, digits and inner hyphens,
// as "ferretdb-postgres".
func checkName(name string) error {
	if name == "" {
		return errors.New("empty")
	}

	for i, ch := range name {
		switch {
		case ch >= 'a' && ch <= 'z', ch >= '0' && ch <= '9':
		case ch == '-' && i > 0 && i < len(name)-1:
		default:
			return fmt.Errorf("%q is not a name (lower-case letters, digits and inner hyphens)", name)
		}
	}

	return nil
}

// checkMatrix checks a matrix's targets and trials; every trial is checked
// as a result of its own, its problems prefixed with where it is.
func (c *checker) checkMatrix(m *Matrix) {
	names := map[string]bool{}

	for i, t := range m.Targets {
		if err := checkName(t.Kind); err != nil {
			c.addf("matrix target %d (%s): kind: %v", i, t.Name, err)
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

		if tr.Result.Matrix != nil || tr.Result.ResultKind == KindMatrix {
			c.addf("%s: a trial cannot hold a matrix", where)
			continue
		}

		for _, err := range tr.Result.Check() {
			c.addf("%s: %v", where, err)
		}
	}
}
