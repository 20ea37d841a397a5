package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mongobench/mongobench/internal/result"
	"github.com/mongobench/mongobench/internal/runner"
	"github.com/mongobench/mongobench/internal/target"
	"github.com/mongobench/mongobench/internal/workload"
)

// resultBuilder assembles the results file from the phases' registries, so
// that every number in it is derived from the recorded histograms.
type resultBuilder struct {
	res     *result.Result
	started time.Time
	errs    []error
}

func newResultBuilder(st *State, path string, spec *workload.Spec, t *openedTarget, info target.ServerInfo) *resultBuilder {
	kind := result.TargetURI
	if t.kind == "embedded" {
		kind = result.TargetEmbedded
	}

	notes := info.Notes()
	if t.embedded != nil {
		notes = append(notes, t.embedded.Notes()...)
	}

	backend := info.Backend
	if info.BackendVersion != "" {
		backend += " " + info.BackendVersion
	}

	started := st.Now()

	return &resultBuilder{
		started: started,
		res: &result.Result{
			SchemaVersion:     result.SchemaVersion,
			MongobenchVersion: Version(),
			Workload:          result.Workload{Name: spec.Name, File: path, Spec: spec, Source: string(spec.Source())},
			Target: result.Target{
				Kind:          kind,
				URI:           t.redactedURI(),
				ServerVersion: info.Summary(),
				Backend:       backend,
				Notes:         notes,
			},
			StartedAt:   started,
			Seed:        spec.Seed,
			Concurrency: spec.Run.Concurrency,
			Status:      result.StatusCompleted,
		},
	}
}

// add converts a finished phase.
func (b *resultBuilder) add(pr *runner.PhaseResult) {
	name := pr.Phase.Name
	if name != result.PhaseRun {
		name = result.PhaseLoad + ":" + strings.TrimPrefix(name, "load_")
	}

	p, err := result.PhaseFromRegistry(name, pr.Phase.Warmup, pr.Registry)
	if err != nil {
		b.errs = append(b.errs, err)
		return
	}

	b.res.AddPhase(p)
}

// build finishes the result with how the run ended.
func (b *resultBuilder) build(final *runner.PhaseResult) *result.Result {
	b.res.DurationS = time.Since(b.started).Seconds()

	switch final.Status {
	case runner.StatusInterrupted:
		b.res.Status = result.StatusInterrupted
	case runner.StatusAborted:
		b.res.Status = result.StatusAborted
	case runner.StatusCompleted:
		b.res.Status = result.StatusCompleted
	}

	b.res.StatusReason = final.Reason

	for _, err := range b.errs {
		b.res.Target.Notes = append(b.res.Target.Notes, "result assembly problem: "+err.Error())
	}

	return b.res
}

// printSummary writes the end-of-run table of the main phase.
func printSummary(w io.Writer, res *result.Result) {
	p := res.MainPhase()
	if p == nil || len(p.Operations) == 0 {
		fmt.Fprintln(w, "No operation was measured.")
		return
	}

	fmt.Fprintf(w, "\n%s — %s phase, %.1fs measured, %d workers, target %s\n",
		res.Workload.Name, p.Name, p.DurationS, res.Concurrency, res.Target.ServerVersion)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tcount\tops/s\tmean\tp50\tp90\tp95\tp99\tp99.9\tmax\terrors\t")

	for _, o := range p.Operations {
		l := o.LatencyUS
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			o.Name, o.Count, o.OpsPerSec,
			latencyCell(o.Count, l.Mean), latencyCell(o.Count, l.P50), latencyCell(o.Count, l.P90),
			latencyCell(o.Count, l.P95), latencyCell(o.Count, l.P99), latencyCell(o.Count, l.P999),
			latencyCell(o.Count, l.Max), errorsCell(o.Errors))
	}

	_ = tw.Flush()
}

func latencyCell(count int64, us float64) string {
	if count == 0 {
		return "-"
	}

	return formatMicros(us)
}

// errorsCell lists error counts by kind, most frequent first.
func errorsCell(errs map[string]int64) string {
	if len(errs) == 0 {
		return "0"
	}

	kinds := make([]string, 0, len(errs))
	for k := range errs {
		kinds = append(kinds, k)
	}

	sort.Slice(kinds, func(i, j int) bool {
		if errs[kinds[i]] != errs[kinds[j]] {
			return errs[kinds[i]] > errs[kinds[j]]
		}

		return kinds[i] < kinds[j]
	})

	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s:%d", k, errs[k])
	}

	return strings.Join(parts, " ")
}
