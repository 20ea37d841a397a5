package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/base/units"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/threshold"
)

// The terminal renderers print what a command shows when it ends, from the
// same results and analysis models the HTML page and the Markdown files
// are built from, so that a figure reads the same wherever it is shown.

// WriteSummary writes a single run's end-of-run tables: one per measured
// phase, with the schedule, growth blocks and background jobs where the
// phase has them, then the write verification. through ends the title:
// "" for the Go engine, else " through STACK (LIBRARY VERSION)"; the
// caller writes it because which library names a stack is the client
// registry's knowledge (engine/client), a layer above this package.
func WriteSummary(w io.Writer, res *result.Result, through string) {
	fmt.Fprintf(w, "\n%s on %s%s\n", res.Workload.Name, res.Target.ServerVersion, through)

	printed := 0

	for i := range res.Phases {
		p := &res.Phases[i]
		if p.Excluded || p.IsLoad() {
			continue
		}

		writePhase(w, p)

		printed++
	}

	if printed == 0 {
		fmt.Fprintln(w, "No operation was measured.")
	}

	WriteVerification(w, res)
}

func writePhase(w io.Writer, p *result.Phase) {
	model := p.Model
	if model == "" {
		model = workload.ModelClosed
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

	if p.Schedule != nil {
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

	writeDecodeCost(w, p.Operations)

	if s := p.Schedule; s != nil {
		writeSchedule(w, "schedule", s)
	}

	if len(p.Blocks) > 0 {
		writeGrowthBlocks(w, p.Blocks)
	}

	for _, bg := range p.Background {
		writeBackground(w, &bg)
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
			latencyCell(o.Count, l.Max), analysis.ErrorCounts(o.Errors))
	}

	_ = tw.Flush()
}

func writeSchedule(w io.Writer, what string, s *result.Schedule) {
	fmt.Fprintf(w, "%s: %d operations due, %d late, %d dropped, %d pending at the end; longest wait for a slot %s, scheduler lag up to %s\n",
		what, s.Scheduled, s.Late, s.Dropped, s.Pending, units.Micros(s.MaxWaitUS), units.Micros(s.MaxSchedulerLagUS))

	if s.Warning != "" {
		fmt.Fprintf(w, "Warning: %s\n", s.Warning)
	}
}

// writeGrowthBlocks writes latency against collection size, one row per
// block.
func writeGrowthBlocks(w io.Writer, blocks []result.Block) {
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
				data, idx = units.Bytes(b.Collection.DataBytes), units.Bytes(b.Collection.IndexBytes)
			}

			l := o.LatencyUS
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", block, docs, data, idx,
				o.Name, o.Count, latencyCell(o.Count, l.P50), latencyCell(o.Count, l.P90),
				latencyCell(o.Count, l.P95), latencyCell(o.Count, l.P99), latencyCell(o.Count, l.Max), analysis.ErrorCounts(o.Errors))
		}
	}

	_ = tw.Flush()

	if n := len(blocks); n > 0 && !blocks[n-1].Complete {
		fmt.Fprintln(w, "* cut short by the end of the run")
	}
}

func writeBackground(w io.Writer, bg *result.Background) {
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
		writeSchedule(w, "  its schedule", bg.Schedule)
	}
}

// trajectoryText summarises a rate trajectory as "from 10.0/s to 37.9/s
// (range 10.0–42.1/s over 5 intervals)".
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

// writeDecodeCost shows the time per returned document of operations that
// map documents: the median end to end (p50 over the documents of one
// read, the statistic the comparison block ranks, not a mean a few slow
// reads can double) and, where the decode time was measured, its share.
// The decode time per document itself is the comparison block's figure,
// shown there once.
func writeDecodeCost(w io.Writer, ops []result.Operation) {
	for _, o := range ops {
		if o.Decode == "" || o.Docs <= 0 || o.Count == 0 {
			continue
		}

		line := fmt.Sprintf("%s (decode %s): %.2fµs per document end to end (p50; %d documents)",
			o.Name, o.Decode, o.LatencyUS.P50*float64(o.Count)/float64(o.Docs), o.Docs)

		for _, d := range ops {
			if d.Compared(true) && d.Steps[0] == o.Name && d.Count > 0 && o.LatencyUS.P50 > 0 {
				line += fmt.Sprintf(", of which decoding %.1f%% (p50 %s of %s per read)", 100*d.LatencyUS.P50/o.LatencyUS.P50,
					threshold.FormatLatency(d.LatencyUS.P50), threshold.FormatLatency(o.LatencyUS.P50))
			}
		}

		fmt.Fprintln(w, line)
	}
}

// WriteVerification writes the write verification of a run or a matrix
// with a verify phase (see result.Verification): per collection (and
// matrix cell) the documents acknowledged, present and lost. It writes
// nothing when there is none.
func WriteVerification(w io.Writer, res *result.Result) {
	var rows []result.Verification
	if res.Matrix != nil {
		rows = res.Matrix.Verifications()
	} else {
		rows = res.Verifications()
	}

	if len(rows) == 0 {
		return
	}

	fmt.Fprintln(w, "\nWrite verification (documents acknowledged by inserts vs found by the verify phase)")

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tvariant\tcollection\ttrials\tacknowledged\tpresent\tlost\t")

	for _, v := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t\n", orDash(v.Target), orDash(v.Variant), v.Collection, v.Trials, v.Acknowledged, v.Present, v.Lost)
	}

	_ = tw.Flush()
}

// orDash shows an empty cell as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}

	return s
}

// WriteBlocks writes the comparison blocks of the results (analysis.Blocks):
// a study's variants or targets ranked on its figure, a single run's
// growth verdict, or the operations of a phase that runs a sequence;
// nothing when nothing is compared. A growth run's answer (its figure's
// slope per operation) is printed last, as "Growth: …".
func WriteBlocks(w io.Writer, res *result.Result) {
	answer := ""

	for _, b := range analysis.Blocks(res) {
		b.WriteText(w)

		if a := b.GrowthAnswer(); a != "" {
			answer = a
		}
	}

	// A growth run's question is answered last, on the study's figure.
	if answer != "" {
		fmt.Fprintf(w, "\nGrowth: %s\n", answer)
	}
}

// BlocksMarkdown is WriteBlocks as Markdown sections, from the same model;
// empty when nothing is compared.
func BlocksMarkdown(res *result.Result) string {
	var s strings.Builder

	for _, b := range analysis.Blocks(res) {
		s.WriteString("\n" + b.Markdown())
	}

	return s.String()
}

// WriteFilesBlock writes the comparison block of compare's files: each
// file (or matrix cell) ranked on the first operation's median latency,
// from its intervals.
func WriteFilesBlock(w io.Writer, files []*analysis.File, j analysis.Judging) {
	fig := analysis.DefaultFigure
	fig.Judging = j
	analysis.FilesBlock(files, fig).WriteText(w)
}
