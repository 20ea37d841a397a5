package analysis

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/threshold"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// Figure is the one number a study's question is about: an operation's
// metric, e.g. the p50 of "get", or its latency per returned document.
type Figure struct {
	// Operation is the operation's name; empty for the first operation of
	// the results. With several measured phases it is "phase/operation".
	Operation string
	// Metric is the metric compared (a latency, throughput or the error
	// rate). It is ignored when PerDoc is set.
	Metric threshold.Metric
	// PerDoc compares the median latency per returned document (µs/doc:
	// an operation's p50 over the documents one execution returns), the
	// figure of decode-cost questions. A median, not a mean: a few slow
	// executions must not set the figure a whole mode is ranked by.
	PerDoc bool
	// Decode (with PerDoc) compares the client's decode time per document
	// instead: the p50 of each operation's decode-time entry
	// (result.UnitDecode) over its documents. Contenders are named by
	// their operation.
	Decode bool
	// Cost adds, to each line, the difference from the best in the
	// figure's own unit with its confidence interval (variant − best: the
	// decode cost per document of struct is struct − none), for questions
	// that are costs rather than speed-ups.
	Cost bool
	// Judging says how verdicts are reached: the minimum effect and the
	// declared reference.
	Judging Judging
}

// Judging is what a workload (run.min_effect, run.reference) or a command
// line (--min-effect) says about judging a comparison.
type Judging struct {
	// MinEffect is verdict.Options.MinEffect: 0 for the default, negative
	// for none.
	MinEffect float64
	// Reference names the contender the others are compared with; empty,
	// or a name the comparison does not have, means the first.
	Reference string
	// Unjudged names the phases left out of verdicts and comparison blocks
	// (verdict: false): a read-back or a set-up step is measured and shown,
	// never ranked.
	Unjudged []string
	// Groups are the variants' comparison groups (variants[].group), in
	// declared order; empty: all variants are one group.
	Groups []VariantGroup
}

// JudgingOf reads a workload's run.min_effect and run.reference (validated
// with the workload: an invalid minimum effect is the default).
func JudgingOf(minEffect, reference string) Judging {
	j := Judging{Reference: reference}
	if minEffect != "" {
		if e, err := verdict.ParseMinEffect(minEffect); err == nil {
			j.MinEffect = e
		}
	}

	return j
}

// among is j for a comparison of the contenders names, in their declared
// order: its Reference when it names one of them, else the first.
func (j Judging) among(names []string) Judging {
	if !slices.Contains(names, j.Reference) && len(names) > 0 {
		j.Reference = names[0]
	}

	return j
}

// targetNames are the names of a matrix's targets, in declared order.
func targetNames(m *result.Matrix) []string {
	out := make([]string, len(m.Targets))
	for i, t := range m.Targets {
		out[i] = t.Name
	}

	return out
}

// options are the verdict options of a comparison judged by j.
func (j Judging) options(alpha float64, d verdict.Design, unit string) verdict.Options {
	return verdict.Options{Alpha: alpha, Design: d, Unit: unit, MinEffect: j.MinEffect, Reference: j.Reference}
}

// DefaultFigure is the figure of a study that names none: the median
// latency of its first operation.
var DefaultFigure = Figure{Metric: threshold.Metric{Kind: threshold.Percentile, Percent: 50}}

// String names the figure: "get p50", "get latency per document", or
// without an operation (a block of operations) "p50".
func (f Figure) String() string {
	name := f.Metric.String()
	switch {
	case f.Decode:
		name = "decode time per document (p50)"
	case f.PerDoc:
		name = "latency per document (p50)"
	}

	if f.Operation == "" {
		return name
	}

	return f.Operation + " " + name
}

// format shows a value of the figure with its unit.
func (f Figure) format(v float64) string {
	if f.PerDoc {
		return threshold.FormatLatency(v) + "/doc"
	}

	return f.Metric.Format(v)
}

// direction is which way the figure improves.
func (f Figure) direction() verdict.Direction {
	if !f.PerDoc && f.Metric.Kind == threshold.Throughput {
		return verdict.HigherIsBetter
	}

	return verdict.LowerIsBetter
}

// LowerIsBetter reports whether the figure improves as it falls (times,
// error rates), not as it rises (throughput).
func (f Figure) LowerIsBetter() bool { return f.direction() == verdict.LowerIsBetter }

