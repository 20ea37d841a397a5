package bench

import (
	"fmt"
	"iter"
	"strings"

	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// This file keeps, for the tests only, how results were assembled before
// run logs: straight from the phases' registries, which then had to keep
// every interval. TestRunLogMatchesRegistryAssembly checks that building
// from the run log gives the same phases.

// addFromRegistry converts a finished phase; excluded marks a phase run with
// measure: false.
func (b *resultBuilder) addFromRegistry(pr *runner.PhaseResult, excluded bool) error {
	p, err := convertPhase(pr)
	if err != nil {
		return err
	}

	for i := range p.Operations {
		o := &p.Operations[i]
		if mode := b.decode[o.Name]; mode != "" {
			o.Decode = mode
			if o.Docs > 0 {
				o.USPerDoc = o.LatencyUS.Mean * float64(o.Count) / float64(o.Docs)
			}
		}
	}

	p.Excluded = excluded
	b.res.AddPhase(p)

	return nil
}

// convertPhase turns a runner phase into its results-file form.
func convertPhase(pr *runner.PhaseResult) (result.Phase, error) {
	name := pr.Phase.Name
	if pr.Phase.Model == "load" {
		name = result.PhaseLoad + ":" + strings.TrimPrefix(name, "load_")
	}

	p, err := result.NewPhase(name, pr.Phase.Warmup, pr.Registry.Intervals())
	if err != nil {
		return p, err
	}

	p.Model = pr.Phase.Model

	if pr.Service != nil {
		if err := addServiceTimes(&p, pr.Service); err != nil {
			return p, err
		}
	}

	p.Schedule = convertSchedule(pr.Schedule, pr.Phase.Concurrency)

	for _, t := range pr.Targets {
		p.Targets = append(p.Targets, result.PlanPoint{ElapsedS: t.Elapsed.Seconds(), Rate: t.Rate, Concurrency: t.Concurrency})
	}

	for _, blk := range pr.Blocks {
		ops, secs, err := blockOperations(pr.Registry, blk.FirstInterval, blk.EndInterval)
		if err != nil {
			return p, err
		}

		p.Blocks = append(p.Blocks, result.Block{
			Index:     blk.Index,
			Start:     blk.Start.Round(0),
			End:       blk.End.Round(0),
			DurationS: secs,
			Complete:  blk.Complete,
			Collection: result.CollectionSize{
				Name: blk.Size.Collection, Documents: blk.Size.Documents, DataBytes: blk.Size.DataBytes,
				StorageBytes: blk.Size.StorageBytes, IndexBytes: blk.Size.IndexBytes, Note: blk.Size.Note, Error: blk.Size.Error,
			},
			Operations: ops,
		})
	}

	for _, bg := range pr.Background {
		p.Background = append(p.Background, convertBackground(bg, true))
	}

	return p, nil
}

// blockOperations merges the intervals [first, end) of a registry into
// per-operation statistics, the way a phase's totals are merged (the old
// assembly; the run log now keeps the intervals, and the registry only a few).
func blockOperations(reg *metrics.Registry, first, end int) ([]result.Operation, float64, error) {
	sub := func(yield func(metrics.Interval, error) bool) {
		i := 0
		for iv, err := range reg.Intervals() {
			if err != nil {
				yield(iv, err)
				return
			}

			if i >= first && i < end && !yield(iv, nil) {
				return
			}

			i++
		}
	}

	p, err := result.NewPhase("block", 0, iter.Seq2[metrics.Interval, error](sub))
	if err != nil {
		return nil, 0, err
	}

	return p.Operations, p.DurationS, nil
}

// addServiceTimes sets the service-time fields of p's operations from the
// cumulative histograms of a service-time registry with the same operations.
func addServiceTimes(p *result.Phase, svc *metrics.Registry) error {
	for i, t := range svc.Totals() {
		if i >= len(p.Operations) || p.Operations[i].Name != t.Name {
			return fmt.Errorf("phase %q: service times do not match the operations", p.Name)
		}

		if t.Count == 0 {
			continue
		}

		l, enc, err := result.ServiceTimes(t.Hist)
		if err != nil {
			return fmt.Errorf("phase %q: operation %q: %w", p.Name, t.Name, err)
		}

		p.Operations[i].ServiceLatencyUS = l
		p.Operations[i].ServiceHistogram = enc
	}

	return nil
}
