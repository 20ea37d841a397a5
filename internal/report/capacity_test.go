package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/base/golden"
	"github.com/mongobench/mongobench/internal/results/result"
)

// capacityFixture is a search that found 880 ops/s under p99 < 10ms and a
// fitted sweep, with hostile text where a results file carries text.
func capacityFixture() *result.Capacity {
	step := func(kind string, rate, p99 float64, passed bool) result.CapacityStep {
		s := result.CapacityStep{
			Kind: kind, OfferedRate: rate, AchievedRate: rate * 0.999, DurationS: 2, Count: int64(2 * rate),
			P50US: p99 / 2, P99US: p99, P999US: p99 * 1.2, ClientCPU: 0.1, Passed: passed,
		}
		if !passed {
			s.Cause, s.Why = "latency", "p99 < 10ms measured "+hostile
		}

		return s
	}

	return &result.Capacity{
		SLO:       []string{"p99 < 10ms", "get:error_rate < 0.1%"},
		MaxRate:   880,
		MaxRateCI: [2]float64{860, 920},
		Confirmed: true,
		Verdict:   "maximum sustainable rate 880.0 ops/s; the SLO broke at 920.0 ops/s (latency: " + hostile + ")",
		Steps: []result.CapacityStep{
			step("step", 400, 3300, true), step("step", 800, 5000, true), step("step", 1600, 64000, false),
			step("step", 1200, 40000, false), step("step", 1000, 15000, false), step("step", 900, 10500, false),
			step("step", 850, 7000, true), step("step", 880, 8500, true), step("confirm", 880, 8700, true),
		},
		Broke: 5,
		Sweep: []result.CapacityStep{
			{Kind: "workers", Workers: 1, AchievedRate: 490, P99US: 2200, Passed: true},
			{Kind: "workers", Workers: 2, AchievedRate: 660, P99US: 3200, Passed: true},
			{Kind: "workers", Workers: 4, AchievedRate: 795, P99US: 5200, Passed: true},
			{Kind: "workers", Workers: 8, AchievedRate: 885, P99US: 9400, Passed: true},
			{Kind: "workers", Workers: 16, AchievedRate: 935, P99US: 17500, Passed: false, Cause: "latency", Why: "p99"},
		},
		Fit: &result.USLFit{
			Lambda: 495, Sigma: 0.49, Kappa: 0.0001, LambdaCI: [2]float64{480, 510},
			SigmaCI: [2]float64{0.45, 0.53}, KappaCI: [2]float64{0, 0.0004}, PeakN: 71, PeakX: 990, R2: 0.998, Supported: true,
		},
	}
}

func TestWriteCapacityGolden(t *testing.T) {
	var b bytes.Buffer

	WriteCapacity(&b, capacityFixture())
	golden.Check(t, "testdata/capacity.txt.golden", b.Bytes())

	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Maximum sustainable rate: 880.0 ops/s (95% CI 860.0–920.0 ops/s)") {
		t.Errorf("last line %q, want the maximum sustainable rate with its CI", last)
	}
}

func TestCapacityLineWithoutACapacity(t *testing.T) {
	if got := CapacityLine(&result.Capacity{Broke: 0}); !strings.Contains(got, "none found") {
		t.Errorf("%q", got)
	}

	if got := CapacityLine(&result.Capacity{MaxRate: 200, ClientLimited: true}); !strings.Contains(got, "at least 200.0 ops/s") {
		t.Errorf("%q", got)
	}
}

