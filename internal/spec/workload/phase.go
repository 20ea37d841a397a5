package workload

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// Defaults of phase fields.
const (
	DefaultMaxInFlight           = 64
	DefaultMaxBacklog            = 100_000
	DefaultBackgroundMaxInFlight = 4
)

// maxThinkTime bounds a phase's think_time. A worker waits it between
// iterations, so a stop may wait that long for the worker to notice it
// unless the wait is cut short; the bound keeps a unit typo (think_time:
// 10h for 10ms) an error rather than an idle run.
const maxThinkTime = time.Minute

// RunPhaseName is the name of the phase the run section describes.
const RunPhaseName = "run"

// phaseOnlyFields may be set in the run section only when there is no
// phases list, since with one they belong to each phase.
var phaseOnlyFields = []string{
	"name", "measure", "operations", "sequence", "duration", "max_operations", "warmup", "think_time", "rate",
	"max_in_flight", "max_backlog", "stages", "blocks", "background",
}

// PhaseList returns the phases to run, with their field paths for messages:
// the phases list, or the run section as one phase named "run".
func (s *Spec) PhaseList() ([]*Phase, []string) {
	if len(s.Phases) == 0 {
		p := &s.Run.Phase
		if p.Name == "" {
			p.Name = RunPhaseName
		}

		return []*Phase{p}, []string{"run"}
	}

	phases := make([]*Phase, len(s.Phases))
	paths := make([]string, len(s.Phases))

	for i := range s.Phases {
		phases[i] = &s.Phases[i]
		paths[i] = yamlpos.Index("phases", i)
	}

	return phases, paths
}

// Model names the phase's load model (see LoadModel).
func (p *Phase) Model() string { return p.LoadModel().Name }

// OpenLoop reports whether operations start on a schedule rather than when
// a worker is free.
func (p *Phase) OpenLoop() bool { return p.LoadModel().OpenLoop }

// Measured reports whether the phase's figures are reported (measure is not
// false).
func (p *Phase) Measured() bool { return p.Measure == nil || *p.Measure }

// Judged reports whether the phase's figures are judged in verdicts
// (verdict is not false).
func (p *Phase) Judged() bool { return p.Verdict == nil || *p.Verdict }

// MixOperations returns the names of the phase's weighted mix: its
// operations list, or every operation that is not one of its background
// jobs.
func (s *Spec) MixOperations(p *Phase) []string {
	if len(p.Operations) > 0 {
		return p.Operations
	}

	var names []string

	for _, o := range s.Operations {
		background := slices.ContainsFunc(p.Background, func(b Background) bool { return b.Operation == o.Name })
		if !background {
			names = append(names, o.Name)
		}
	}

	return names
}

// applyPhaseDefaults fills a phase's defaults from the run section.
func (s *Spec) applyPhaseDefaults() {
	phases, paths := s.PhaseList()

	for i, p := range phases {
		path := paths[i]

		if p.Concurrency == 0 && s.node(yamlpos.Field(path, "concurrency")) == nil {
			p.Concurrency = s.Run.Concurrency
		}

		if p.Replay != nil {
			p.Replay.applyDefaults(p)
		}

		timed := p.Duration > 0 || p.MaxOperations > 0 || len(p.Stages) > 0 || p.Blocks != nil
		if !timed && path == "run" && s.node("run.duration") == nil {
			p.Duration = Duration(DefaultDuration)
		}

		if p.OpenLoop() {
			if p.MaxInFlight == 0 && s.node(yamlpos.Field(path, "max_in_flight")) == nil {
				p.MaxInFlight = DefaultMaxInFlight
			}

			if p.MaxBacklog == 0 && s.node(yamlpos.Field(path, "max_backlog")) == nil {
				p.MaxBacklog = DefaultMaxBacklog
			}
		}

		if p.Blocks != nil {
			for j := range p.Blocks.Steps {
				if st := &p.Blocks.Steps[j]; st.Concurrency == 0 {
					st.Concurrency = p.Concurrency
				}
			}
		}

		for j := range p.Background {
			b := &p.Background[j]
			if b.MaxInFlight == 0 {
				b.MaxInFlight = DefaultBackgroundMaxInFlight
			}

			if b.Pacing != nil {
				b.Pacing.applyDefaults()
			}
		}
	}
}

