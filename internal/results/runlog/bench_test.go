package runlog

import (
	"context"
	"fmt"
	"math/rand/v2"
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

// BenchmarkBuildManyOperations measures what finish does with the log of a
// run of 1,000 operations: a one-minute phase of one-second intervals,
// each operation with 20 latencies an interval (a run at concurrency 64
// against a fast server spreads about 20,000 operations a second over
// them). Its results keep Points(1000) = 12 points, so the builder merges
// them three times over.
func BenchmarkBuildManyOperations(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	ivs := make([]metrics.Interval, 60)

	for i := range ivs {
		iv := metrics.Interval{Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second)}

		for j := range 1000 {
			s := metrics.OpStats{Name: fmt.Sprintf("find_%d", j), Errors: map[string]int64{}, Hist: metrics.NewHistogram()}
			for range 20 {
				_ = s.Hist.RecordValue(int64(500 + rng.ExpFloat64()*3000))
				s.Count++
			}

			iv.Ops = append(iv.Ops, s)
		}

		ivs[i] = iv
	}

	path := writeLog(b, ivs, true)

	b.ReportAllocs()

	for b.Loop() {
		if _, err := Build(context.Background(), path); err != nil {
			b.Fatal(err)
		}
	}
}
