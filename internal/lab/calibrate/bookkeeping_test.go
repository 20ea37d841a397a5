package calibrate

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// TestCount checks the k/n bookkeeping and its report with the Wilson
// score interval at 95%. The expected intervals are worked out by hand
// from Wilson's formula with z = 1.96: for 3 of 60, centre
// (0.05 + z²/120)/(1 + z²/60) = 0.0771 and half-width
// z·√(0.05·0.95/60 + z²/14400)/(1 + z²/60) = 0.0599; for 0 of 10 the
// interval is [0, (z²/10)/(1 + z²/10)] = [0, 0.2775], and 10 of 10 its
// mirror image.
func TestCount(t *testing.T) {
	t.Parallel()

	tests := []struct {
		k, n int
		want string
	}{
		{0, 0, "none measured"},
		{3, 60, "3 of 60 (5.0%, 95% CI 1.7%–13.7%)"},
		{0, 10, "0 of 10 (0.0%, 95% CI 0.0%–27.8%)"},
		{10, 10, "10 of 10 (100.0%, 95% CI 72.2%–100.0%)"},
	}

	for _, tt := range tests {
		var c Count
		for i := range tt.n {
			c.Add(i < tt.k)
		}

		if c.K != tt.k || c.N != tt.n {
			t.Errorf("%d successes of %d trials counted as %d of %d", tt.k, tt.n, c.K, c.N)
		}

		if got := c.String(); got != tt.want {
			t.Errorf("Count{%d, %d} = %q, want %q", tt.k, tt.n, got, tt.want)
		}
	}
}

// TestBinomUpper checks the upper binomial tail the resolvable difference
// is solved with, against values worked out by hand.
func TestBinomUpper(t *testing.T) {
	t.Parallel()

	tests := []struct {
		n, k int
		p    float64
		want float64
	}{
		{6, 6, 0.5, 1.0 / 64},
		{6, 0, 0.3, 1},
		{6, 7, 0.9, 0},
		{4, 1, 0.5, 15.0 / 16},
		// 9·0.75⁸·0.25 + 0.75⁹ = 3·0.75⁸.
		{9, 8, 0.75, 3 * math.Pow(0.75, 8)},
		{5, 3, 0, 0},
		{5, 3, 1, 1},
	}

	for _, tt := range tests {
		if got := binomUpper(tt.n, tt.k, tt.p); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("P(Binomial(%d, %v) ≥ %d) = %v, want %v", tt.n, tt.p, tt.k, got, tt.want)
		}
	}
}

// TestDefaults checks that a zero Config becomes the documented
// calibration, and that what the caller set is kept.
func TestDefaults(t *testing.T) {
	t.Parallel()

	var c Config
	if err := c.defaults(); err != nil {
		t.Fatal(err)
	}

	if c.Spec == nil || c.Spec.Name == "" {
		t.Fatalf("no built-in workload: %+v", c.Spec)
	}

	if c.Delay != time.Millisecond || c.Experiments != 10 || c.AA != 10 || c.AB != 10 || c.GatePairs != 10 {
		t.Errorf("delay %s, experiments %d, A/A %d, A/B %d, gate pairs %d; want 1ms and 10 each",
			c.Delay, c.Experiments, c.AA, c.AB, c.GatePairs)
	}

	if c.Rounds != workload.DefaultRounds || c.Trial != time.Second || c.RunsPerSide != analysis.CompareMinRuns {
		t.Errorf("rounds %d, trial %s, runs a side %d", c.Rounds, c.Trial, c.RunsPerSide)
	}

	if len(c.Gates) != len(DefaultGates) {
		t.Fatalf("gates %+v, want the %d default ones", c.Gates, len(DefaultGates))
	}

	for i, g := range c.Gates {
		if g.Expr != DefaultGates[i] {
			t.Errorf("gate %d is %q, want %q", i, g.Expr, DefaultGates[i])
		}
	}

	// Experiments sets the three kinds that are not set; a kind set
	// keeps its number, and so does everything else given.
	set := Config{Experiments: 4, AB: 7, Rounds: 9, Trial: 3 * time.Second, RunsPerSide: 5, Delay: 2 * time.Millisecond, Gates: []analysis.Gate{}}
	if err := set.defaults(); err != nil {
		t.Fatal(err)
	}

	if set.AA != 4 || set.AB != 7 || set.GatePairs != 4 || set.Rounds != 9 || set.Trial != 3*time.Second ||
		set.RunsPerSide != 5 || set.Delay != 2*time.Millisecond || len(set.Gates) != 0 {
		t.Errorf("a config that sets its numbers became %+v", set)
	}
}