func (pc *Pacing) applyDefaults() {
	def := func(f *float64, v float64) {
		if *f == 0 {
			*f = v
		}
	}

	def((*float64)(&pc.Start), 10)
	def((*float64)(&pc.Min), 1)
	def((*float64)(&pc.Max), 100_000)
	def(&pc.SpeedUp, 1.1)
	def(&pc.SlowDown, 0.66)
	def(&pc.Percentile, 99)

	if pc.Low == 0 {
		pc.Low = Duration(5e6)
	}

	if pc.High == 0 {
		pc.High = Duration(10e6)
	}
}

// settings validates the run section's shared settings.
func (v *validator) settings() {
	r := v.s.Run

	if r.Concurrency <= 0 || r.Concurrency > maxConcurrency {
		v.at("run.concurrency", "must be between 1 and %d", maxConcurrency)
	}

	if r.Interval.D() < minInterval {
		v.at("run.interval", "must be at least %s", minInterval)
	}

	if r.Timeout <= 0 {
		v.at("run.timeout", "must be > 0")
	}

	if r.AbortAfter <= 0 {
		v.at("run.abort_after", "must be > 0")
	}

	if r.ServerSelectionTimeout <= 0 {
		v.at("run.server_selection_timeout", "must be > 0")
	}

	if r.MaxErrorRate < 0 || r.MaxErrorRate > 1 {
		v.at("run.max_error_rate", "must be between 0 and 1 (a fraction, e.g. 0.01 for 1%%)")
	}

	if len(v.s.Phases) > 0 {
		for _, f := range phaseOnlyFields {
			if v.set("run." + f) {
				v.at("run."+f, "with a phases list, set %s on each phase (run holds shared settings only)", f)
			}
		}
	}
}

// phases validates every phase against the declared operations.
func (v *validator) phases(ops map[string]bool, collections map[string]*Collection) {
	phases, paths := v.s.PhaseList()
	names := map[string]bool{}

	for i, p := range phases {
		path := paths[i]

		if len(v.s.Phases) > 0 {
			switch {
			case p.Name == "":
				v.at(yamlpos.Field(path, "name"), "is required")
			case !nameRe.MatchString(p.Name) || strings.HasPrefix(p.Name, "load"):
				v.at(yamlpos.Field(path, "name"), "%q: use letters, digits, '_', '.' and '-', not starting with \"load\"", p.Name)
			case names[p.Name]:
				v.at(yamlpos.Field(path, "name"), "phase %q is defined twice", p.Name)
			}

			names[p.Name] = true
		}

		v.phase(path, p, ops, collections)
	}
}

