package bench

import (
	"context"
	"flag"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/stats/regress"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// growthAA is how many flat runs TestGrowthFalseGrowthRate makes: a
// measurement of minutes, so it runs only when asked (go test -run
// TestGrowthFalseGrowthRate ./internal/lab/bench/ -args -growth-aa 100).
var growthAA = flag.Int("growth-aa", 0, "runs of the growth verdict's A/A check against a flat server (0: skip it)")

// growthWorkload is an error tracker's growth blocks at a small size: each
// block inserts 100 notices and runs 100 searches, 8 blocks.
const growthWorkload = `name: growth_fit
database: mongobench_growth_fit
collections: [{name: notices}]
run:
  concurrency: 4
  interval: 100ms
  blocks:
    steps:
      - {operations: [create], count: 100}
      - {operations: [search], count: 100}
    until: {collection: notices, blocks: 8}
operations:
  - {name: create, op: insertOne, collection: notices, document: {n: 1}}
  - {name: search, op: find, collection: notices, filter: {n: 1}, limit: 10}
`

// growing is a server latency that grows with the documents inserted:
// base plus perDoc for each, as a collection scan's does.
type growing struct {
	base, perDoc time.Duration
	inserted     func() int64
}

func (g growing) Delay(time.Time, int) time.Duration {
	return g.base + time.Duration(g.inserted())*g.perDoc
}

// runGrowth runs growthWorkload against srv and fits it.
func runGrowth(t *testing.T, srv *wiretest.Server) []analysis.GrowthFit {
	t.Helper()

	w := compileWorkload(t, growthWorkload)
	plan := &Plan{
		Path: "growth.yaml", Base: w.Spec, Variants: []*Compiled{w}, Rounds: 1,
		Targets: []targets.TargetSpec{{Name: "wiretest", Kind: targets.KindURI, URI: srv.URI()}},
		Options: options(t),
	}

	out, err := Run(context.Background(), plan, (&recorder{}).hooks())
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()

	return analysis.GrowthFits(out.Result)
}

// TestGrowthPlanted runs growth blocks against a server whose every reply
// takes 100 µs longer per document inserted before it (+80 ms over the
// run's 800): the fits of both operations find growth on p50, the slope's
// interval above 0, from the collection sizes the server reports.
func TestGrowthPlanted(t *testing.T) {
	var inserted atomic.Pointer[wiretest.Server]

	srv, err := wiretest.Start(wiretest.Config{CountInserts: true, Latency: growing{
		base: time.Millisecond, perDoc: 100 * time.Microsecond,
		inserted: func() int64 { return inserted.Load().Inserted() },
	}})
	if err != nil {
		t.Fatal(err)
	}

	inserted.Store(srv)
	t.Cleanup(func() { _ = srv.Close() })

	fits := runGrowth(t, srv)
	if len(fits) != 6 {
		t.Fatalf("%d fits, want create and search on p50, p95, p99", len(fits))
	}

	for _, g := range fits {
		if g.Err != nil || len(g.Points) != 8 || len(g.LeftOut) != 0 {
			t.Fatalf("%s: %d points, left out %q, err %v; want all 8 blocks", g.Title(), len(g.Points), g.LeftOut, g.Err)
		}

		if last := g.Points[7].Documents; last != 800 {
			t.Errorf("%s: the last block at %d documents, want 800", g.Title(), last)
		}

		if g.Metric.Percent == 50 && g.Trend() != regress.Grows {
			t.Errorf("%s: %s; the planted growth was not found", g.Title(), g.Verdict())
		}
	}
}

// TestGrowthFalseGrowthRate is the growth verdict's A/A check: runs
// against a server whose replies all take 1 ms, whose latency does not
// grow, counting the fits whose slope interval excludes 0. Each (operation,
// percentile) is counted over the runs, with the verdict's minimum effect
// (GrowthFit.Trend) and on the slope's interval alone; the Wilson interval
// of the verdict's pooled rate must reach down to the documented 10%. The figures go in
// docs/workloads.md.
func TestGrowthFalseGrowthRate(t *testing.T) {
	if *growthAA == 0 {
		t.Skip("a measurement of minutes: -args -growth-aa N runs it")
	}

	srv, err := wiretest.Start(wiretest.Config{CountInserts: true, Latency: wiretest.Fixed(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	notFlat := map[string]int{}
	total, k, kSlope := 0, 0, 0

	for range *growthAA {
		for _, g := range runGrowth(t, srv) {
			if g.Err != nil {
				t.Fatalf("%s: %v", g.Title(), g.Err)
			}

			total++

			if g.Fit.Trend() != regress.Flat {
				kSlope++
			}

			if g.Trend() != regress.Flat {
				notFlat[g.Title()]++
				k++
			}
		}
	}

	lo, hi := wilson(k, total)
	slo, shi := wilson(kSlope, total)
	t.Logf("flat server, %d runs: %d of %d fits not flat (%.1f%%, 95%% CI %.1f%%–%.1f%%); per fit over %d runs: %v; on the slope's interval alone, without the minimum effect: %d (%.1f%%, 95%% CI %.1f%%–%.1f%%)",
		*growthAA, k, total, 100*float64(k)/float64(total), 100*lo, 100*hi, *growthAA, notFlat,
		kSlope, 100*float64(kSlope)/float64(total), 100*slo, 100*shi)

	// The interval's nominal rate is 5%; drift of a shared machine's load
	// over a run, indistinguishable from growth, raises it (7.5%, 95% CI
	// 6.4%–8.8%, measured at a load average of 24 on 2 cores). The bound
	// docs/workloads.md states is 10%.
	if lo > 0.10 {
		t.Errorf("false growth in %d of %d fits (95%% CI %.1f%%–%.1f%%), above the documented 10%%", k, total, 100*lo, 100*hi)
	}
}

// wilson is the 95% Wilson score interval of k successes in n.
func wilson(k, n int) (lo, hi float64) {
	const z = 1.959964

	p, nf := float64(k)/float64(n), float64(n)
	centre := (p + z*z/(2*nf)) / (1 + z*z/nf)
	half := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))

	return centre - half, centre + half
}
