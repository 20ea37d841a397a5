package runner

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// thinkRun runs a closed loop of n workers with think time think against a
// stand-in operation that takes service, for duration, in virtual time. It
// returns the operations started and the phase's result.
func thinkRun(t *testing.T, n int, service, think, duration time.Duration) (int64, *PhaseResult, time.Duration) {
	t.Helper()

	env, errs := datagen.NewEnv(1, nil, "vars")
	if errs != nil {
		t.Fatal(errs)
	}

	var started atomic.Int64

	op := &node{rec: 0, timeout: time.Minute, fn: func(ctx context.Context, _ *datagen.Scope) (int64, error) {
		started.Add(1)

		select {
		case <-time.After(service):
			return 1, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}}
	cfg := driveConfig{
		phase:    Phase{Name: "run", Model: workload.ModelClosed, Concurrency: n, Duration: duration},
		ops:      []string{"get"},
		interval: 100 * time.Millisecond, abortAfter: time.Minute, obs: nopObserver{},
	}
	ex := &closedLoop{engine: &Engine{Env: env}, mix: &mix{nodes: []*node{op}, cum: []float64{1}}, n: n, think: think}

	begin := time.Now()
	res := drive(t.Context(), cfg, ex.Run)

	return started.Load(), res, time.Since(begin)
}

// TestClosedLoopThinkTimeRate: n workers that each run an operation of
// service time S and then think T start an iteration every S+T, so the
// phase runs n/(S+T) iterations per second; and the think time is in no
// latency: every recorded latency is S. In virtual time the figures are
// exact: the times are chosen so that every worker's last operation ends
// before the phase does and its think runs past the end (D mod (S+T) > S),
// so that the count is
// n × ceil(D / (S+T)).
func TestClosedLoopThinkTimeRate(t *testing.T) {
	const (
		n        = 4
		service  = time.Millisecond
		duration = time.Second
	)

	for _, think := range []time.Duration{2500 * time.Microsecond, 6 * time.Millisecond} {
		t.Run(think.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				got, res, _ := thinkRun(t, n, service, think, duration)

				period := service + think
				perWorker := int64(math.Ceil(float64(duration) / float64(period)))

				if want := n * perWorker; got != want {
					t.Errorf("%d operations started in %s, want %d (%d workers / (%s + %s) = %.1f/s)",
						got, duration, want, n, service, think, n/period.Seconds())
				}

				st := opStats(t, res.Registry, "get")
				if st.Count != got {
					t.Errorf("%d operations recorded, %d started", st.Count, got)
				}

				// Histograms keep three significant digits.
				lo, hi := us(st.Hist.Min()), us(st.Hist.Max())
				if lo < service || hi > service+service/1000 {
					t.Errorf("latency from %s to %s, want %s: think time must not count", lo, hi, service)
				}
			})
		})
	}
}

// TestClosedLoopThinkTimeStops: a worker thinking when the phase ends stops
// thinking: a 1 s phase with a 30 s think time ends at 1 s, after one
// operation per worker.
func TestClosedLoopThinkTimeStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got, _, took := thinkRun(t, 3, time.Millisecond, 30*time.Second, time.Second)

		if got != 3 {
			t.Errorf("%d operations started, want 3 (one per worker)", got)
		}

		if took > time.Second+fineWait {
			t.Errorf("the phase took %s (virtual), want it to end at 1s: the think wait must end with the phase", took)
		}
	})
}
