package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/threshold"
)

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// mkRun is a completed run of workload w, run i of a series, whose read
// operation has latency p50 µs (every other latency derived from it) and
// count successes and failed errors over 10 s.
func mkRun(w string, i, concurrency int, version string, p50 float64, count, failed int64) Run {
	op := result.Operation{
		Name: "read", Count: count, Errors: map[string]int64{"timeout": failed}, OpsPerSec: float64(count) / 10,
		LatencyUS: result.Latency{Mean: p50 + 10, P50: p50, P90: 2 * p50, P95: 3 * p50, P99: 4 * p50, P999: 5 * p50, Max: 6 * p50},
	}
	res := &result.Result{
		Workload:    result.Workload{Name: w, Spec: map[string]any{"name": w, "run": map[string]any{"duration": "10s"}}},
		Target:      result.Target{Kind: "uri", ServerVersion: version},
		StartedAt:   t0.Add(time.Duration(i) * time.Hour),
		Concurrency: concurrency,
		Status:      result.StatusCompleted,
		Phases:      []result.Phase{{Name: result.PhaseRun, DurationS: 10, Operations: []result.Operation{op}}},
		Label:       fmt.Sprintf("v%d", i),
	}

	return Run{File: fmt.Sprintf("%s-%02d.json", w, i), Label: res.Label, StartedAt: res.StartedAt, res: res}
}

func metricOf(t *testing.T, s Series, name string) Metric {
	t.Helper()

	for _, m := range s.Metrics {
		if m.Operation == "read" && m.Metric == name {
			return m
		}
	}

	t.Fatalf("series %s has no read %s", s.Key, name)

	return Metric{}
}

func TestBuildGroupsAndOrders(t *testing.T) {
	runs := []Run{
		mkRun("a", 2, 4, "7.0", 100, 1000, 0),
		mkRun("a", 1, 4, "7.0", 100, 1000, 0),
		mkRun("a", 3, 4, "8.0", 100, 1000, 0), // a new server version: same series
		mkRun("a", 4, 8, "7.0", 100, 1000, 0), // other concurrency: its own
		mkRun("b", 1, 4, "7.0", 100, 1000, 0), // other workload: its own
	}
	runs[4].res.Client = &result.Client{Stack: "node-driver"}

	series := Build(runs, nil, Options{})
	if len(series) != 3 {
		t.Fatalf("%d series, want 3", len(series))
	}

	var sizes []int

	for _, s := range series {
		sizes = append(sizes, len(s.Runs))

		for i := 1; i < len(s.Runs); i++ {
			if s.Runs[i].StartedAt.Before(s.Runs[i-1].StartedAt) {
				t.Errorf("series %s: runs out of order", s.Key)
			}
		}

		if s.Key.Workload == "b" && s.Key.Client != "node-driver" {
			t.Errorf("series b: client %q", s.Key.Client)
		}
	}

	total := 0
	for _, n := range sizes {
		total += n
	}

	if total != 5 || !slices.Contains(sizes, 3) {
		t.Errorf("series sizes %v; want 3, 1, 1 in some order", sizes)
	}
}

func TestValuesFromTheRun(t *testing.T) {
	r := mkRun("a", 1, 1, "", 100, 900, 100)
	s := Build([]Run{r}, []threshold.Metric{{Kind: threshold.Max}}, Options{})[0]

	for name, want := range map[string]float64{
		"throughput": 90, "mean": 110, "p50": 100, "p90": 200, "p95": 300, "p99": 400, "p99.9": 500,
		"error_rate": 10, "max": 600,
	} {
		if got := float64(metricOf(t, s, name).Values[0]); got != want {
			t.Errorf("%s = %v; want %v", name, got, want)
		}
	}

	// No success: no latency, but an error rate.
	r = mkRun("a", 1, 1, "", 100, 0, 5)
	s = Build([]Run{r}, nil, Options{})[0]

	if v := metricOf(t, s, "p50").Values[0]; !math.IsNaN(float64(v)) {
		t.Errorf("p50 of a run without a success = %v; want NaN", v)
	}

	if v := metricOf(t, s, "error_rate").Values[0]; v != 100 {
		t.Errorf("error rate of a run with only failures = %v; want 100", v)
	}
}

