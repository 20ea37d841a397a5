package runner

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// TestReplayTimelineVirtualTime runs a two-connection timeline at speed 2
// in virtual time against stand-in operations (a takes 10 ms, b 100 ms):
//
//	connection 0: a at 0, b at 100 ms, a at 120 ms → due 0, 50, 60 ms
//	connection 1: b at 50 ms                     → due 25 ms
//
// Each starts when due, except connection 0's last a, due at 60 ms while
// its b runs until 150 ms: a connection sends one command at a time, so it
// starts at 150 ms, and its response time (from 60 ms) is 100 ms while its
// service time is its own 10 ms.
func TestReplayTimelineVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env, errs := datagen.NewEnv(1, nil, "vars")
		if errs != nil {
			t.Fatal(errs)
		}

		type hit struct {
			name string
			at   time.Duration
		}

		var (
			mu   sync.Mutex
			hits []hit
		)

		origin := time.Now()
		stand := func(rec int, name string, d time.Duration) *node {
			return &node{rec: rec, timeout: time.Minute, fn: func(context.Context, *datagen.Scope) (int64, error) {
				mu.Lock()
				hits = append(hits, hit{name, time.Since(origin)})
				mu.Unlock()
				time.Sleep(d)

				return 1, nil
			}}
		}

		a, b := stand(0, "a", 10*time.Millisecond), stand(1, "b", 100*time.Millisecond)
		spec := &workload.Replay{Speed: 2, Connections: []workload.ReplayConnection{
			{At: []float64{0, 100, 120}, Ops: []string{"a", "b", "a"}},
			{At: []float64{50}, Ops: []string{"b"}},
		}}
		r := &replay{engine: &Engine{Env: env}, spec: spec, nodes: [][]*node{{a, b, a}, {b}}}
		cfg := driveConfig{
			phase:      Phase{Name: "run", Model: workload.ModelReplay, Concurrency: 2, Duration: time.Second},
			ops:        []string{"a", "b"},
			service:    true,
			interval:   100 * time.Millisecond,
			abortAfter: time.Minute,
			obs:        nopObserver{},
		}

		res := drive(t.Context(), cfg, r.Run)

		want := []hit{{"a", 0}, {"b", 25 * time.Millisecond}, {"b", 50 * time.Millisecond}, {"a", 150 * time.Millisecond}}
		if !slices.Equal(hits, want) {
			t.Errorf("started %v, want %v", hits, want)
		}

		// Virtual time is exact; the histograms keep three significant
		// digits, hence the 0.1% of slack.
		near := func(got, want time.Duration) bool { return got >= want && got <= want+want/1000 }

		resp, svc := opStats(t, res.Registry, "a"), opStats(t, res.Service, "a")
		if resp.Count != 2 || !near(us(resp.Hist.Max()), 100*time.Millisecond) || !near(us(svc.Hist.Max()), 10*time.Millisecond) {
			t.Errorf("a: %d recorded, max response %s, max service %s; want 2, 100ms, 10ms",
				resp.Count, us(resp.Hist.Max()), us(svc.Hist.Max()))
		}
	})
}

// TestReplayStopsAtDuration: entries due after the phase's end are not
// started.
func TestReplayStopsAtDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env, errs := datagen.NewEnv(1, nil, "vars")
		if errs != nil {
			t.Fatal(errs)
		}

		var (
			mu sync.Mutex
			n  int
		)

		op := &node{rec: 0, timeout: time.Minute, fn: func(context.Context, *datagen.Scope) (int64, error) {
			mu.Lock()
			n++
			mu.Unlock()

			return 1, nil
		}}
		spec := &workload.Replay{Speed: 1, Connections: []workload.ReplayConnection{{At: []float64{0, 500, 1500, 5000}, Ops: []string{"a", "a", "a", "a"}}}}
		r := &replay{engine: &Engine{Env: env}, spec: spec, nodes: [][]*node{{op, op, op, op}}}
		cfg := driveConfig{
			phase: Phase{Name: "run", Model: workload.ModelReplay, Concurrency: 1, Duration: time.Second},
			ops:   []string{"a"}, service: true, interval: 100 * time.Millisecond, abortAfter: time.Minute, obs: nopObserver{},
		}

		drive(t.Context(), cfg, r.Run)

		if n != 2 {
			t.Errorf("%d operations started in a 1 s phase, want the 2 due before 1 s", n)
		}
	})
}
