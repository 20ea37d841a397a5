package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mongobench/mongobench/internal/base/units"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
)

// printSummary writes the end-of-run tables: one per measured phase, with
// the schedule, growth blocks and background jobs where the phase has them.
func printSummary(w io.Writer, res *result.Result) {
	fmt.Fprintf(w, "\n%s on %s%s\n", res.Workload.Name, res.Target.ServerVersion, throughClient(res.Client))

	printed := 0

	for i := range res.Phases {
		p := &res.Phases[i]
		if p.Excluded || p.Model == "load" || strings.HasPrefix(p.Name, result.PhaseLoad+":") {
			continue
		}

		printPhase(w, p)

		printed++
	}

	if printed == 0 {
		fmt.Fprintln(w, "No operation was measured.")
	}

	printVerification(w, res)
}

func printPhase(w io.Writer, p *result.Phase) {
	model := p.Model
	if model == "" {
		model = "closed"
	}

	fmt.Fprintf(w, "\n%s phase (%s), %.1fs measured", p.Name, model, p.DurationS)

	if p.WarmupS > 0 {
		fmt.Fprintf(w, " after %.1fs warm-up", p.WarmupS)
	}

	fmt.Fprintln(w)

	if len(p.Operations) == 0 {
		fmt.Fprintln(w, "No operation was measured.")
		return
	}

	open := p.Schedule != nil
	if open {
		fmt.Fprintln(w, "Latency is response time, from each operation's scheduled start.")
	}

	latencyTable(w, p.Operations, func(o result.Operation) result.Latency { return o.LatencyUS })

	if hasService(p.Operations) {
		fmt.Fprintln(w, "Service time, from the actual send (queueing for a slot excluded):")
		latencyTable(w, p.Operations, func(o result.Operation) result.Latency {
			if o.ServiceLatencyUS == nil {
				return result.Latency{}
			}

			return *o.ServiceLatencyUS
		})
	}

	printDecodeCost(w, p.Operations)

	if s := p.Schedule; s != nil {
		printSchedule(w, "schedule", s)
	}

	if len(p.Blocks) > 0 {
		printBlocks(w, p.Blocks)
	}

	for _, bg := range p.Background {
		printBackground(w, &bg)
	}
}

func hasService(ops []result.Operation) bool {
	for _, o := range ops {
		if o.ServiceLatencyUS != nil {
			return true
		}
	}

	return false
}

func latencyTable(w io.Writer, ops []result.Operation, lat func(result.Operation) result.Latency) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tcount\tops/s\tmean\tp50\tp90\tp95\tp99\tp99.9\tmax\terrors\t")

	for _, o := range ops {
		l := lat(o)
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			o.Name, o.Count, o.OpsPerSec,
			latencyCell(o.Count, l.Mean), latencyCell(o.Count, l.P50), latencyCell(o.Count, l.P90),
			latencyCell(o.Count, l.P95), latencyCell(o.Count, l.P99), latencyCell(o.Count, l.P999),
			latencyCell(o.Count, l.Max), errorsCell(o.Errors))
	}

	_ = tw.Flush()
}

func printSchedule(w io.Writer, what string, s *result.Schedule) {
	fmt.Fprintf(w, "%s: %d operations due, %d late, %d dropped, %d pending at the end; longest wait for a slot %s, scheduler lag up to %s\n",
		what, s.Scheduled, s.Late, s.Dropped, s.Pending, units.Micros(s.MaxWaitUS), units.Micros(s.MaxSchedulerLagUS))

	if s.Warning != "" {
		fmt.Fprintf(w, "Warning: %s\n", s.Warning)
	}
}

// printBlocks writes latency against collection size, one row per block.
func printBlocks(w io.Writer, blocks []result.Block) {
	fmt.Fprintln(w, "Growth blocks (latency by collection size):")

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "block\tdocuments\tdata\tindexes\toperation\tcount\tp50\tp90\tp95\tp99\tmax\terrors\t")

	for _, b := range blocks {
		for i, o := range b.Operations {
			block, docs, data, idx := "", "", "", ""
			if i == 0 {
				block = fmt.Sprint(b.Index + 1)
				if !b.Complete {
					block += "*"
				}

				docs = fmt.Sprint(b.Collection.Documents)
				data, idx = formatBytes(b.Collection.DataBytes), formatBytes(b.Collection.IndexBytes)
			}

			l := o.LatencyUS
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", block, docs, data, idx,
				o.Name, o.Count, latencyCell(o.Count, l.P50), latencyCell(o.Count, l.P90),
				latencyCell(o.Count, l.P95), latencyCell(o.Count, l.P99), latencyCell(o.Count, l.Max), errorsCell(o.Errors))
		}
	}

	_ = tw.Flush()

	if n := len(blocks); n > 0 && !blocks[n-1].Complete {
		fmt.Fprintln(w, "* cut short by the end of the run")
	}
}

func printBackground(w io.Writer, bg *result.Background) {
	if pc := bg.Pacing; pc != nil {
		fmt.Fprintf(w, "Background job %s: latency-paced on p%g between %s and %s; rate %s",
			bg.Operation, pc.Percentile, units.Micros(pc.LowUS), units.Micros(pc.HighUS), trajectoryText(bg.Trajectory))

		if bg.HighestSustainedRate > 0 {
			fmt.Fprintf(w, "; highest rate sustained below %s: %.1f/s", units.Micros(pc.HighUS), bg.HighestSustainedRate)
		} else {
			fmt.Fprintf(w, "; no rate kept p%g below %s", pc.Percentile, units.Micros(pc.HighUS))
		}

		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "Background job %s at %.1f/s\n", bg.Operation, bg.Rate)
	}

	if bg.Schedule != nil {
		printSchedule(w, "  its schedule", bg.Schedule)
	}
}

// trajectoryText summarises a rate trajectory as "10 → 42.1 → 37.9/s (last)".
func trajectoryText(t []result.PacingPoint) string {
	if len(t) == 0 {
		return "-"
	}

	lo, hi := t[0].Rate, t[0].Rate
	for _, p := range t {
		lo, hi = min(lo, p.Rate), max(hi, p.Rate)
	}

	return fmt.Sprintf("from %.1f/s to %.1f/s (range %.1f–%.1f/s over %d intervals)", t[0].Rate, t[len(t)-1].Rate, lo, hi, len(t)-1)
}

func latencyCell(count int64, us float64) string {
	if count == 0 {
		return "-"
	}

	return units.Micros(us)
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%dB", n)
	}
}

// errorsCell lists error counts by kind, most frequent first.
func errorsCell(errs map[string]int64) string { return analysis.ErrorCounts(errs) }

// printDecodeCost shows the time per returned document of operations that
// map documents, the figure a decode-mode comparison is about.
func printDecodeCost(w io.Writer, ops []result.Operation) {
	for _, o := range ops {
		if o.Decode != "" && o.Docs > 0 {
			fmt.Fprintf(w, "%s (decode %s): %.2fµs per document (%d documents)\n", o.Name, o.Decode, o.USPerDoc, o.Docs)
		}
	}
}
