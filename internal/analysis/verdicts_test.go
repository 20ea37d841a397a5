package analysis

import (
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// verdictOf finds one variant's verdict on a target, operation and metric.
func verdictOf(t *testing.T, vs []result.MatrixVerdict, target, metric, variant string) result.CellVerdict {
	t.Helper()

	for _, mv := range vs {
		if mv.Target != target || mv.Metric != metric {
			continue
		}

		for _, cv := range mv.Variants {
			if cv.Variant == variant {
				return cv
			}
		}
	}

	t.Fatalf("no %s %s verdict for %s", target, metric, variant)

	return result.CellVerdict{}
}

// TestMatrixVerdictsReference: the reference is the first declared variant
// even when another's trials come first, or the declared one; never the
// best.
func TestMatrixVerdictsReference(t *testing.T) {
	m := syntheticMatrix() // each round runs slow before base

	vs := MatrixVerdicts(m, Judging{})
	if base := verdictOf(t, vs, "a", "p50", "base"); base.Kind != verdict.Reference || base.Text != "reference" {
		t.Errorf("base: %+v, want the reference (first declared)", base)
	}

	if slow := verdictOf(t, vs, "a", "p50", "slow"); slow.Kind != verdict.Difference || !strings.HasPrefix(slow.Text, "5.0") ||
		!strings.Contains(slow.Text, "× higher") {
		t.Errorf("slow: %+v", slow)
	}

	vs = MatrixVerdicts(m, Judging{Reference: "slow"})
	if slow := verdictOf(t, vs, "a", "p50", "slow"); slow.Kind != verdict.Reference {
		t.Errorf("declared reference slow: %+v", slow)
	}

	if base := verdictOf(t, vs, "a", "p50", "base"); base.Kind != verdict.Difference || !strings.Contains(base.Text, "× lower") {
		t.Errorf("base against slow: %+v", base)
	}

	// A reference the comparison does not have is the first.
	vs = MatrixVerdicts(m, Judging{Reference: "nosuch"})
	if base := verdictOf(t, vs, "a", "p50", "base"); base.Kind != verdict.Reference {
		t.Errorf("unknown reference: %+v", base)
	}
}

// TestMatrixVerdictsMinEffect: targets a and b differ by up to 3% a round;
// under the default 5% that is no meaningful difference, and with the
// minimum effect off it is at most a significant one.
func TestMatrixVerdictsMinEffect(t *testing.T) {
	m := syntheticMatrix()
	m.Variants = m.Variants[:1]

	var trials []result.Trial

	for _, tr := range m.Trials {
		if tr.Variant == "base" {
			trials = append(trials, tr)
		}
	}

	m.Trials = trials

	b := verdictOf(t, MatrixVerdicts(m, Judging{}), CrossTarget, "p50", "b")
	if b.Kind != verdict.NoDifference || !strings.HasPrefix(b.Text, "no meaningful difference (within ±5%") {
		t.Errorf("b under 5%%: %+v", b)
	}

	b = verdictOf(t, MatrixVerdicts(m, Judging{MinEffect: -1}), CrossTarget, "p50", "b")
	if !strings.HasPrefix(b.Text, "no significant difference") {
		t.Errorf("b without a minimum: %+v", b)
	}
}