// trialResult is one trial's result: a run phase with one operation.
func trialResult(opsPerSec, p50, p99 float64) *result.Result {
	return &result.Result{Phases: []result.Phase{{
		Name: result.PhaseRun,
		Operations: []result.Operation{{
			Name: "get", Count: 1000, OpsPerSec: opsPerSec,
			LatencyUS: result.Latency{P50: p50, P99: p99},
		}},
	}}}
}

// abMatrix is a matrix of one variant on targets a and b over rounds
// rounds, as calibration runs them: b's trial of a round is a's scaled by
// slower (latencies) and its throughput divided by it.
func abMatrix(rounds int, slower float64) *result.Matrix {
	m := &result.Matrix{
		Targets:  []result.MatrixTarget{{Name: "a"}, {Name: "b"}},
		Variants: []string{"one"},
		Rounds:   rounds,
	}

	for r := range rounds {
		// Each round has its own level, so that the sign test pairs
		// rounds rather than pooling them.
		p50 := 100 + 10*float64(r)
		m.Trials = append(m.Trials,
			result.Trial{Target: "a", Variant: "one", Round: r, Result: trialResult(1000, p50, 4*p50)},
			result.Trial{Target: "b", Variant: "one", Round: r, Result: trialResult(1000/slower, slower*p50, slower*4*p50)})
	}

	return m
}

// TestCountVerdicts checks the A/A bookkeeping: one verdict per metric of
// the cross-target comparison, counted in total and per metric, with the
// differences counted as false positives.
func TestCountVerdicts(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name      string
		slower    float64
		wantDiffs int
	}{
		// The same numbers on both: no verdict may say "difference".
		{"identical", 1, 0},
		// b twice as slow in every round of 8: every metric differs.
		{"b twice as slow", 2, 3},
	}

	for _, tt := range tests {
		c := &calibration{rep: &Report{AAByMetric: map[string]*Count{}}}

		diffs := c.countVerdicts(abMatrix(8, tt.slower))
		if diffs != tt.wantDiffs || c.rep.AA != (Count{K: tt.wantDiffs, N: 3}) || c.lastVerdicts != 3 {
			t.Errorf("%s: %d differences, A/A %+v, last %d; want %d of 3", tt.name, diffs, c.rep.AA, c.lastVerdicts, tt.wantDiffs)
		}

		for _, metric := range analysis.MatrixMetrics {
			got := c.rep.AAByMetric[metric.Name]
			if got == nil || got.N != 1 || (got.K == 1) != (tt.wantDiffs > 0) {
				t.Errorf("%s: %s counted %+v", tt.name, metric.Name, got)
			}
		}

		// A second experiment adds to the counts.
		c.countVerdicts(abMatrix(8, tt.slower))

		if c.rep.AA.N != 6 || c.rep.AAByMetric["p50"].N != 2 {
			t.Errorf("%s: after two experiments A/A %+v, p50 %+v", tt.name, c.rep.AA, c.rep.AAByMetric["p50"])
		}
	}
}

// TestPlantedFound checks what counts as finding a planted difference: a
// p50 "difference" with b the slower.
func TestPlantedFound(t *testing.T) {
	t.Parallel()

	var j analysis.Judging

	if found, ratio := plantedFound(abMatrix(8, 1.5), j); !found || math.Abs(ratio-1.5) > 1e-9 {
		t.Errorf("b 1.5× slower: found %v, ratio %v", found, ratio)
	}

	if found, ratio := plantedFound(abMatrix(8, 1), j); found || ratio != 1 {
		t.Errorf("no difference: found %v, ratio %v", found, ratio)
	}

	// b faster is a difference, but the wrong way.
	if found, ratio := plantedFound(abMatrix(8, 0.5), j); found || !(ratio < 1) {
		t.Errorf("b faster: found %v, ratio %v", found, ratio)
	}

	// A matrix without a cross-target verdict finds nothing.
	if found, ratio := plantedFound(&result.Matrix{}, j); found || !math.IsNaN(ratio) {
		t.Errorf("empty matrix: found %v, ratio %v", found, ratio)
	}
}

