package runner

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mongobench/mongobench/internal/engine/errkind"
)

// TestWatchdogTimesOut checks that an operation overrunning its timeout is
// cancelled within one watchdog period and counted as a timeout, that the
// worker's next operation gets a fresh context, and that a finished
// operation is never cancelled.
func TestWatchdogTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()

		var w watchdog
		go w.run(ctx, nil)

		sl := w.slot(ctx)

		// A slow operation: it returns only when its context is done.
		start := time.Now()
		opCtx := sl.begin(start, 100*time.Millisecond)
		<-opCtx.Done()
		err := sl.end(opCtx, context.Cause(opCtx))

		took := time.Since(start)
		if took < 100*time.Millisecond || took > 100*time.Millisecond+watchdogPeriod {
			t.Errorf("cancelled after %s, want within one period of the 100ms timeout", took)
		}

		if kind := errkind.Of(err); kind != errkind.Timeout {
			t.Errorf("error %v is of kind %q, want timeout", err, kind)
		}

		// The next operation has a live context and, finishing in time, is
		// left alone.
		opCtx = sl.begin(time.Now(), 100*time.Millisecond)
		if opCtx.Err() != nil {
			t.Fatal("the next operation got a cancelled context")
		}

		time.Sleep(50 * time.Millisecond)

		if err := sl.end(opCtx, nil); err != nil || opCtx.Err() != nil {
			t.Errorf("a timely operation: err %v, context %v", err, opCtx.Err())
		}

		time.Sleep(time.Second)

		if opCtx.Err() != nil {
			t.Error("the watchdog cancelled a finished operation's context")
		}
	})
}
