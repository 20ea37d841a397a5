package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mongobench/mongobench/internal/units"

	"github.com/mongobench/mongobench/internal/atomicfile"

	"github.com/mongobench/mongobench/internal/redact"
	"github.com/mongobench/mongobench/internal/result"
	"github.com/mongobench/mongobench/internal/runner"
	"github.com/mongobench/mongobench/internal/target"
	"github.com/mongobench/mongobench/internal/verdict"
	"github.com/mongobench/mongobench/internal/workload"
)

// compileVariants returns the compiled specs to run: one per variant, or the
// workload itself, with the command line's overrides applied.
func compileVariants(path string, w *compiled, f *runFlags) ([]*compiled, error) {
	specs, errs := w.spec.VariantSpecs()
	if len(errs) > 0 {
		return nil, &exitError{code: ExitBadInput, msg: fmt.Sprintf("%s: invalid variants: %v", path, errors.Join(errs...))}
	}

	if len(specs) == 1 && specs[0] == w.spec {
		applyOverrides(w.spec, f)
		if err := checkBudget(w.spec, f); err != nil {
			return nil, err
		}

		return []*compiled{w}, nil
	}

	out := make([]*compiled, 0, len(specs))

	for _, s := range specs {
		s.Seed = w.spec.Seed
		applyOverrides(s, f)
		if err := checkBudget(s, f); err != nil {
			return nil, err
		}

		c, errs := compileSpec(s)
		if len(errs) > 0 {
			return nil, &exitError{code: ExitBadInput, msg: fmt.Sprintf("%s: variant %q: %v", path, s.Variant, errors.Join(errs...))}
		}

		out = append(out, c)
	}

	return out, nil
}

// targetSpecs returns the workload's targets followed by the --target
// flags; none means the default (embedded, or --uri).
func targetSpecs(spec *workload.Spec, f *runFlags) ([]target.TargetSpec, error) {
	var out []target.TargetSpec

	for _, t := range spec.Targets {
		out = append(out, t.Target())
	}

	for _, s := range f.targets {
		ts, err := target.ParseTargetFlag(s)
		if err != nil {
			return nil, badInput("--target %s", redact.Error(err, s))
		}

		out = append(out, ts)
	}

	if f.uri != "" && len(out) > 0 {
		out = append(out, target.TargetSpec{Name: target.KindURI, Kind: target.KindURI, URI: f.uri})
	}

	seen := map[string]bool{}

	for i := range out {
		if out[i].Name == "" {
			out[i].Name = out[i].Label()
		}

		if err := out[i].Validate(); err != nil {
			return nil, badInput("target %q: %s", out[i].Name, redact.Error(err, out[i].URI))
		}

		if seen[out[i].Name] {
			return nil, badInput("two targets are named %q; name them (name=... in --target)", out[i].Name)
		}

		seen[out[i].Name] = true
	}

	useMongodBinary(out, f.mongodBinary)

	return out, nil
}

// openLaunched launches (or, for uri, just names) a target and connects.
func openLaunched(ctx context.Context, st *State, ts target.TargetSpec, selection time.Duration) (*openedTarget, error) {
	l, err := target.Launch(ctx, ts, target.LaunchOptions{Logger: ferretDBLogger(st)})
	if err != nil {
		return nil, failed("target %q: %s", ts.Name, redact.Error(err, ts.URI))
	}

	t := &openedTarget{kind: ts.Kind, name: ts.Name, uri: l.URI, launched: l}
	t.unhook = st.onHardExit(func() { _ = l.Stop() })

	fmt.Fprintf(st.Stderr, "Target %s: %s\n", ts.Name, l.Description)

	if err := t.connect(ctx, st, target.ConnectOptions{MaxPoolSize: l.MaxPoolSize, Timeout: selection}); err != nil {
		return nil, err
	}

	return t, nil
}

// trialRounds is the number of trial rounds of a run with this many
// variants and targets: --rounds, run.rounds, trials.rounds, or the default
// (enough for a confidence interval when something is compared).
func trialRounds(spec *workload.Spec, f *runFlags, variants, targets int) int {
	return spec.TrialRounds(f.rounds, variants > 1 || targets > 1)
}

// matrixAlpha is the significance level of matrix verdicts: their
// confidence intervals are at 95%.
const matrixAlpha = verdict.DefaultAlpha

