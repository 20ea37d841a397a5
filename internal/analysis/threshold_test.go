package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// recordedPhase records, through the metrics registry, 2 s of get (1 to
// 100 ms, one each) and put (200 successes of 10 ms, 2 timeouts) and an
// idle operation that never succeeded, and builds the phase from it.
func recordedPhase(t *testing.T, name string) result.Phase {
	t.Helper()

	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reg := metrics.NewRegistry([]string{"get", "put", "idle"})
	reg.Reset(start)

	h := reg.NewHandle()
	for i := 1; i <= 100; i++ {
		h.Record(0, time.Duration(i)*time.Millisecond, 1, "")
	}

	for range 200 {
		h.Record(1, 10*time.Millisecond, 1, "")
	}

	h.Record(1, time.Millisecond, 0, "timeout")
	h.Record(1, time.Millisecond, 0, "timeout")
	h.Record(2, time.Millisecond, 0, "network")

	reg.Tick(start.Add(2 * time.Second))

	p, err := result.NewPhase(name, 0, reg.Intervals())
	if err != nil {
		t.Fatal(err)
	}

	p.Model = "closed"

	return p
}

// rules parses a thresholds section through the workload parser, as run
// does.
func rules(t *testing.T, section string) []workload.ThresholdRule {
	t.Helper()

	src := `name: t
database: bench
collections: [{name: c}]
phases:
  - {name: warm, duration: 1s}
  - {name: run, duration: 2s}
operations:
  - {name: get, op: findOne, collection: c}
  - {name: put, op: insertOne, collection: c, document: {a: 1}}
  - {name: idle, op: findOne, collection: c}
thresholds:
` + section

	s, errs := workload.Parse("w.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	return s.Thresholds.Rules
}

func TestCheckThresholds(t *testing.T) {
	res := &result.Result{}
	res.AddPhase(recordedPhase(t, "warm"))
	res.AddPhase(recordedPhase(t, "run"))

	out := CheckThresholds(res, rules(t, `  get: ["p50 < 40ms", "p50 <= 60ms", "p99.9 < 100ms", "max >= 100ms", "mean < 50ms"]
  put: ["error_rate < 1%", "error_rate < 0.5%", "throughput >= 100"]
  all: ["throughput > 150", "p99 < 20ms"]
  idle: ["p99 < 1s", "error_rate <= 100%"]
  get@warm: "p50 < 1s"
`))

	var got []string
	for _, o := range out {
		got = append(got, o.Text)
	}

	// get holds 1…100 ms once each: p50 is 50 ms, p99.9 and max 100 ms,
	// the mean 50.5 ms, each as the histogram reports it (the highest value
	// of its bucket, within 0.1%). put failed 2 of
	// 202. All together: 300 successes in 2 s, and p99 of the merged
	// histogram is get's slow end.
	want := []string{
		"✗ get p50 < 40ms (p50 = 50.02ms)",
		"✓ get p50 <= 60ms (p50 = 50.02ms)",
		"✗ get p99.9 < 100ms (p99.9 = 100.03ms)",
		"✓ get max >= 100ms (max = 100.03ms)",
		"✗ get mean < 50ms (mean = 50.50ms)",
		"✓ put error_rate < 1% (error_rate = 0.99%)",
		"✗ put error_rate < 0.5% (error_rate = 0.99%)",
		"✓ put throughput >= 100/s (throughput = 100.0/s)",
		"✗ all throughput > 150/s (throughput = 150.0/s)",
		"✗ all p99 < 20ms (p99 = 97.02ms)",
		"✗ idle p99 < 1s (no successful operation to take a latency from)",
		"✓ idle error_rate <= 100% (error_rate = 100%)",
		"✓ get@warm p50 < 1s (p50 = 50.02ms)",
	}

	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("outcomes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	if n := ThresholdsFailed(out); n != 7 {
		t.Errorf("%d failed, want 7", n)
	}

	if o := out[10]; o.Measurable || o.Passed || o.Phase != "run" || o.Operation != "idle" {
		t.Errorf("unmeasurable outcome %+v", o)
	}

	if o := out[12]; o.Phase != "warm" || !o.Passed || o.Limit != 1e6 {
		t.Errorf("warm outcome %+v", o)
	}

	// A phase the results do not have fails the threshold, saying so.
	res.Phases = res.Phases[1:]
	if o := CheckThresholds(res, rules(t, "  get@warm: \"p50 < 1s\"\n"))[0]; o.Passed || o.Text != `✗ get@warm p50 < 1s (no phase "warm" in the results)` {
		t.Errorf("missing phase: %+v", o)
	}
}