func TestCapacitySectionInTheHTMLReport(t *testing.T) {
	res := &result.Result{
		SchemaVersion: result.SchemaVersion, ResultKind: result.KindRun, Status: result.StatusCompleted, StartedAt: t0,
		Workload: result.Workload{Name: "probe"},
		Phases: []result.Phase{fakePhase("run", "rate", t0, 2, func(int) []result.Operation {
			return []result.Operation{fakeOp("get", 880, 1, 4000, nil)}
		})},
		Capacity: capacityFixture(),
	}

	var b bytes.Buffer
	if err := (Options{}).Render(&b, []*result.Result{res}); err != nil {
		t.Fatal(err)
	}

	page := b.String()

	for _, want := range []string{
		`id="r1-capacity"`,
		"Maximum sustainable rate: 880.0 ops/s (95% CI 860.0–920.0 ops/s)",
		"Latency against achieved throughput", "SLO 10ms", "capacity 880 ops/s",
		"Throughput against workers", "USL fit: σ 0.490",
		"<polyline", // the fitted curve
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	if strings.Contains(page, hostile) || strings.Contains(page, "NaN") {
		t.Error("the capacity section holds unescaped text or NaN")
	}

	// Every step is a p99 square, besides the two pictures' frames and the interval.
	_, section, _ := strings.Cut(page, `id="r1-capacity"`)
	section, _, _ = strings.Cut(section, "</section>")

	if n := strings.Count(section, `<rect x=`) - 3; n != len(res.Capacity.Steps) {
		t.Errorf("%d p99 marks, want one per step (%d)", n, len(res.Capacity.Steps))
	}
}

func TestCapacityRatio(t *testing.T) {
	base := &result.Capacity{MaxRate: 1000, MaxRateCI: [2]float64{950, 1050}}
	same := &result.Capacity{MaxRate: 1000, MaxRateCI: [2]float64{950, 1050}}

	r, ci, ok := CapacityRatio(base, same)
	if !ok || r != 1 || ci[0] >= 1 || ci[1] <= 1 {
		t.Fatalf("equal capacities: %v %v %v, want 1 inside its CI", r, ci, ok)
	}

	// Independent intervals add up: the ratio's is wider than either's.
	if w := ci[1] / ci[0]; w <= 1050.0/950 {
		t.Errorf("ratio CI %v no wider than one capacity's", ci)
	}

	double := &result.Capacity{MaxRate: 2000, MaxRateCI: [2]float64{1900, 2100}}
	if r, ci, _ := CapacityRatio(base, double); r != 2 || ci[0] <= 1 || ci[1] < 2 {
		t.Errorf("doubled capacity: %v %v, want 2 with a CI above 1", r, ci)
	}

	if _, ci, ok := CapacityRatio(base, &result.Capacity{MaxRate: 500, ClientLimited: true}); !ok || ci != [2]float64{} {
		t.Errorf("client-limited side: CI %v, want none", ci)
	}

	if _, _, ok := CapacityRatio(base, &result.Capacity{}); ok {
		t.Error("a side without a capacity gave a ratio")
	}
}

// A search where nothing succeeded, with a zero limit, still renders: no
// axis without a range, no endless ticks.
func TestCapacitySectionOfNothing(t *testing.T) {
	c := &result.Capacity{
		SLO: []string{"p99 < 0ms", "error_rate < 1%"}, Broke: 0,
		Steps: []result.CapacityStep{{Kind: result.CapacityStepRate, OfferedRate: 10, Errors: 20, Cause: "errors", Why: "all failed"}},
		Sweep: []result.CapacityStep{{Kind: result.CapacityStepWorkers, Workers: 1}},
	}

	html := string(capacityHTML("r1", c))
	if !strings.Contains(html, "none found within the SLO") || strings.Contains(html, "NaN") || strings.Contains(html, "Inf") {
		t.Errorf("section:\n%s", html)
	}
}

func TestCapacityVerdict(t *testing.T) {
	for _, c := range []struct {
		ci   [2]float64
		want string
	}{
		{[2]float64{1.1, 1.5}, "more capacity"},
		{[2]float64{0.5, 0.9}, "less capacity"},
		{[2]float64{0.9, 1.2}, "~ no significant difference"},
	} {
		if got := capacityVerdict(c.ci); got != c.want {
			t.Errorf("%v: %q, want %q", c.ci, got, c.want)
		}
	}
}
