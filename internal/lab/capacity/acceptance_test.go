//go:build acceptance

package capacity_test

import (
	"context"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/lab/capacity"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestCapacityLoadDependentServer is the acceptance test. The test
// server holds each reply 2 ms plus 1 ms per other request in flight, so
// at a fixed rate λ (per ms) the steady latency is 1/(1−λ) ms: p99 < 10ms
// holds up to λ = 0.9, 900 ops/s. With N closed-loop workers the
// throughput is N/(N+1) per ms: the USL with σ = 0.5, κ = 0.
func TestCapacityLoadDependentServer(t *testing.T) {
	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.LoadDependent{Base: 2 * time.Millisecond, PerInFlight: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	plan := probePlan(t, ctx, srv.URI())

	slo, err := capacity.ParseSLO("p99 < 10ms")
	if err != nil {
		t.Fatal(err)
	}

	var steps []result.CapacityStep

	res, err := capacity.Run(ctx, capacity.Config{
		Plan:   plan,
		SLO:    []capacity.SLO{slo},
		Search: capacity.SearchOptions{Start: 400, Max: 10000, Growth: 2, Resolution: 0.05, MaxSteps: 14},
		// Two seconds measure 1,800 operations at 900/s: 18 beyond p99.
		StepDuration: 2 * time.Second, MaxStepDuration: 4 * time.Second, Warmup: 300 * time.Millisecond,
		Workers:  []int{1, 2, 4, 8, 16},
		Fit:      fitForTest,
		Progress: func(s result.CapacityStep) { steps = append(steps, s); t.Log(capacity.Describe(s)) },
	})
	if err != nil {
		t.Fatal(err)
	}

	c := res.Capacity
	t.Logf("verdict: %s; max rate %.1f CI %v", c.Verdict, c.MaxRate, c.MaxRateCI)

	// The sweep is judged whatever the search found: both are the issue's.
	if len(c.Sweep) != 5 {
		t.Errorf("sweep has %d steps, want 5", len(c.Sweep))
	} else {
		checkFit(t, c)
	}

	if !c.Confirmed {
		t.Fatalf("the capacity was not confirmed: %s", c.Verdict)
	}

	if c.MaxRate < 900*0.85 || c.MaxRate > 900*1.15 {
		t.Errorf("max sustainable rate %.1f ops/s, want 900 ± 15%%", c.MaxRate)
	}

	conf := c.Steps[len(c.Steps)-1]
	if conf.Kind != result.CapacityStepConfirm || !conf.Passed {
		t.Fatalf("the last step is not a passing confirmation: %+v", conf)
	}

	if conf.AchievedRate < c.MaxRateCI[0] || conf.AchievedRate > c.MaxRateCI[1] {
		t.Errorf("confirmation run's %.1f ops/s outside the CI %v", conf.AchievedRate, c.MaxRateCI)
	}

	if c.MaxRateCI[1]-c.MaxRateCI[0] > 0.5*c.MaxRate {
		t.Errorf("CI %v is wider than half the rate %.1f: it says nothing", c.MaxRateCI, c.MaxRate)
	}

	if c.Broke < 0 || c.Steps[c.Broke].Passed || c.Steps[c.Broke].OfferedRate <= c.MaxRate {
		t.Errorf("the step where the SLO broke is %d, want a failed step above the capacity", c.Broke)
	}
}
