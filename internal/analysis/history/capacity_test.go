package history

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

// capacityRuns are n capacity searches of workload w under slo whose
// maximum sustainable rate is 1000 ops/s, times step from run at on, each
// with 3% noise and a ±4% interval.
func capacityRuns(w, slo string, n, at int, step float64, seed uint64) []Run {
	rng := rand.New(rand.NewPCG(seed, seed))
	runs := make([]Run, n)

	for i := range runs {
		level := 1000.0
		if i >= at {
			level *= step
		}

		rate := level * (1 + 0.03*rng.NormFloat64())
		r := mkRun(w, i+1, 1, "", 2000, int64(10*rate), 0)
		r.res.Capacity = &result.Capacity{
			SLO: []string{slo}, MaxRate: rate, MaxRateCI: [2]float64{0.96 * rate, 1.04 * rate}, Confirmed: true, Broke: -1,
		}
		runs[i] = r
	}

	return runs
}

// Capacity searches make series of their own, keyed by their objectives
// too, whose one metric is the maximum sustainable rate with its interval;
// a drop of it is a change for the worse and a max_rate gate's regression,
// which no operation's gate selects.
func TestCapacitySeries(t *testing.T) {
	runs := capacityRuns("a", "p99 < 10ms", 16, 10, 0.7, 1)
	runs = append(runs, capacityRuns("a", "p99 < 20ms", 4, 16, 1, 2)...) // another objective: another series
	runs = append(runs, stepped("a", 4, 4, 1, 3)...)                     // plain runs of the same workload

	series := Build(runs, nil, Options{})
	if len(series) != 3 {
		t.Fatalf("%d series, want 3: the two objectives' capacities and the runs", len(series))
	}

	var capa *Series

	for i, s := range series {
		switch {
		case s.Key.Kind == KindCapacity && len(s.Runs) == 16:
			capa = &series[i]
		case s.Key.Kind == "" && len(s.Metrics) != len(DefaultMetrics):
			t.Errorf("the runs' series has %d metrics, want the %d of an operation", len(s.Metrics), len(DefaultMetrics))
		}
	}

	if capa == nil {
		t.Fatalf("no capacity series of 16 runs among %v", series)
	}

	if len(capa.Metrics) != 1 || capa.Metrics[0].Metric != MaxRate {
		t.Fatalf("capacity metrics %+v, want max_rate alone", capa.Metrics)
	}

	mt := capa.Metrics[0]
	for i, r := range capa.Runs {
		c := r.res.Capacity
		if float64(mt.Values[i]) != c.MaxRate || float64(mt.Low[i]) != c.MaxRateCI[0] || float64(mt.High[i]) != c.MaxRateCI[1] {
			t.Errorf("run %d: %v [%v, %v], want the file's %v %v", i+1, mt.Values[i], mt.Low[i], mt.High[i], c.MaxRate, c.MaxRateCI)
		}
	}

	if len(mt.Changes) != 1 || mt.Changes[0].Run != 10 || !mt.Changes[0].Worse {
		t.Fatalf("changes %+v, want one for the worse at run 11", mt.Changes)
	}

	for _, c := range []struct {
		gate string
		want int
	}{
		{"max_rate -10%", 1},
		{"max_rate -40%", 0}, // a 30% drop is within it
		{"max_rate +10%", 0}, // a gate on a rise
		{"throughput -10%", 0},
	} {
		g, err := ParseGate(c.gate)
		if err != nil {
			t.Fatalf("%q: %v", c.gate, err)
		}

		regs, err := Regressions(series, g, 2*DefaultMinSize)
		if err != nil || len(regs) != c.want {
			t.Errorf("%q: %d regressions (%v), want %d", c.gate, len(regs), err, c.want)
		}
	}
}

// A search that confirmed no rate, or that the client limited (its rate a
// lower bound), has no value: neither would be a measurement of the
// server, and a lower bound would read as a drop.
func TestCapacityWithoutAMeasurement(t *testing.T) {
	runs := capacityRuns("a", "p99 < 10ms", 3, 3, 1, 1)
	runs[1].res.Capacity.ClientLimited = true
	runs[2].res.Capacity.Confirmed, runs[2].res.Capacity.MaxRate = false, 0

	mt := Build(runs, nil, Options{})[0].Metrics[0]
	if math.IsNaN(float64(mt.Values[0])) || !math.IsNaN(float64(mt.Values[1])) || !math.IsNaN(float64(mt.Values[2])) || !math.IsNaN(float64(mt.Low[1])) {
		t.Errorf("values %v, low %v: want the first run's rate and none for the others", mt.Values, mt.Low)
	}
}

func TestParseGate(t *testing.T) {
	for _, bad := range []string{"max_rate", "max_rate 10%", "max_rates -10%", "capacity -10%"} {
		if _, err := ParseGate(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}

	g, err := ParseGate(" max_rate -12.5% ")
	if err != nil || !g.Capacity || g.Up || g.Percent != 12.5 {
		t.Errorf("max_rate -12.5%%: %+v, %v", g, err)
	}
}
