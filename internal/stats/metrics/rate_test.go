package metrics

import (
	"testing"
	"time"
)

// histOf returns a histogram holding the given latencies (µs).
func histOf(t *testing.T, latencies ...int64) *Histogram {
	t.Helper()

	h := NewHistogram()
	for _, l := range latencies {
		if err := h.RecordValue(l); err != nil {
			t.Fatal(err)
		}
	}

	return h
}

func TestIntervalRate(t *testing.T) {
	twoSeconds := Interval{Start: t0, End: t0.Add(2 * time.Second)}

	for _, tc := range []struct {
		name string
		iv   Interval
		ops  []OpStats
		want Rate
	}{
		{name: "empty", iv: twoSeconds, want: Rate{}},
		{
			name: "sums operations and errors per second",
			iv:   twoSeconds,
			ops: []OpStats{
				{Count: 3, Docs: 10, Errors: map[string]int64{"timeout": 1, "network": 2}, Hist: histOf(t, 100, 200, 300)},
				{Count: 1, Docs: 4, Errors: map[string]int64{}, Hist: histOf(t, 5000)},
			},
			want: Rate{OpsPerSec: 2, DocsPerSec: 7, Errors: 3, WorstP99: 5000},
		},
		{
			name: "a unit is made of the operations and not counted again",
			iv:   twoSeconds,
			ops: []OpStats{
				{Count: 2, Docs: 2, Errors: map[string]int64{}, Hist: histOf(t, 100, 100)},
				{Count: 2, Docs: 2, Errors: map[string]int64{"x": 5}, Hist: histOf(t, 9000, 9000), Unit: "iteration"},
			},
			want: Rate{OpsPerSec: 1, DocsPerSec: 1, WorstP99: 100},
		},
		{
			name: "an operation that never succeeded has no p99",
			iv:   twoSeconds,
			ops:  []OpStats{{Errors: map[string]int64{"x": 4}, Hist: NewHistogram()}},
			want: Rate{Errors: 4},
		},
		{
			name: "an interval of no length has no rate",
			iv:   Interval{Start: t0, End: t0},
			ops:  []OpStats{{Count: 5, Docs: 5, Errors: map[string]int64{}, Hist: histOf(t, 7)}},
			want: Rate{WorstP99: 7},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iv := tc.iv
			iv.Ops = tc.ops

			got := iv.Rate()
			// The histogram resolves values within 0.1%.
			if d := got.WorstP99 - tc.want.WorstP99; d < -tc.want.WorstP99/1000 || d > tc.want.WorstP99/1000 {
				t.Errorf("WorstP99 = %v, want %v", got.WorstP99, tc.want.WorstP99)
			}

			got.WorstP99 = tc.want.WorstP99
			if got != tc.want {
				t.Errorf("Rate() = %+v, want %+v", got, tc.want)
			}
		})
	}
}