// series of n runs of workload w with p50 = base·(1 + 3% noise), times
// step from run at on.
func stepped(w string, n, at int, step float64, seed uint64) []Run {
	rng := rand.New(rand.NewPCG(seed, seed))
	runs := make([]Run, n)

	for i := range runs {
		level := 1000.0
		if i >= at {
			level *= step
		}

		runs[i] = mkRun(w, i+1, 1, "", level*(1+0.03*rng.NormFloat64()), 1000, 0)
	}

	return runs
}

func TestChangeReported(t *testing.T) {
	s := Build(stepped("a", 20, 12, 1.5, 1), nil, Options{})[0]
	m := metricOf(t, s, "p99")

	if len(m.Changes) != 1 {
		t.Fatalf("p99 change points %+v; want one", m.Changes)
	}

	c := m.Changes[0]
	if c.Run != 12 || c.File != "a-13.json" || c.Label != "v13" || !c.Worse {
		t.Errorf("change %+v; want at run index 12, a-13.json, v13, worse", c)
	}

	// p99 is 4 × p50 ≈ 4000 before, 6000 after.
	if math.Abs(c.Before/4000-1) > 0.05 || math.Abs(c.After/6000-1) > 0.05 {
		t.Errorf("levels %v → %v; want about 4000 → 6000", c.Before, c.After)
	}

	if !(c.RatioLo <= 1.5 && 1.5 <= c.RatioHi && c.RatioLo > 1.3 && c.RatioHi < 1.7) {
		t.Errorf("ratio %v, CI %v–%v; want an interval around 1.5", c.Ratio, c.RatioLo, c.RatioHi)
	}

	// Throughput did not change (count constant).
	if tp := metricOf(t, s, "throughput"); len(tp.Changes) != 0 {
		t.Errorf("throughput change points %+v; want none", tp.Changes)
	}
}

func TestRegressions(t *testing.T) {
	p99Up, _ := ParseGate("read:p99 +20%")
	p99Up40, _ := ParseGate("p99 +60%")
	p99Down, _ := ParseGate("p99 -10%")
	other, _ := ParseGate("write:p99 +10%")

	worse := Build(stepped("a", 20, 14, 1.5, 2), []threshold.Metric{p99Up.Metric}, Options{})
	flat := Build(stepped("a", 20, 20, 1, 3), nil, Options{})
	better := Build(stepped("a", 20, 14, 0.6, 4), nil, Options{})
	old := Build(stepped("a", 30, 10, 1.5, 5), nil, Options{}) // 20 runs ago

	for _, c := range []struct {
		name   string
		series []Series
		sel    Gate
		want   int
	}{
		{"worse", worse, p99Up, 1},
		{"worse but less than the limit", worse, p99Up40, 0},
		{"worse, gate on a decrease", worse, p99Down, 0},
		{"flat", flat, p99Up, 0},
		{"better", better, p99Up, 0},
		{"better, gate on a decrease", better, p99Down, 1},
		{"an old change", old, p99Up, 0},
	} {
		got, err := Regressions(c.series, c.sel, 2*DefaultMinSize)
		if err != nil || len(got) != c.want {
			t.Errorf("%s: %d regressions (%v); want %d", c.name, len(got), err, c.want)
		}
	}

	if got, _ := Regressions(worse, p99Up, 2*DefaultMinSize); len(got) == 1 && (got[0].Change.File != "a-15.json" || got[0].Change.Before > got[0].Change.After) {
		t.Errorf("regression %+v; want one starting at a-15.json", got[0].Change)
	}

	if _, err := Regressions(worse, other, 8); err == nil {
		t.Error("a gate on an operation no series has: no error")
	}
}

func TestNoise(t *testing.T) {
	p := &result.Phase{Name: "run", DurationS: 5}

	for i, p50 := range []float64{100, 110, 90, 100, 130} {
		start := t0.Add(time.Duration(i) * time.Second)
		p.Intervals = append(p.Intervals, result.Interval{Start: start, End: start.Add(time.Second), Operations: []result.Operation{
			{Name: "read", Count: 10, LatencyUS: result.Latency{P50: p50}},
		}})
	}

	// Median 100; deviations 0 10 10 0 30, their median 10: 10%.
	if got := noiseOf(p, "read", threshold.Metric{Kind: threshold.Percentile, Percent: 50}); math.Abs(got-0.1) > 1e-12 {
		t.Errorf("noise = %v; want 0.1", got)
	}

	p.Intervals = p.Intervals[:2]
	if got := noiseOf(p, "read", threshold.Metric{Kind: threshold.Percentile, Percent: 50}); !math.IsNaN(got) {
		t.Errorf("noise of 2 intervals = %v; want NaN", got)
	}
}
