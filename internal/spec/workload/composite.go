package workload

import (
	"slices"
	"strings"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/stats/threshold"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// A composite operation is a named group of steps that is one entry of a
// weighted mix (or of a sequence): YCSB's read-modify-write reads a record
// and updates the same record. Its steps run in order as one iteration, so
// that a `^var` drawn by the first step is the value the others see, and the
// composite is measured as a unit of its own (from its intended start to
// its last step's end) beside each step, which is recorded as
// "<composite>/<step>".
//
// A sequence's iteration is the same kind of unit, named "iteration".

// IterationUnit is the name under which a sequence's whole iteration is
// measured; no operation may take it.
const IterationUnit = "iteration"

// StepSeparator joins a composite's name and its step's name in the name
// under which the step is measured. Operation names cannot contain it, so a
// step's figure never collides with an operation's.
const StepSeparator = "/"

// StepName is the name under which step of composite is measured.
func StepName(composite, step string) string { return composite + StepSeparator + step }

// Composite reports whether the operation is a group of steps.
func (o *Operation) Composite() bool { return len(o.Steps) > 0 }

// compositeFields are the fields a composite operation may set itself;
// everything else belongs to its steps.
var compositeFields = []string{"name", "weight", "steps"}

// operationFields are every field an Operation can have in a file, in
// documentation order.
var operationFields = []string{
	"op", "timeout", "collection", "document", "batch_size", "ordered", "filter", "projection", "sort", "limit",
	"skip", "pipeline", "update", "replacement", "upsert", "command", "indexes", "write_concern",
	"read_preference", "decode",
}

// composite validates a composite operation at p: it sets only name, weight
// and steps, and each step is a plain operation with a name unique within
// the composite and no weight of its own.
func (v *validator) composite(p string, o *Operation, collections map[string]*Collection) {
	for _, f := range operationFields {
		if v.set(yamlpos.Field(p, f)) {
			v.at(yamlpos.Field(p, f), "a composite operation sets only %s; set %s on its steps",
				strings.Join(compositeFields, ", "), f)
		}
	}

	sp := yamlpos.Field(p, "steps")
	if len(o.Steps) == 0 {
		v.at(sp, "a composite operation needs at least one step")
		return
	}

	names := map[string]bool{}

	for j := range o.Steps {
		st := &o.Steps[j]
		stp := yamlpos.Index(sp, j)

		if v.set(yamlpos.Field(stp, "weight")) {
			v.at(yamlpos.Field(stp, "weight"), "a step runs every time its composite does; set weight on the composite")
		}

		if v.set(yamlpos.Field(stp, "steps")) {
			v.at(yamlpos.Field(stp, "steps"), "steps cannot be nested; list the operations in one composite")
			continue
		}

		v.operation(stp, st, collections, names)
	}
}

// compositeRefs refuses composite operations where a single operation is
// needed: a background job runs one operation at a time at its rate.
func (v *validator) compositeRefs(path string, name string) {
	for i := range v.s.Operations {
		if o := &v.s.Operations[i]; o.Name == name && o.Composite() {
			v.at(path, "operation %q is composite; a background job runs a single operation", name)
		}
	}
}

// PerDocFigure is the run.compare_by of the median latency per returned
// document (an operation's p50 over the documents one returns).
const PerDocFigure = "per_doc"

// DecodeFigure is the run.compare_by of the client's decode time per
// returned document: the p50 of the operations' decode-time entries
// (result.UnitDecode) over their documents, the client's cost where it is
// spent rather than inside an end-to-end latency.
const DecodeFigure = "decode"

// compareOn checks run.compare_by and run.compare_on: "iteration" needs a phase that runs a
// sequence, anything else must name an operation or a composite's step.
func (v *validator) compareOn() {
	if e := v.s.Run.MinEffect; e != "" {
		if _, err := verdict.ParseMinEffect(e); err != nil {
			v.at("run.min_effect", "%v", err)
		}
	}

	if ref := v.s.Run.Reference; ref != "" && !v.s.namesContender(ref) {
		v.at("run.reference", "%q is neither a variant nor a target of the workload", ref)
	}

	if by := v.s.Run.CompareBy; by != "" && by != PerDocFigure && by != DecodeFigure {
		if _, err := threshold.ParseMetric(by); err != nil {
			v.at("run.compare_by", "%v (or %q for the latency per returned document, %q for the client's decode time per document)", err, PerDocFigure, DecodeFigure)
		}
	}

	if v.s.Run.CompareOperations && !v.s.hasAlternatives() {
		v.at("run.compare_operations", "no measured phase runs two operations or more to rank against each other")
	}

	name := v.s.Run.CompareOn
	if name == "" {
		if v.set("run.compare_on") {
			v.at("run.compare_on", `must not be empty: name an operation or "iteration"`)
		}

		return
	}

	if name == IterationUnit {
		if !v.s.hasSequence() {
			v.at("run.compare_on", `"iteration" needs a phase that runs a sequence; name an operation instead`)
		}

		return
	}

	figures := v.s.FigureNames()
	if !slices.Contains(figures, name) {
		v.at("run.compare_on", "%q is neither an operation nor %q (one of %s)",
			name, IterationUnit, strings.Join(figures, ", "))
	}
}

// hasSequence reports whether some phase runs a sequence, and so measures
// whole iterations (a growth block's sequence is not measured as a unit).
func (s *Spec) hasSequence() bool {
	phases, _ := s.PhaseList()

	return slices.ContainsFunc(phases, func(p *Phase) bool { return len(p.Sequence) > 0 })
}

// hasAlternatives reports whether a measured phase runs two operations or
// more (a sequence, a listed mix, or the workload's operations when the
// phase lists none), which run.compare_operations ranks.
func (s *Spec) hasAlternatives() bool {
	phases, _ := s.PhaseList()

	return slices.ContainsFunc(phases, func(p *Phase) bool {
		if p.Measure != nil && !*p.Measure {
			return false
		}

		n := max(len(p.Sequence), len(p.Operations))
		if n == 0 {
			n = len(s.Operations)
		}

		return n >= 2
	})
}

// FigureNames lists the names under which the workload's operations are
// measured: each operation, and each composite's steps as
// "composite/step", in workload order.
func (s *Spec) FigureNames() []string {
	var names []string

	for i := range s.Operations {
		o := &s.Operations[i]
		names = append(names, o.Name)

		for _, st := range o.Steps {
			names = append(names, StepName(o.Name, st.Name))
		}
	}

	return names
}

// applyStepDefaults gives each composite's steps the run's timeout unless
// they set their own.
func (s *Spec) applyStepDefaults() {
	for i := range s.Operations {
		p := yamlpos.Field(yamlpos.Index("operations", i), "steps")

		for j := range s.Operations[i].Steps {
			st := &s.Operations[i].Steps[j]
			if st.Timeout == 0 && s.node(yamlpos.Field(yamlpos.Index(p, j), "timeout")) == nil {
				st.Timeout = s.Run.Timeout
			}
		}
	}
}

// namesContender reports whether name can be run.reference: one of the
// variants or of the workload's targets. A workload without variants may
// compare targets given on the command line, which validation cannot see,
// so any name is accepted there.
func (s *Spec) namesContender(name string) bool {
	if len(s.Variants) == 0 {
		return true
	}

	for _, v := range s.Variants {
		if v.Name == name {
			return true
		}
	}

	for _, t := range s.Targets {
		if t.Name == name || (t.Name == "" && t.Kind == name) {
			return true
		}
	}

	return false
}
