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

	at := time.Now().Add(700 * time.Millisecond).Truncate(time.Millisecond).UTC()
	r.eng.StartAt = at
	before := r.finds()

	done := make(chan *PhaseResult, 1)

	go func() { done <- r.run(r.phases()[0]) }()

	time.Sleep(time.Until(at) - 200*time.Millisecond)

	// Judged only if the instant has not come yet once the count is read
	// (a noisy machine may wake this goroutine late).
	if n := r.finds() - before; n != 0 && time.Now().Before(at) {
		t.Errorf("%d finds sent before the start instant", n)
	}

	res := <-done

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

	if r.finds() == before {
		t.Error("no find was sent after the start instant")
	}
}