// TestP50LogRatios checks the per-round ratios the resolvable difference
// is computed from: rounds missing a side, or with no operations, are left
// out; the others are log(b/a), sorted.
func TestP50LogRatios(t *testing.T) {
	t.Parallel()

	m := abMatrix(3, 2)
	// Round 3 has only a; round 4's b measured nothing.
	m.Trials = append(m.Trials,
		result.Trial{Target: "a", Variant: "one", Round: 3, Result: trialResult(1000, 100, 400)},
		result.Trial{Target: "a", Variant: "one", Round: 4, Result: trialResult(1000, 100, 400)},
		result.Trial{Target: "b", Variant: "one", Round: 4, Result: &result.Result{}})
	m.Trials[0].Result.Phases[0].Operations[0].LatencyUS.P50 = 400 // round 0: b/a = 200/400

	got := p50LogRatios(m)
	want := []float64{math.Log(0.5), math.Log(2), math.Log(2)}

	if len(got) != len(want) {
		t.Fatalf("ratios %v, want %v", got, want)
	}

	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("ratios %v, want %v", got, want)
		}
	}

	if p50s := trialP50s(m); len(p50s) != 8 || p50s[0] != 400 || p50s[1] != 200 {
		t.Errorf("trial p50s %v: want the 8 trials that measured, in order", p50s)
	}
}

// TestReportText checks the report's wording for each state of its
// figures: not measured, too noisy, an interval whose top is unbounded.
func TestReportText(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		r       Report
		resolve string
		summary string
	}{
		{
			"nothing measured",
			Report{Resolve: math.NaN(), ResolveLo: math.NaN(), ResolveHi: math.NaN()},
			"not measured (no A/A rounds with values)",
			`On this machine: false "difference" not measured of verdicts (stated ≤ 0.0%), gate false failures not measured.`,
		},
		{
			"too noisy",
			Report{Resolve: math.Inf(1), AA: Count{1, 4}, Stated: 2.0 / 64, Gate: Count{0, 2}},
			"none below 10× (the rounds are too noisy)",
			`On this machine: false "difference" 25.0% (1/4) of verdicts (stated ≤ 3.1%), gate false failures 0.0% (0/2).`,
		},
		{
			"bounded",
			Report{Resolve: 0.1, ResolveLo: 0.05, ResolveHi: 0.2, Power: []Power{{Effect: 0.2, Found: Count{3, 4}}}},
			"10.0% (95% CI 5.0%–20.0%)",
			`On this machine: false "difference" not measured of verdicts (stated ≤ 0.0%), gate false failures not measured, power for a 20% p50 difference 75.0% (3/4).`,
		},
		{
			"unbounded top",
			Report{Resolve: 0.1, ResolveLo: 0.05, ResolveHi: math.Inf(1)},
			"10.0% (95% CI 5.0%–over 1000%)",
			"",
		},
		{
			"no interval",
			Report{Resolve: 0.1, ResolveLo: math.NaN(), ResolveHi: math.NaN()},
			"10.0%",
			"",
		},
	}

	for _, tt := range tests {
		if got := resolveText(&tt.r); got != tt.resolve {
			t.Errorf("%s: resolvable %q, want %q", tt.name, got, tt.resolve)
		}

		if tt.summary != "" {
			if got := tt.r.Summary(); got != tt.summary {
				t.Errorf("%s: summary\n%q, want\n%q", tt.name, got, tt.summary)
			}
		}
	}
}

// TestWriteText checks that the text names every experiment and ends with
// the summary, and that a planted effect that could not be measured says
// why.
func TestWriteText(t *testing.T) {
	t.Parallel()

	cfg := Config{Effects: []float64{0.2}}
	if err := cfg.defaults(); err != nil {
		t.Fatal(err)
	}

	r := &Report{
		Config: cfg, Against: "mongodb://example:27017",
		AA:         Count{1, 30},
		AAByMetric: map[string]*Count{"p99": {1, 10}, "p50": {0, 10}, "throughput": {0, 10}},
		Stated:     2.0 / 64,
		Resolve:    0.1, ResolveLo: math.NaN(), ResolveHi: math.NaN(),
		Gate: Count{0, 10},
	}

	var b strings.Builder
	r.WriteText(&b)
	text := b.String()

	for _, want := range []string{
		"Calibration against mongodb://example:27017\n",
		`"difference" in 1 of 30`,
		"Planted difference: not measured",
		"Smallest p50 increase",
		"failed in 0 of 10 (",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}

	// Metrics in name order.
	if p50, p99, tp := strings.Index(text, "    p50 "), strings.Index(text, "    p99 "), strings.Index(text, "    throughput "); p50 <= 0 || p99 <= p50 || tp <= p99 {
		t.Errorf("per-metric lines not sorted by name:\n%s", text)
	}

	lines := strings.Split(strings.TrimSpace(text), "\n")
	if last := lines[len(lines)-1]; last != r.Summary() {
		t.Errorf("last line %q, want the summary %q", last, r.Summary())
	}
}