// runMatrix runs every variant on every target in interleaved rounds,
// computes the verdicts and writes one results file. Every target is opened
// once, before the first round, and stays up until the last, so that the
// rounds can alternate between targets as well as variants.
func runMatrix(ctx context.Context, st *State, path string, base *workload.Spec, variants []*compiled,
	targets []target.TargetSpec, f *runFlags,
) error {
	if len(targets) == 0 {
		targets = []target.TargetSpec{{Name: target.KindEmbedded, Kind: target.KindEmbedded}}
		if f.uri != "" {
			targets = []target.TargetSpec{{Name: target.KindURI, Kind: target.KindURI, URI: f.uri}}
		}
	}

	rounds := trialRounds(base, f, len(variants), len(targets))
	started := st.Now()

	m := &result.Matrix{Rounds: rounds}
	for _, v := range variants {
		m.Variants = append(m.Variants, variantName(v.spec))
	}

	fmt.Fprintf(st.Stderr, "Comparing %d variant(s) on %d target(s) in %d interleaved round(s).\n", len(variants), len(targets), rounds)

	if need := verdict.MinSamples(verdict.Paired, matrixAlpha); rounds < need && (len(variants) > 1 || len(targets) > 1) {
		fmt.Fprintf(st.Stderr, "Warning: %d round(s) are fewer than the %d a 95%% confidence interval needs; every verdict will be inconclusive.\n",
			rounds, need)
	}

	var failures []string

	fail := func(i int, err error) {
		m.Targets[i].Error = err.Error()
		failures = append(failures, err.Error())
		fmt.Fprintf(st.Stderr, "Target %s failed: %v\n", m.Targets[i].Name, err)
	}

	opened := make([]*matrixTarget, len(targets))

	defer func() {
		for _, mt := range opened {
			if mt != nil {
				mt.tgt.close(st)
			}
		}
	}()

	for i, ts := range targets {
		m.Targets = append(m.Targets, result.MatrixTarget{Name: ts.Name, Kind: ts.Kind})

		if ctx.Err() != nil {
			continue
		}

		mt, err := openMatrixTarget(ctx, st, ts, &m.Targets[i], f.serverSelection)
		opened[i] = mt

		if err != nil && ctx.Err() == nil {
			fail(i, err)
		}
	}

	for r := 1; r <= rounds && ctx.Err() == nil; r++ {
		for _, c := range roundOrder(len(targets), len(variants), r) {
			mt, v := opened[c.target], variants[c.variant]
			if mt == nil || mt.failed || ctx.Err() != nil {
				continue
			}

			tr, err := runMatrixTrial(ctx, st, f, path, mt, v, r, rounds)
			if tr != nil {
				m.Trials = append(m.Trials, *tr)
			}

			if err != nil && ctx.Err() == nil {
				mt.failed = true
				fail(c.target, err)
			}
		}
	}

	m.Verdicts = matrixVerdicts(m)

	res := &result.Result{
		SchemaVersion:     result.SchemaVersion,
		MongobenchVersion: Version(),
		Workload:          result.Workload{Name: base.Name, File: path, CompareOn: base.Run.CompareOn, Spec: base, Source: string(base.Source())},
		Target:            result.Target{Kind: result.KindMatrix, Notes: []string{fmt.Sprintf("%d targets × %d variants × %d rounds", len(m.Targets), len(m.Variants), rounds)}},
		StartedAt:         started,
		DurationS:         time.Since(started).Seconds(),
		Seed:              base.Seed,
		Concurrency:       base.Run.Concurrency,
		Status:            result.StatusCompleted,
		Matrix:            m,
	}

	switch {
	case ctx.Err() != nil:
		res.Status, res.StatusReason = result.StatusInterrupted, "interrupted by the user"
	case len(failures) > 0:
		res.Status, res.StatusReason = result.StatusAborted, strings.Join(failures, "; ")
	}

	// Everything below prints or writes the sanitized copy only.
	res, err := result.Sanitize(res)
	if err != nil {
		return failed("writing results: %v", err)
	}

	m = res.Matrix

	out := resultsPath(f.out, base.Name, started)
	if err := writeResults(st, out, res); err != nil {
		return err
	}

	printMatrix(tableWriter(st, f), m)
	resultsWritten(st, out)

	if f.markdown != "" {
		if err := writeMarkdownAtomic(f.markdown, m); err != nil {
			return failed("writing %s: %v", f.markdown, err)
		}

		fmt.Fprintf(st.Stderr, "Markdown written to %s\n", f.markdown)
	}

	if err := writeRunReport(st, f, out, res); err != nil {
		return err
	}

	switch {
	case ctx.Err() != nil:
		return failed("run interrupted; results so far were written")
	case len(failures) > 0:
		return failed("%s", strings.Join(failures, "; "))
	}

	return nil
}

func variantName(s *workload.Spec) string {
	if s.Variant != "" {
		return s.Variant
	}

	return s.Name
}

// matrixTarget is an open target of a comparison run.
type matrixTarget struct {
	name   string
	tgt    *openedTarget
	info   target.ServerInfo
	failed bool // a trial failed: the target runs no more trials
}