// worse is the word for "worse by a factor": slower for times and
// throughput, higher for an error rate.
func (f Figure) worse() (worse, better string) {
	if !f.PerDoc && f.Metric.Kind == threshold.ErrorRate {
		return "higher", "lower"
	}

	return "slower", "faster"
}

// Block is the comparison block that ends a study: for one figure, the
// variants within each target, and the targets within each variant, each
// against the reference (declared, or the first) with its confidence
// interval.
// Terminal, Markdown and HTML render it from this model.
type Block struct {
	// Figure is what is compared; its Operation is filled in.
	Figure Figure
	// Samples says what one value is ("round" for a matrix, paired by
	// round; "interval" for separate results files, unpaired), and Design
	// how they were compared.
	Samples string
	Design  verdict.Design
	// Growth marks a block of growth blocks (GrowthBlock): each group
	// lists one operation's blocks against the line fitted through them,
	// and has an Answer, the fit's verdict.
	Growth bool
	// Fits are a growth block's fits, per operation on p50, p95 and p99.
	Fits []GrowthFit
	// Groups are the comparisons, variants within each target first.
	Groups []BlockGroup
	// Answer is the block's question answered in one line, printed last
	// (a single run's compared phases: which tweak made a difference,
	// which did not, and which the server did not do, with the explain
	// evidence); empty where the groups are the answer.
	Answer string
}

// BlockGroup is one ranking: the variants of one target, or the targets of
// one variant.
type BlockGroup struct {
	// Title says what is ranked: "variants on fast", "targets, variant
	// base".
	Title string
	// Lines are the reference first, then best first (growth: the first
	// block, then the blocks that grew most).
	Lines []BlockLine
	// Answer is the group's question answered in one line (growth: the
	// largest collection against the first), empty where the ranking is
	// the answer.
	Answer string
	// Evidence is what the server's explain says it did for the group's
	// operations (index used or not, documents examined, filter pushed
	// down), printed under the group's lines; empty without plans.
	Evidence string
}

// BlockLine is one contender's standing.
type BlockLine struct {
	// Name is the variant's or target's name.
	Name string
	// Median is the median of its values, in the figure's unit, and Value
	// that median formatted ("12.3ms").
	Median float64
	Value  string
	// N is how many values it had.
	N int
	// Best marks the first line, the reference of the others.
	Best bool
	// Documents is the collection's size at a growth block's end.
	Documents int64
	// Kind is what the comparison with the best found.
	Kind verdict.Kind
	// Ratio (how many times worse than the best) and its interval; NaN
	// and ±Inf when there is none.
	Ratio, RatioLo, RatioHi float64
	// Cost is the difference from the best (Figure.Cost only).
	Cost *verdict.Cost
	// Verdict is the line's answer in words: "reference", "37.1× slower (95%
	// CI 33.0×–41.2×)", "no significant difference (95% CI 0.97×–1.04×)",
	// "inconclusive: 3 rounds, at least 6 needed".
	Verdict string
	// CostText is the difference in words (Figure.Cost only): "+33.2ms
	// (95% CI +30.1ms to +36.2ms)".
	CostText string
}

// blockAlpha is the significance level of the block's intervals.
const blockAlpha = verdict.DefaultAlpha

// MatrixBlock builds the block of a matrix: per target, its variants
// compared round by round (paired), and per variant, its targets.
func MatrixBlock(m *result.Matrix, fig Figure) Block {
	b := Block{Figure: fig, Samples: "round", Design: verdict.Paired}
	if m == nil {
		return b
	}

	if b.Figure.Operation == "" {
		b.Figure.Operation = firstOperation(m, fig.Judging)
	}

	// A trial cut short is no sample: never the answer.
	sample := func(tr result.Trial, name string) (verdict.Sample, bool) {
		if cutShort(tr) {
			return verdict.Sample{}, false
		}

		v, ok := trialValue(tr.Result, b.Figure)

		return verdict.Sample{Variant: name, Round: tr.Round, Value: v}, ok
	}

	var answered []BlockGroup

	var labels []string

	if len(m.Variants) > 1 {
		for _, t := range m.Targets {
			// Each comparison group is ranked on its own: like with like.
			for _, g := range fig.Judging.groupsOf(m.Variants) {
				var samples []verdict.Sample

				for _, tr := range m.Trials {
					if s, ok := sample(tr, tr.Variant); ok && tr.Target == t.Name && slices.Contains(g.Variants, tr.Variant) {
						samples = append(samples, s)
					}
				}

				title := "variants on " + t.Name
				if g.Name != "" {
					title += ", group " + g.Name
				}

				before := len(b.Groups)
				b.addJudged(title, samples, b.Figure.Judging.among(g.Variants))

				if len(b.Groups) > before && g.Name != "" {
					answered = append(answered, b.Groups[len(b.Groups)-1])
					labels = append(labels, g.Name+" on "+t.Name)
				}
			}
		}
	}

	// Comparison groups ask several questions: one line answers them all.
	b.Answer = b.answerGroups(nil, answered, labels, nil)

	if len(m.Targets) > 1 {
		for _, v := range m.Variants {
			var samples []verdict.Sample

			for _, tr := range m.Trials {
				if s, ok := sample(tr, tr.Target); ok && tr.Variant == v {
					samples = append(samples, s)
				}
			}

			title := "targets"
			if len(m.Variants) > 1 {
				title += ", variant " + v
			}

			b.addJudged(title, samples, b.Figure.Judging.among(targetNames(m)))
		}
	}

	return b
}

