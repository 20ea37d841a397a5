package analysis

import (
	"encoding/json"
	"slices"

	"github.com/mongobench/mongobench/internal/results/result"
)

// VariantGroup is one comparison group of a workload's variants
// (variants[].group): its variants are ranked among themselves only.
type VariantGroup struct {
	Name     string
	Variants []string
}

// groupedVariant is a variant's name and comparison group, as a results
// file's workload records them.
type groupedVariant struct {
	Name  string `json:"name"`
	Group string `json:"group"`
}

// JudgingOfSpec reads what a results file's workload says about judging
// its comparisons: run.min_effect and run.reference (JudgingOf), the
// phases left out of verdicts (verdict: false) and the variants'
// comparison groups. A spec that does not decode says nothing.
func JudgingOfSpec(spec any) Judging {
	var s struct {
		Run struct {
			MinEffect string `json:"min_effect"`
			Reference string `json:"reference"`
			Verdict   *bool  `json:"verdict"`
		} `json:"run"`
		Phases []struct {
			Name    string `json:"name"`
			Verdict *bool  `json:"verdict"`
		} `json:"phases"`
		Variants []groupedVariant `json:"variants"`
	}

	if b, err := json.Marshal(spec); err == nil {
		_ = json.Unmarshal(b, &s)
	}

	j := JudgingOf(s.Run.MinEffect, s.Run.Reference)

	// Without phases the run section is the one phase, named "run".
	if len(s.Phases) == 0 && s.Run.Verdict != nil && !*s.Run.Verdict {
		j.Unjudged = append(j.Unjudged, "run")
	}

	for _, p := range s.Phases {
		if p.Verdict != nil && !*p.Verdict {
			j.Unjudged = append(j.Unjudged, p.Name)
		}
	}

	grouped := slices.ContainsFunc(s.Variants, func(v groupedVariant) bool { return v.Group != "" })

	if !grouped {
		return j
	}

	for _, v := range s.Variants {
		k := slices.IndexFunc(j.Groups, func(g VariantGroup) bool { return g.Name == v.Group })
		if k < 0 {
			j.Groups = append(j.Groups, VariantGroup{Name: v.Group})
			k = len(j.Groups) - 1
		}

		j.Groups[k].Variants = append(j.Groups[k].Variants, v.Name)
	}

	return j
}

// groupsOf splits names (a matrix's variants, in declared order) into the
// comparison groups j declares, each in names' order: like is compared
// with like. Names no group holds form one group of their own; without
// declared groups all names are one group, with an empty name.
func (j Judging) groupsOf(names []string) []VariantGroup {
	if len(j.Groups) == 0 {
		return []VariantGroup{{Variants: names}}
	}

	var out []VariantGroup

	var rest []string

	for _, g := range j.Groups {
		in := VariantGroup{Name: g.Name}

		for _, n := range names {
			if slices.Contains(g.Variants, n) {
				in.Variants = append(in.Variants, n)
			}
		}

		if len(in.Variants) > 0 {
			out = append(out, in)
		}
	}

	for _, n := range names {
		if !slices.ContainsFunc(j.Groups, func(g VariantGroup) bool { return slices.Contains(g.Variants, n) }) {
			rest = append(rest, n)
		}
	}

	if len(rest) > 0 {
		out = append(out, VariantGroup{Variants: rest})
	}

	return out
}

// judged reports whether the figures of phase get verdicts: it is not
// marked verdict: false.
func (j Judging) judged(phase string) bool { return !slices.Contains(j.Unjudged, phase) }

// cutShort reports whether a trial's run was cut short (stopped by the
// user or a signal, or aborted): its figures cover part of what the
// others do, so it is no sample of a comparison and never the answer.
func cutShort(tr result.Trial) bool {
	if tr.Result == nil {
		return true
	}

	switch tr.Result.Status {
	case result.StatusInterrupted, result.StatusAborted:
		return true
	default:
		return false
	}
}

// notJudgedText is the verdict text of a cell of a verdict: false phase.
const notJudgedText = "not judged (verdict: false)"