// openMatrixTarget launches (or connects to) a target and describes it in
// mt. The returned target, when not nil, must be closed, even with an error.
func openMatrixTarget(ctx context.Context, st *State, ts target.TargetSpec, mt *result.MatrixTarget, selection time.Duration) (*matrixTarget, error) {
	tgt, err := openLaunched(ctx, st, ts, selection)
	if err != nil {
		return nil, err
	}

	mt.URI = redact.URI(tgt.uri)
	out := &matrixTarget{name: ts.Name, tgt: tgt}

	info, err := describe(ctx, st, tgt)
	if err != nil {
		out.failed = true
		return out, err
	}

	out.info = info
	mt.ServerVersion, mt.Backend = info.Summary(), info.Backend
	mt.Notes = append(info.Notes(), tgt.launched.Notes...)

	return out, nil
}

// trialCell is one (target, variant) pair of a round, by index.
type trialCell struct{ target, variant int }

// roundOrder is the order in which round r (from 1) runs the cells: target
// by target, variant by variant, reversed in every even round (A B C, then
// C B A, …). Over each pair of rounds every cell runs once early and once
// late by the same amount, so that drift during a round (a warming cache,
// a neighbour's job) favours no target and no variant.
func roundOrder(targets, variants, r int) []trialCell {
	cells := make([]trialCell, 0, targets*variants)

	for t := range targets {
		for v := range variants {
			cells = append(cells, trialCell{t, v})
		}
	}

	if r%2 == 0 {
		slices.Reverse(cells)
	}

	return cells
}

// runMatrixTrial runs one trial of variant v on mt in round r. It returns
// the trial when it measured something, and an error when the target
// failed (a trial that could not run, or aborted); an interruption is not a
// failure.
func runMatrixTrial(ctx context.Context, st *State, f *runFlags, path string, mt *matrixTarget, v *compiled,
	r, rounds int,
) (*result.Trial, error) {
	name := variantName(v.spec)
	fmt.Fprintf(st.Stderr, "== %s · %s · round %d/%d\n", mt.name, name, r, rounds)

	res, final, err := executeTrial(ctx, st, f, mt.tgt, mt.info, path, v, trialOptions{evidence: r == rounds})
	if err != nil {
		return nil, err
	}

	res.Workload.Source = "" // the matrix keeps the file's text once
	tr := &result.Trial{Target: mt.name, Variant: name, Round: r, Result: res}

	if final != nil && final.Status == runner.StatusAborted {
		return tr, fmt.Errorf("%s · %s · round %d aborted: %s", mt.name, name, r, final.Reason)
	}

	return tr, nil
}

// matrixMetrics are the metrics verdicts are given for.
var matrixMetrics = []struct {
	name string
	dir  verdict.Direction
	get  func(result.Operation) float64
}{
	{"throughput", verdict.HigherIsBetter, func(o result.Operation) float64 { return o.OpsPerSec }},
	{"p50", verdict.LowerIsBetter, func(o result.Operation) float64 { return o.LatencyUS.P50 }},
	{"p99", verdict.LowerIsBetter, func(o result.Operation) float64 { return o.LatencyUS.P99 }},
}

// matrixVerdicts compares the variants on each target, per operation and
// metric, from the trials' measured phases; ratios pair variants within a
// round. With one variant on several targets it compares the targets too.
func matrixVerdicts(m *result.Matrix) []result.MatrixVerdict {
	var out []result.MatrixVerdict

	for _, t := range m.Targets {
		out = append(out, compareTrials(m, t.Name, t.Name, func(tr result.Trial) string { return tr.Variant })...)
	}

	// With one variant on several targets the question is which target is
	// faster: compare the targets, pairing trials by round.
	if len(m.Variants) == 1 && len(m.Targets) > 1 {
		out = append(out, compareTrials(m, "", CrossTarget, func(tr result.Trial) string { return tr.Target })...)
	}

	return out
}

// CrossTarget is the Target of verdicts that compare targets rather than
// variants.
const CrossTarget = "*"