// OperationsBlock builds the block of a study whose contenders are the
// operations of one run, such as the decode modes of one read sequence:
// per target, variant and measured phase (each phase a question of its
// own), the operations compared round by round on fig (its Operation is
// ignored). With fig.Cost, each line gives its cost over
// the best operation: the decode cost per document of struct is its latency
// per document minus that of the operation that decodes nothing.
func OperationsBlock(m *result.Matrix, fig Figure) Block {
	fig.Operation = ""
	b := Block{Figure: fig, Samples: "round", Design: verdict.Paired}

	if m == nil {
		return b
	}

	for _, t := range m.Targets {
		for _, v := range m.Variants {
			// Each measured phase is a question of its own: its
			// operations are ranked against each other only.
			var phases []string

			samples := map[string][]verdict.Sample{}

			for _, tr := range m.Trials {
				if tr.Target != t.Name || tr.Variant != v || cutShort(tr) {
					continue
				}

				for _, po := range blockOps(tr.Result, fig.Judging) {
					// A sequence's iteration or a composite is the sum of
					// the operations compared here, not an alternative; a
					// decode figure compares decode entries only, named
					// by their operation.
					if !po.op.Compared(fig.Decode) {
						continue
					}

					if x, ok := operationValue(po.op, po.seconds, fig); ok {
						if _, seen := samples[po.phase]; !seen {
							phases = append(phases, po.phase)
						}

						// The group names the phase: a line names the
						// operation only.
						name := strings.TrimPrefix(po.op.Name, po.phase+"/")
						if fig.Decode {
							name = po.op.Steps[0]
						}

						samples[po.phase] = append(samples[po.phase], verdict.Sample{Variant: name, Round: tr.Round, Value: x})
					}
				}
			}

			for _, phase := range phases {
				title := "operations"
				if len(phases) > 1 {
					title += " of the " + phase + " phase"
				}

				title += " on " + t.Name
				if len(m.Variants) > 1 {
					title += ", variant " + v
				}

				b.add(title, samples[phase])
			}
		}
	}

	return b
}

// FilesBlock builds the block of separate results (compare): each side's
// runs (a results file, a set of repeated runs, or a matrix cell's trials)
// are its values, one per run, compared as independent samples.
func FilesBlock(files []*File, fig Figure) Block {
	b := Block{Figure: fig, Samples: "run", Design: verdict.Unpaired}

	if b.Figure.Operation == "" && len(files) > 0 {
		if runs := files[0].RunPhases(); len(runs) > 0 && len(runs[0].Operations) > 0 {
			b.Figure.Operation = runs[0].Operations[0].Name
		}
	}

	var samples []verdict.Sample

	for _, f := range files {
		for k, p := range f.RunPhases() {
			for _, o := range p.Operations {
				if o.Name != b.Figure.Operation {
					continue
				}

				if v, ok := operationValue(o, p.DurationS, b.Figure); ok {
					samples = append(samples, verdict.Sample{Variant: f.Label, Round: k, Value: v})
				}
			}
		}
	}

	b.add("files", samples)

	return b
}

// add ranks the contenders of samples and appends the group, if there is
// anything to compare: the first contender in samples' order (or the
// declared reference) against the others.
func (b *Block) add(title string, samples []verdict.Sample) {
	b.addJudged(title, samples, b.Figure.Judging)
}