func (v *validator) phase(path string, p *Phase, ops map[string]bool, collections map[string]*Collection) {
	f := func(name string) string { return yamlpos.Field(path, name) }

	if p.Concurrency <= 0 || p.Concurrency > maxConcurrency {
		v.at(f("concurrency"), "must be between 1 and %d", maxConcurrency)
	}

	if p.MaxOperations < 0 {
		v.at(f("max_operations"), "must be >= 0")
	}

	v.opRefs(f("operations"), p.Operations, ops)
	v.opRefs(f("sequence"), p.Sequence, ops)

	if len(p.Operations) > 0 && len(p.Sequence) > 0 {
		v.at(f("sequence"), "a phase runs either a weighted mix (operations) or a sequence, not both")
	}

	switch {
	case p.Replay != nil:
		v.replay(path, p)
	case p.Blocks != nil:
		v.blocks(path, p, ops, collections)
	case len(p.Stages) > 0:
		v.stages(path, p)
	case p.Duration == 0 && p.MaxOperations == 0:
		v.at(f("duration"), "the phase needs a duration, max_operations, stages or blocks")
	}

	if p.OpenLoop() {
		if p.MaxInFlight <= 0 || p.MaxInFlight > MaxInFlight {
			v.at(f("max_in_flight"), "must be between 1 and %d: each in-flight slot is a worker with its own goroutine and latency recorders", MaxInFlight)
		}

		if p.MaxBacklog <= 0 {
			v.at(f("max_backlog"), "must be > 0")
		}
	} else {
		for _, field := range []string{"max_in_flight", "max_backlog"} {
			if v.set(f(field)) {
				v.at(f(field), "applies to open-loop phases only (set rate or rate stages)")
			}
		}
	}

	if p.ThinkTime != 0 {
		switch {
		case p.Model() != ModelClosed:
			v.at(f("think_time"), "applies to closed-loop phases only (concurrency workers without rate, stages, blocks or replay); this phase's load model is %s", p.Model())
		case p.ThinkTime < 0:
			v.at(f("think_time"), "must not be negative")
		case p.ThinkTime.D() > maxThinkTime:
			v.at(f("think_time"), "must be at most %s: a longer wait is not think time but a pause", maxThinkTime)
		}
	}

	if len(p.Sequence) == 0 && p.Blocks == nil {
		v.mixWeights(f("operations"), v.s.MixOperations(p))
	}

	for i := range p.Background {
		v.background(yamlpos.Index(f("background"), i), p, &p.Background[i], ops)
	}
}

func (v *validator) opRefs(path string, names []string, ops map[string]bool) {
	for i, name := range names {
		if !ops[name] {
			v.at(yamlpos.Index(path, i), "operation %q is not defined in operations", name)
		}
	}
}

// mixWeights checks that a mix has something to pick from.
func (v *validator) mixWeights(path string, names []string) {
	if len(names) == 0 {
		v.at(path, "the phase has no operations to run (all are background jobs)")
		return
	}

	total := 0.0

	for _, o := range v.s.Operations {
		if slices.Contains(names, o.Name) {
			total += o.WeightOf()
		}
	}

	if total <= 0 {
		v.at(path, "the weights of the mix add up to 0")
	}
}

func (v *validator) stages(path string, p *Phase) {
	f := func(name string) string { return yamlpos.Field(path, name) }

	if v.set(f("duration")) {
		v.at(f("duration"), "a phase with stages lasts as long as its stages")
	}

	if v.set(f("warmup")) {
		v.at(f("warmup"), "a phase with stages has no warm-up: make the first stage a ramp instead")
	}

	byRate := !p.LoadModel().RampsConcurrency

	for i, st := range p.Stages {
		sp := yamlpos.Index(f("stages"), i)

		if st.Duration <= 0 {
			v.at(yamlpos.Field(sp, "duration"), "must be > 0")
		}

		switch {
		case st.Rate > 0 && st.Concurrency > 0:
			v.at(sp, "a stage sets rate or concurrency, not both")
		case byRate && st.Concurrency > 0:
			v.at(yamlpos.Field(sp, "concurrency"), "all stages of a phase ramp the same thing; the first ramps the rate")
		case !byRate && st.Rate > 0:
			v.at(yamlpos.Field(sp, "rate"), "all stages of a phase ramp the same thing; the first ramps concurrency")
		case !byRate && st.Concurrency > maxConcurrency:
			v.at(yamlpos.Field(sp, "concurrency"), "must be at most %d", maxConcurrency)
		}

		if st.Shape != "" && st.Shape != "linear" && st.Shape != "step" {
			v.at(yamlpos.Field(sp, "shape"), "unknown shape %q (linear or step)", st.Shape)
		}
	}
}

