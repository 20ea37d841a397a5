package runlog

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// BenchmarkWriterInterval measures what streaming one interval costs the
// engine's ticker: encoding, masking and writing (with a sync every
// SyncEvery) one interval of 4 operations, each with 10,000 latencies
// spread over 100 µs – 10 ms. A run pays it once per interval, not per
// operation.
func BenchmarkWriterInterval(b *testing.B) {
	iv := metrics.Interval{Start: t0, End: t0.Add(time.Second)}

	for _, name := range []string{"a", "b", "c", "d"} {
		s := metrics.OpStats{Name: name, Errors: map[string]int64{}, Hist: metrics.NewHistogram()}
		for i := range 10_000 {
			_ = s.Hist.RecordValue(int64(100 + (i*7919)%9_900))
			s.Count++
		}

		iv.Ops = append(iv.Ops, s)
	}

	w, err := Create(filepath.Join(b.TempDir(), "b"+Suffix), Header{Workload: result.Workload{Name: "w"}, StartedAt: t0})
	if err != nil {
		b.Fatal(err)
	}

	w.StartPhase(PhaseStart{Phase: 0, Name: "run"})
	b.ReportAllocs()

	for i := 0; b.Loop(); i++ {
		w.Interval(0, i, iv, nil, nil, nil)
	}

	b.StopTimer()

	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkBuild measures building the results of a one-hour phase of
// one-second intervals of two operations (3,600 intervals, merged into
// 600 points).
func BenchmarkBuild(b *testing.B) {
	path := writeLog(b, intervals(3600), true)

	b.ReportAllocs()

	for b.Loop() {
		if _, err := Build(context.Background(), path); err != nil {
			b.Fatal(err)
		}
	}
}