// addJudged is add with the judging of this group.
func (b *Block) addJudged(title string, samples []verdict.Sample, j Judging) {
	opts := j.options(blockAlpha, b.Design, b.Samples)
	verdicts := verdict.Compare(samples, b.Figure.direction(), opts)

	if len(verdicts) < 2 {
		return
	}

	g := BlockGroup{Title: title}
	level := strconv.FormatFloat(100*(1-blockAlpha), 'f', -1, 64) + "% CI"
	worse, better := b.Figure.worse()

	for _, v := range verdicts {
		l := BlockLine{
			Name: v.Variant, Median: v.Median, Value: b.Figure.format(v.Median), N: v.N, Best: v.Kind == verdict.Reference,
			Kind: v.Kind, Ratio: v.Ratio, RatioLo: v.RatioLo, RatioHi: v.RatioHi,
		}

		switch {
		case v.Kind == verdict.Reference:
			l.Verdict = "reference"
		case v.Kind == verdict.Difference:
			word, r, lo, hi := worse, v.Ratio, v.RatioLo, v.RatioHi
			if r < 1 {
				word, r, lo, hi = better, 1/r, 1/hi, 1/lo
			}

			l.Verdict = fmt.Sprintf("%s %s (%s %s)", verdict.FormatRatio(r), word, level, verdict.FormatInterval(lo, hi))
		case v.Kind == verdict.NoDifference && v.Negligible:
			l.Verdict = fmt.Sprintf("no meaningful difference (within ±%s; %s %s)", verdict.FormatMinEffect(opts.MinEffect), level,
				verdict.FormatInterval(v.RatioLo, v.RatioHi))
		case v.Kind == verdict.NoDifference:
			l.Verdict = fmt.Sprintf("no significant difference (%s %s)", level, verdict.FormatInterval(v.RatioLo, v.RatioHi))
		default:
			l.Verdict = v.Text
		}

		if b.Figure.Cost && !v.Best {
			c := verdict.CompareCost(samples, v.Variant, verdicts[0].Variant, opts)
			l.Cost = &c
			l.CostText = b.costText(c, level)
		}

		g.Lines = append(g.Lines, l)
	}

	if b.Figure.Decode {
		g.Answer = decodeAnswer(b.Figure, g.Lines)
	}

	b.Groups = append(b.Groups, g)
}

// costText words a difference with the figure's unit.
func (b *Block) costText(c verdict.Cost, level string) string {
	signed := func(v float64) string {
		s := b.Figure.format(math.Abs(v))
		if v < 0 {
			return "−" + s
		}

		return "+" + s
	}

	switch c.Kind {
	case verdict.Difference, verdict.NoDifference:
		return fmt.Sprintf("%s (%s %s to %s)", signed(c.Estimate), level, signed(c.Lo), signed(c.Hi))
	default:
		return c.Text
	}
}

// WriteText prints the block for a terminal: a heading, then per group the
// contenders best first, names and values aligned.
func (b Block) WriteText(w io.Writer) {
	if len(b.Groups) == 0 {
		return
	}

	fmt.Fprintf(w, "\nComparison: %s\n", b.Heading())

	// A growth block's fits answer first (one line per operation and
	// percentile); other answers close their group below.
	if b.Growth {
		for _, a := range b.Answers() {
			fmt.Fprintf(w, "  %s\n", a)
		}
	}

	for _, g := range b.Groups {
		fmt.Fprintf(w, "  %s:\n", g.Title)

		lines := g.Lines
		if len(lines) > textLines {
			lines = lines[:textLines]
		}

		nameW, valW := 0, 0
		for _, l := range g.Lines {
			nameW, valW = max(nameW, len([]rune(l.Name))), max(valW, len([]rune(l.Value)))
		}

		for _, l := range lines {
			line := fmt.Sprintf("    %s  %s  %s", pad(l.Name, nameW), padLeft(l.Value, valW), l.Verdict)
			if l.CostText != "" {
				line += "; cost " + l.CostText
			}

			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}

		if n := len(g.Lines) - len(lines); n > 0 {
			fmt.Fprintf(w, "    … %d more (all in the Markdown and the HTML report)\n", n)
		}

		if g.Evidence != "" {
			fmt.Fprintf(w, "    %s\n", g.Evidence)
		}

		// A ranking's answer (a decode-time block's) closes its group:
		// the run's output ends with the answer to its question.
		if g.Answer != "" && !b.Growth {
			fmt.Fprintf(w, "  %s\n", g.Answer)
		}
	}

	if b.Answer != "" {
		fmt.Fprintf(w, "%s\n", b.Answer)
	}
}