func (v *validator) blocks(path string, p *Phase, ops map[string]bool, collections map[string]*Collection) {
	f := func(name string) string { return yamlpos.Field(path, name) }

	for _, field := range []string{"duration", "max_operations", "rate", "stages", "operations", "sequence", "warmup"} {
		if v.set(f(field)) {
			v.at(f(field), "a phase with blocks sets its operations and counts in blocks.steps")
		}
	}

	b := p.Blocks
	bp := f("blocks")

	if len(b.Steps) == 0 {
		v.at(yamlpos.Field(bp, "steps"), "at least one step is required")
	}

	for i, st := range b.Steps {
		sp := yamlpos.Index(yamlpos.Field(bp, "steps"), i)

		v.opRefs(yamlpos.Field(sp, "operations"), st.Operations, ops)
		v.opRefs(yamlpos.Field(sp, "sequence"), st.Sequence, ops)

		if (len(st.Operations) == 0) == (len(st.Sequence) == 0) {
			v.at(sp, "a step needs operations (a weighted mix) or a sequence, not both")
		} else if len(st.Operations) > 0 {
			v.mixWeights(yamlpos.Field(sp, "operations"), st.Operations)
		}

		if st.Count <= 0 {
			v.at(yamlpos.Field(sp, "count"), "must be > 0")
		}

		if st.Concurrency <= 0 || st.Concurrency > maxConcurrency {
			v.at(yamlpos.Field(sp, "concurrency"), "must be between 1 and %d", maxConcurrency)
		}
	}

	up := yamlpos.Field(bp, "until")
	u := b.Until

	v.collectionRef(yamlpos.Field(up, "collection"), u.Collection, collections)

	if u.Documents <= 0 && u.Duration <= 0 && u.Blocks <= 0 {
		v.at(up, "set documents, duration or blocks: when to stop repeating")
	}

	if u.Documents < 0 || u.Blocks < 0 {
		v.at(up, "documents and blocks must be >= 0")
	}
}

func (v *validator) background(path string, p *Phase, b *Background, ops map[string]bool) {
	f := func(name string) string { return yamlpos.Field(path, name) }

	switch {
	case b.Operation == "":
		v.at(f("operation"), "is required")
	case !ops[b.Operation]:
		v.at(f("operation"), "operation %q is not defined in operations", b.Operation)
	case slices.Contains(p.Operations, b.Operation) || slices.Contains(p.Sequence, b.Operation):
		v.at(f("operation"), "operation %q is the phase's own; a background job runs beside them", b.Operation)
	}

	v.compositeRefs(f("operation"), b.Operation)

	if (b.Rate > 0) == (b.Pacing != nil) {
		v.at(path, "a background job needs either a fixed rate or pacing")
	}

	if b.MaxInFlight <= 0 || b.MaxInFlight > 10_000 {
		v.at(f("max_in_flight"), "must be between 1 and 10000")
	}

	if pc := b.Pacing; pc != nil {
		pp := f("pacing")
		g := func(name string) string { return yamlpos.Field(pp, name) }

		switch {
		case pc.Min <= 0:
			v.at(g("min"), "must be > 0")
		case pc.Max < pc.Min:
			v.at(g("max"), "must be >= min (%s)", pc.Min)
		case pc.Start < pc.Min || pc.Start > pc.Max:
			v.at(g("start"), "must be between min (%s) and max (%s)", pc.Min, pc.Max)
		}

		if pc.Low >= pc.High {
			v.at(g("low"), "must be below high (%s)", pc.High)
		}

		if !(pc.SpeedUp > 1) || math.IsInf(pc.SpeedUp, 0) {
			v.at(g("speed_up"), "must be > 1")
		}

		if !(pc.SlowDown > 0 && pc.SlowDown < 1) {
			v.at(g("slow_down"), "must be between 0 and 1")
		}

		if !(pc.Percentile > 0 && pc.Percentile <= 100) {
			v.at(g("percentile"), "must be in (0, 100]")
		}
	}
}
