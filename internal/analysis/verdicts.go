package analysis

import (
	"math"
	"slices"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// MatrixAlpha is the significance level of matrix verdicts: their
// confidence intervals are at 95%.
const MatrixAlpha = verdict.DefaultAlpha

// MatrixMetric is a metric matrix verdicts are given for.
type MatrixMetric struct {
	Name string
	Dir  verdict.Direction
	Get  func(result.Operation) float64
}

// MatrixMetrics are the metrics verdicts are given for, in the order they
// are printed.
var MatrixMetrics = []MatrixMetric{
	{"throughput", verdict.HigherIsBetter, func(o result.Operation) float64 { return o.OpsPerSec }},
	{"p50", verdict.LowerIsBetter, func(o result.Operation) float64 { return o.LatencyUS.P50 }},
	{"p99", verdict.LowerIsBetter, func(o result.Operation) float64 { return o.LatencyUS.P99 }},
}

// MatrixVerdicts compares the variants on each target, per operation and
// metric, from the trials' measured phases; ratios pair variants within a
// round. With one variant on several targets it compares the targets too.
//
// Each is compared with the reference j declares, or the first variant
// (target): never with the best of the same data. Variants in comparison
// groups are compared within their group only (like with like). The
// operations of a verdict: false phase keep their medians, with no
// verdict; a trial cut short is left out.
func MatrixVerdicts(m *result.Matrix, j Judging) []result.MatrixVerdict {
	var out []result.MatrixVerdict

	for _, t := range m.Targets {
		for _, g := range j.groupsOf(m.Variants) {
			in := func(tr result.Trial) bool { return slices.Contains(g.Variants, tr.Variant) }
			out = append(out, compareTrials(m, t.Name, t.Name, j.among(g.Variants), in, func(tr result.Trial) string { return tr.Variant })...)
		}
	}

	// With one variant on several targets the question is which target is
	// faster: compare the targets, pairing trials by round.
	if len(m.Variants) == 1 && len(m.Targets) > 1 {
		all := func(result.Trial) bool { return true }
		out = append(out, compareTrials(m, "", CrossTarget, j.among(targetNames(m)), all, func(tr result.Trial) string { return tr.Target })...)
	}

	return out
}

// CrossTarget is the Target of verdicts that compare targets rather than
// variants; the results contract defines it, as it names their cells.
const CrossTarget = result.CrossTarget

// compareTrials gives verdicts per operation and metric over the trials of
// target (all trials when target is empty) that in keeps, comparing the
// groups that group names (variants, or targets); label is the verdicts'
// Target.
func compareTrials(m *result.Matrix, target, label string, j Judging, in func(result.Trial) bool,
	group func(result.Trial) string,
) []result.MatrixVerdict {
	var out []result.MatrixVerdict

	unjudged := unjudgedOps(m, j)

	for _, opName := range trialOperations(m, target) {
		for _, metric := range MatrixMetrics {
			var samples []verdict.Sample

			for _, tr := range m.Trials {
				if (target != "" && tr.Target != target) || !in(tr) || cutShort(tr) {
					continue
				}

				for _, o := range MeasuredOps(tr.Result) {
					if o.Name == opName && o.Count > 0 {
						samples = append(samples, verdict.Sample{Variant: group(tr), Round: tr.Round, Value: metric.Get(o)})
					}
				}
			}

			if len(samples) == 0 {
				continue
			}

			mv := result.MatrixVerdict{Target: label, Operation: opName, Metric: metric.Name}
			for _, v := range verdict.Compare(samples, metric.Dir, j.options(MatrixAlpha, verdict.Paired, "round")) {
				cv := result.CellVerdict{
					Variant: v.Variant, N: v.N, Median: finite(v.Median), Lo: finite(v.Lo), Hi: finite(v.Hi), Best: v.Best,
					Ratio: finite(v.Ratio), RatioLo: finite(v.RatioLo), RatioHi: finite(v.RatioHi), P: finite(v.P),
					Kind: v.Kind, Text: v.Text,
				}

				// A read-back or set-up phase is shown, not judged.
				if unjudged[opName] {
					cv = result.CellVerdict{
						Variant: v.Variant, N: v.N, Median: finite(v.Median), Lo: finite(v.Lo), Hi: finite(v.Hi),
						Kind: verdict.Inconclusive, Text: notJudgedText,
					}
				}

				mv.Variants = append(mv.Variants, cv)
			}

			out = append(out, mv)
		}
	}

	return out
}

// trialOperations lists the operation names of a target's trials, in the
// order they first appear.
func trialOperations(m *result.Matrix, target string) []string {
	var names []string

	seen := map[string]bool{}

	for _, tr := range m.Trials {
		if target != "" && tr.Target != target {
			continue
		}

		for _, o := range MeasuredOps(tr.Result) {
			if !seen[o.Name] {
				seen[o.Name] = true
				names = append(names, o.Name)
			}
		}
	}

	return names
}

// unjudgedOps are the names (as MeasuredOps names them) of the operations
// of the phases j leaves out of verdicts.
func unjudgedOps(m *result.Matrix, j Judging) map[string]bool {
	out := map[string]bool{}
	if len(j.Unjudged) == 0 {
		return out
	}

	for _, tr := range m.Trials {
		all := blockOps(tr.Result, Judging{})
		for _, po := range all {
			if !j.judged(po.phase) {
				out[po.op.Name] = true
			}
		}
	}

	return out
}

// finite replaces the infinities and NaNs that statistics of tiny or zero
// samples can produce with 0, since JSON cannot hold them; the verdict's
// text still says what happened.
func finite(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0
	}

	return x
}

// MeasuredOps returns the operations of every measured phase of a trial
// (not loads, not measure: false phases), so that a comparison covers all
// of them. With several such phases an operation is named "phase/op".
func MeasuredOps(res *result.Result) []result.Operation {
	if res == nil {
		return nil
	}

	var phases []*result.Phase

	for i := range res.Phases {
		p := &res.Phases[i]
		if !p.Excluded && !p.IsLoad() {
			phases = append(phases, p)
		}
	}

	var out []result.Operation

	for _, p := range phases {
		for _, o := range p.Operations {
			if len(phases) > 1 {
				o.Name = p.Name + "/" + o.Name
			}

			out = append(out, o)
		}
	}

	return out
}
