package runner

import (
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestStartAt runs a phase whose engine has a start instant ahead: no
// operation is sent before it, the phase's start is the instant itself (so
// that processes waiting for the same instant record the same start), and
// the first interval begins there.
func TestStartAt(t *testing.T) {
	t.Parallel()

	r := newRig(t, `name: t
database: bench
collections: [{name: c}]
run: {concurrency: 2, warmup: 0s, duration: 600ms, interval: 200ms, timeout: 5s}
operations:
  - {name: get, op: findOne, collection: c}
`, wiretest.Config{}, nil)

	// The instant is far enough ahead for the phase to be waiting for it;
	// a loaded machine that started the phase after it (the engine then
	// starts at once, late) gets an instant twice as far ahead.
	for lead := 700 * time.Millisecond; ; lead *= 2 {
		at := time.Now().Add(lead).Truncate(time.Millisecond).UTC()
		r.eng.StartAt = at
		before := r.finds()

		done := make(chan *PhaseResult, 1)

		go func() { done <- r.run(r.phases()[0]) }()

		// No find before the instant: the server's count is probed until
		// the phase ends, each probe judged only if it was read before
		// the instant.
		var res *PhaseResult

		for probe := time.NewTicker(5 * time.Millisecond); res == nil; {
			select {
			case res = <-done:
				probe.Stop()
			case <-probe.C:
				if n := r.finds() - before; n != 0 && time.Now().Before(at) {
					t.Fatalf("%d finds sent before the start instant", n)
				}
			}
		}

		if res.Start.After(at) && lead < 6*time.Second {
			t.Logf("the phase started %s after the instant, %s ahead; again, further ahead", res.Start.Sub(at), lead)
			continue
		}

		checkStartAt(t, res, at)

		if r.finds() == before {
			t.Error("no find was sent after the start instant")
		}

		return
	}
}

// checkStartAt checks that a phase waiting for the start instant at
// started there, with its first interval.
func checkStartAt(t *testing.T, res *PhaseResult, at time.Time) {
	t.Helper()

	if !res.Start.Equal(at) {
		t.Errorf("phase start %s, want the start instant %s", res.Start, at)
	}

	first := true

	for iv, err := range res.Registry.Intervals() {
		if err != nil {
			t.Fatal(err)
		}

		if first && !iv.Start.Equal(at) {
			t.Errorf("first interval starts %s, want %s", iv.Start, at)
		}

		first = false
	}
}