// compareTrials gives verdicts per operation and metric over the trials of
// target (all trials when target is empty), comparing the groups that
// group names (variants, or targets); label is the verdicts' Target.
func compareTrials(m *result.Matrix, target, label string, group func(result.Trial) string) []result.MatrixVerdict {
	var out []result.MatrixVerdict

	for _, opName := range trialOperations(m, target) {
		for _, metric := range matrixMetrics {
			var samples []verdict.Sample

			for _, tr := range m.Trials {
				if target != "" && tr.Target != target {
					continue
				}

				for _, o := range measuredOps(tr.Result) {
					if o.Name == opName && o.Count > 0 {
						samples = append(samples, verdict.Sample{Variant: group(tr), Round: tr.Round, Value: metric.get(o)})
					}
				}
			}

			if len(samples) == 0 {
				continue
			}

			mv := result.MatrixVerdict{Target: label, Operation: opName, Metric: metric.name}
			for _, v := range verdict.Compare(samples, metric.dir, verdict.Options{Alpha: matrixAlpha, Design: verdict.Paired}) {
				mv.Variants = append(mv.Variants, result.CellVerdict{
					Variant: v.Variant, N: v.N, Median: finite(v.Median), Lo: finite(v.Lo), Hi: finite(v.Hi), Best: v.Best,
					Ratio: finite(v.Ratio), RatioLo: finite(v.RatioLo), RatioHi: finite(v.RatioHi), P: finite(v.P),
					Kind: v.Kind, Text: v.Text,
				})
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

		for _, o := range measuredOps(tr.Result) {
			if !seen[o.Name] {
				seen[o.Name] = true
				names = append(names, o.Name)
			}
		}
	}

	return names
}

// printMatrix writes, per operation and metric, a table of variants ×
// targets: the median over trials and the verdict against the best variant
// of the same target.
func printMatrix(w io.Writer, m *result.Matrix) {
	writeMatrix(w, m, false)
}

func writeMatrix(w io.Writer, m *result.Matrix, markdown bool) {
	cell := map[[4]string]result.CellVerdict{}

	var ops []string

	seenOp := map[string]bool{}

	for _, mv := range m.Verdicts {
		if !seenOp[mv.Operation] {
			seenOp[mv.Operation] = true
			ops = append(ops, mv.Operation)
		}

		for _, cv := range mv.Variants {
			cell[[4]string{mv.Target, mv.Operation, mv.Metric, cv.Variant}] = cv
		}
	}

	what := "the variants on the same target"
	if len(m.Variants) == 1 && len(m.Targets) > 1 {
		what = "the targets"
	}

	if len(m.Verdicts) == 0 {
		fmt.Fprintf(w, "\nNo trial measured anything: nothing to compare.\n")
	} else {
		fmt.Fprintf(w, "\nMedians over %d round(s); verdicts compare %s by the median of per-round ratios with its\n"+
			"distribution-free 95%% CI: a difference when the CI excludes 1, inconclusive below %d rounds.\n",
			m.Rounds, what, verdict.MinSamples(verdict.Paired, matrixAlpha))
	}

	for _, op := range ops {
		for _, metric := range matrixMetrics {
			unit := "ops/s"
			if metric.name != "throughput" {
				unit = "latency"
			}

			fmt.Fprintf(w, "\n%s — %s (%s)\n", op, metric.name, unit)

			header := []string{"variant"}
			for _, t := range m.Targets {
				header = append(header, t.Name)
			}

			var rows [][]string

			for _, v := range m.Variants {
				row := []string{v}

				for _, t := range m.Targets {
					cv, ok := cell[[4]string{t.Name, op, metric.name, v}]
					if cross, found := cell[[4]string{CrossTarget, op, metric.name, t.Name}]; found && len(m.Variants) == 1 {
						cv, ok = cross, true
					}

					if !ok {
						row = append(row, "-")
						continue
					}

					val := fmt.Sprintf("%.1f", cv.Median)
					if metric.name != "throughput" {
						val = units.Micros(cv.Median)
					}

					row = append(row, val+" — "+cv.Text)
				}

				rows = append(rows, row)
			}

			printTable(w, header, rows, markdown)
		}
	}

	for _, t := range m.Targets {
		if t.Error != "" {
			fmt.Fprintf(w, "\nTarget %s: %s\n", t.Name, t.Error)
		}

		for _, n := range t.Notes {
			fmt.Fprintf(w, "Note (%s): %s\n", t.Name, n)
		}
	}
}

func printTable(w io.Writer, header []string, rows [][]string, markdown bool) {
	if markdown {
		fmt.Fprintf(w, "\n| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat(" --- |", len(header)))

		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}

		return
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")

	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}

	_ = tw.Flush()
}

// writeMarkdownAtomic writes the matrix as Markdown atomically, so that a
// reader never sees half a file.
func writeMarkdownAtomic(path string, m *result.Matrix) error {
	var b strings.Builder

	writeMatrix(&b, m, true)

	return atomicfile.WriteBytes(path, []byte(b.String()))
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

// measuredOps returns the operations of every measured phase of a trial
// (not loads, not measure: false phases), so that a comparison covers all
// of them. With several such phases an operation is named "phase/op".
func measuredOps(res *result.Result) []result.Operation {
	if res == nil {
		return nil
	}

	var phases []*result.Phase

	for i := range res.Phases {
		p := &res.Phases[i]
		if !p.Excluded && p.Model != "load" && !strings.HasPrefix(p.Name, result.PhaseLoad+":") {
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