// Answers are the block's answers, one line each: a growth block's fits
// (every operation on p50, p95 and p99), else each group's answer.
func (b Block) Answers() []string {
	var out []string

	if b.Growth {
		for _, g := range b.Fits {
			out = append(out, g.Title()+" "+g.Verdict())
		}

		return out
	}

	for _, g := range b.Groups {
		if g.Answer != "" {
			out = append(out, g.Answer)
		}
	}

	return out
}

// blockLevel names the block's confidence level: "95% CI".
func blockLevel() string {
	return strconv.FormatFloat(100*(1-blockAlpha), 'f', -1, 64) + "% CI"
}

// textLines is the most lines of one group a terminal shows: a growth
// study of 100 blocks ranks 100 of them.
const textLines = 10

// Heading says what the block compares and how: "p95 by collection size
// (one point per complete growth block; least-squares slope with its 95%
// CI)".
func (b Block) Heading() string {
	if b.Growth {
		return fmt.Sprintf("%s by collection size (one point per complete growth block; least-squares slope with its %s)", b.Figure, blockLevel())
	}

	return fmt.Sprintf("%s (median of %ss)", b.Figure, b.Samples)
}

// Markdown renders the block as a Markdown section with one table per
// group.
func (b Block) Markdown() string {
	if len(b.Groups) == 0 {
		return ""
	}

	var s strings.Builder

	if b.Growth {
		fmt.Fprintf(&s, "## Comparison: %s by collection size\n\nOne point per complete growth block (a block cut short is left out); each figure fitted against the collection's size by least squares, with the slope's %s.\n\n",
			mdEscape(b.Figure.String()), blockLevel())

		for _, a := range b.Answers() {
			fmt.Fprintf(&s, "- %s\n", mdEscape(a))
		}
	} else {
		fmt.Fprintf(&s, "## Comparison: %s\n\nMedian of %ss; the reference first, then best first.\n", mdEscape(b.Figure.String()), b.Samples)
	}

	for _, g := range b.Groups {
		fmt.Fprintf(&s, "\n### %s\n\n| | %s | verdict |", mdEscape(g.Title), mdEscape(b.Figure.String()))

		cost := b.Figure.Cost
		if cost {
			s.WriteString(" cost |")
		}

		s.WriteString("\n|---|---:|---|")

		if cost {
			s.WriteString("---|")
		}

		s.WriteString("\n")

		for _, l := range g.Lines {
			fmt.Fprintf(&s, "| %s | %s | %s |", mdEscape(l.Name), l.Value, mdEscape(l.Verdict))

			if cost {
				fmt.Fprintf(&s, " %s |", mdEscape(l.CostText))
			}

			s.WriteString("\n")
		}

		if g.Evidence != "" {
			fmt.Fprintf(&s, "\n%s\n", mdEscape(g.Evidence))
		}

		if g.Answer != "" && !b.Growth {
			fmt.Fprintf(&s, "\n%s\n", mdEscape(g.Answer))
		}
	}

	if b.Answer != "" {
		fmt.Fprintf(&s, "\n**%s**\n", mdEscape(b.Answer))
	}

	return s.String()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func pad(s string, w int) string { return s + strings.Repeat(" ", max(0, w-len([]rune(s)))) }

func padLeft(s string, w int) string { return strings.Repeat(" ", max(0, w-len([]rune(s)))) + s }

// firstOperation is the first operation the matrix's trials measured in
// a phase j judges.
func firstOperation(m *result.Matrix, j Judging) string {
	for _, tr := range m.Trials {
		if ops := blockOps(tr.Result, j); len(ops) > 0 {
			return ops[0].op.Name
		}
	}

	return ""
}

// trialValue is the figure's value in one trial, from the trial's measured
// phases.
func trialValue(res *result.Result, fig Figure) (float64, bool) {
	for _, po := range blockOps(res, fig.Judging) {
		name := po.op.Name
		if fig.Decode {
			if !po.op.Compared(true) {
				continue
			}

			// The entry is named by its operation, with the phase
			// prefix blockOps gives the operations.
			name = stepOf(po)
		}

		if name == fig.Operation {
			return operationValue(po.op, po.seconds, fig)
		}
	}

	return 0, false
}

// stepOf is the name of a decode entry's operation as blockOps names the
// operations: "read", or "phase/read" with several measured phases.
func stepOf(po phaseOp) string {
	if strings.HasPrefix(po.op.Name, po.phase+"/") {
		return po.phase + "/" + po.op.Steps[0]
	}

	return po.op.Steps[0]
}

// phaseOp is an operation of a measured phase, with the phase's length.
type phaseOp struct {
	op      result.Operation
	seconds float64
	phase   string
}

// blockOps lists the operations of a result's measured phases (not loads,
// not measure: false phases) that j judges (not verdict: false phases);
// with several measured phases an operation is named "phase/operation",
// as in the matrix tables, whether or not its neighbours are judged.
func blockOps(res *result.Result, j Judging) []phaseOp {
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

	var out []phaseOp

	for _, p := range phases {
		if !j.judged(p.Name) {
			continue
		}

		for _, o := range p.Operations {
			if len(phases) > 1 {
				o.Name = p.Name + "/" + o.Name
			}

			out = append(out, phaseOp{o, p.DurationS, p.Name})
		}
	}

	return out
}

// operationValue is the figure's value for one operation over seconds;
// false when it has none (no success to take a latency from, no document
// to divide by).
func operationValue(o result.Operation, seconds float64, fig Figure) (float64, bool) {
	if !fig.PerDoc {
		return MetricValue(o, seconds, fig.Metric)
	}

	if o.Docs <= 0 || o.Count == 0 {
		return 0, false
	}

	return o.LatencyUS.P50 * float64(o.Count) / float64(o.Docs), true
}

// runBlock builds the block of a single run whose contenders are the
// operations of each phase that runs a sequence, such as the two sides of a
// query tweak run alternately (A B A B ...): per such phase, the operations
// compared interval by interval on fig (its Operation is ignored). The
// operations of a phase share its intervals, so an interval pairs them in
// time; but the intervals of one run are not independent, so the intervals
// are optimistic, as those of compare are. Iterations and composites are
// left out: they are the sum of the operations compared.
//
// Without mixes, only a sequence makes its operations alternatives of each other: a phase
// that mixes operations by weight (a read/write mix, a background job
// beside a foreground load) runs different requests that answer different
// questions, and ranking them would compare a read with a write.
//
// With mixes, the operations of a phase that mixes them by weight are ranked
// too (run.compare_operations: the workload says they are alternatives).
func runBlock(res *result.Result, fig Figure, mixes bool) Block {
	fig.Operation = ""
	b := Block{Figure: fig, Samples: "interval", Design: verdict.Paired}

	if res == nil {
		return b
	}

	// The compared phases, in the groups' order, and whether each is an
	// index tweak the server did not use an index for.
	var phases []string

	var unused []bool

	for i := range res.Phases {
		p := &res.Phases[i]
		if p.Excluded || p.IsLoad() || !fig.Judging.judged(p.Name) || (!mixes && !runsSequence(p)) {
			continue
		}

		var samples []verdict.Sample

		var names []string

		for k, iv := range p.Intervals {
			secs := iv.End.Sub(iv.Start).Seconds()

			for i, o := range iv.Operations {
				// Intervals do not repeat a unit's steps: the phase's
				// entry at the same index has them.
				if i < len(p.Operations) {
					o.Steps = p.Operations[i].Steps
				}

				if !o.Compared(fig.Decode) {
					continue
				}

				name := o.Name
				if fig.Decode {
					name = o.Steps[0]
				}

				if v, ok := operationValue(o, secs, fig); ok {
					samples = append(samples, verdict.Sample{Variant: name, Round: k, Value: v})

					if !slices.Contains(names, name) {
						names = append(names, name)
					}
				}
			}
		}

		before := len(b.Groups)
		b.add("operations of the "+p.Name+" phase", samples)

		if len(b.Groups) > before {
			g := &b.Groups[len(b.Groups)-1]
			ev, no := planEvidence(res, names)
			g.Evidence = ev
			phases, unused = append(phases, p.Name), append(unused, no)
		}
	}

	b.Answer = b.answerGroups(res, b.Groups, phases, unused, readBackEvidence(res, fig.Judging)...)

	return b
}

// runsSequence reports whether the phase ran a sequence: it measured whole
// iterations.
func runsSequence(p *result.Phase) bool {
	isIteration := func(o result.Operation) bool { return o.Unit == result.UnitIteration }

	if slices.ContainsFunc(p.Operations, isIteration) {
		return true
	}

	for _, iv := range p.Intervals {
		if slices.ContainsFunc(iv.Operations, isIteration) {
			return true
		}
	}

	return false
}
