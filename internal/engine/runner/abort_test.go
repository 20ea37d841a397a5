package runner

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// killedServerWorkload reads in a closed loop (findOne is retried once by the
// driver, so its failures show the retry path) and writes (insertOne is not
// retried against a standalone, so its failures arrive at once).
const killedServerWorkload = `
name: killed
database: killed
collections: [{name: items}]
run: {concurrency: 4, warmup: 0s, duration: 10s, timeout: 5s}
operations:
  - name: get
    op: findOne
    collection: items
    filter: {_id: 1}
  - name: put
    op: insertOne
    collection: items
    document: {x: 1}
`

// TestKilledServerAbortsPhase closes the server and all its connections
// abruptly once a 10 s phase has sent operations: the phase must end as aborted within about
// the server selection timeout (2 s here), with a reason that names the
// network failure and when the server was last heard from, and keep what it
// measured before.
func TestKilledServerAbortsPhase(t *testing.T) {
	const selection = 2 * time.Second

	r := newRig(t, killedServerWorkload, wiretest.Config{Latency: wiretest.Fixed(time.Millisecond)},
		func(co *options.ClientOptions) { co.SetServerSelectionTimeout(selection) })
	r.eng.Unreachable = selection

	killed := make(chan time.Time, 1)

	// Killed once the phase has measured operations (polled: the server
	// counts them), rather than a second after the phase was started,
	// which on a loaded machine may come before its first operation.
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()

		for r.finds() < 10 {
			select {
			case <-tick.C:
			case <-t.Context().Done():
			}

			if t.Context().Err() != nil {
				break
			}
		}

		_ = r.srv.Close()
		killed <- time.Now()
	}()

	res := r.runCtx(t.Context(), r.phases()[0])
	ended := time.Now()
	kill := <-killed

	if res.Status != StatusAborted {
		t.Fatalf("status %s (%s), want aborted", res.Status, res.Reason)
	}

	for _, want := range []string{"unreachable", "network errors", "since 00:0", "2s, the server selection timeout"} {
		if !strings.Contains(res.Reason, want) {
			t.Errorf("reason %q does not contain %q", res.Reason, want)
		}
	}

	// Generous for a loaded machine, yet far below the planned 9 s left.
	if after := ended.Sub(kill); after > selection+4*time.Second {
		t.Errorf("phase ended %s after the server died, want within about %s", after, selection)
	}

	if res.Elapsed >= 8*time.Second {
		t.Errorf("elapsed %s: the phase ran to its planned end", res.Elapsed)
	}

	if got := opStats(t, res.Registry, "get").Count; got == 0 {
		t.Error("the operations before the kill were not kept")
	}

	if res.FirstError == nil {
		t.Error("no first error kept")
	}
}

// TestNetworkCause checks the few words quoted from network errors.
func TestNetworkCause(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}

	if got := networkCause(dial); got != "dial tcp: connect: connection refused" {
		t.Errorf("got %q", got)
	}

	long := networkCause(errors.New(strings.Repeat("x ", 300) + "\n" + io.EOF.Error()))
	if len([]rune(long)) > maxCause || strings.Contains(long, "\n") {
		t.Errorf("cause not capped to one line: %q", long)
	}
}

// TestClock checks the phase offsets quoted in reasons and warnings.
func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                    "00:00.0",
		4*time.Second + 240*time.Millisecond: "00:04.2",
		75 * time.Second:                     "01:15.0",
	} {
		if got := clock(d); got != want {
			t.Errorf("clock(%s) = %q, want %q", d, got, want)
		}
	}
}

// hungWorkload runs long intervals and a long planned phase, so that only
// the hang rule (abort_after, 1 s here) can end it early: operations have a
// timeout longer than the phase, and the first interval closes after 25 s.
const hungWorkload = `
name: hung
database: hung
collections: [{name: items}]
run: {concurrency: 4, warmup: 0s, duration: 28s, interval: 25s, timeout: 60s, abort_after: 1s}
operations:
  - name: put
    op: insertOne
    collection: items
    document: {x: 1}
`

// TestHungServerAbortsPhase freezes the server (every reply held, as a
// SIGSTOPped server holds them) a moment into the phase: the phase must end
// as aborted by the one rule for a hung server, no operation completed for
// run.abort_after, checked continuously rather than at the interval ticks
// (the first of which comes only after 25 s here).
func TestHungServerAbortsPhase(t *testing.T) {
	r := newRig(t, hungWorkload, wiretest.Config{Latency: wiretest.Fixed(time.Millisecond)}, nil)
	r.srv.SetLatency(wiretest.Stall{At: time.Now().Add(300 * time.Millisecond), For: 10 * time.Minute, Base: wiretest.Fixed(time.Millisecond)})

	res := r.runCtx(t.Context(), r.phases()[0])

	if res.Status != StatusAborted || !strings.Contains(res.Reason, "no operation succeeded for") {
		t.Fatalf("status %s (%s), want aborted because no operation succeeded", res.Status, res.Reason)
	}

	// The rule fires about 1 s after the last reply; the first interval
	// tick, at which it used to be checked, is at 25 s.
	if res.Elapsed >= 15*time.Second {
		t.Errorf("elapsed %s: the hang was noticed only at an interval tick, not abort_after after the last success", res.Elapsed)
	}
}
