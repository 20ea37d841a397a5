package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/client"
	"github.com/mongobench/mongobench/internal/client/clienttest"
	"github.com/mongobench/mongobench/internal/errkind"
	"github.com/mongobench/mongobench/internal/wiretest"
)

// externalWorkload is a weighted mix for an external stack: the peer fails
// every operation whose name starts with "fail" with a duplicate key error.
const externalWorkload = `name: ext
database: d
collections:
  - name: c
operations:
  - name: get
    op: findOne
    collection: c
    filter: {n: {^int: {min: 1, max: 100}}}
    weight: 3
  - name: fail_add
    op: insertOne
    collection: c
    document: {n: 1}
    weight: 1
run:
  client: node-driver
  concurrency: 4
  warmup: 300ms
  duration: 1s
  interval: 200ms
  timeout: 2s
`

// newExternalRig is a rig whose engine runs its phases in the protocol
// peer started in mode.
func newExternalRig(t *testing.T, src, mode string) *rig {
	t.Helper()

	r := newRig(t, src, wiretest.Config{Latency: wiretest.Fixed(0)}, nil)
	args, env := clienttest.Command(mode)
	s, _ := client.Lookup(r.spec.Run.Client)

	a, err := client.Start(t.Context(), client.Config{
		Stack: s, Command: args, Env: []string{env}, URI: r.srv.URI(), Database: r.spec.Database,
		Spec: r.spec, Ops: r.ops, LogDir: t.TempDir(), Handshake: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { a.Close(5 * time.Second) })
	r.eng.Client = a

	return r
}

// TestExternalRecordsReports checks that an external stack's reports land
// in the phase's registry as the Go engine's operations do: successes with
// their latencies, failures by error kind, documents, the weighted mix,
// and no server traffic from mongobench itself.
func TestExternalRecordsReports(t *testing.T) {
	t.Parallel()

	r := newExternalRig(t, externalWorkload, "ok")
	res := r.run(r.phases()[0])

	get, fail := opStats(t, res.Registry, "get"), opStats(t, res.Registry, "fail_add")

	if get.Count == 0 || errorCount(get) != 0 || get.Docs != get.Count {
		t.Errorf("get: %d ok, %d docs, errors %v", get.Count, get.Docs, get.Errors)
	}

	// The peer sleeps 200 µs per operation: no latency can be below it.
	if min := get.Hist.ValueAtQuantile(0); min < 200 {
		t.Errorf("get: smallest latency %d µs, below the peer's 200 µs", min)
	}

	if fail.Count != 0 || fail.Errors[errkind.DuplicateKey] == 0 || len(fail.Errors) != 1 {
		t.Errorf("fail_add: %d ok, errors %v; want duplicate_key only", fail.Count, fail.Errors)
	}

	// Weights 3:1, thousands of picks: far from 1:1 and from 9:1.
	ratio := float64(get.Count) / float64(fail.Errors[errkind.DuplicateKey])
	if ratio < 2 || ratio > 4.5 {
		t.Errorf("get/fail_add = %.2f, want about 3", ratio)
	}

	if n := r.finds(); n != 0 {
		t.Errorf("mongobench itself sent %d finds: the peer should have run them", n)
	}

	if len(intervals(t, res.Registry)) < 3 {
		t.Errorf("only %d intervals in 1s of 200ms intervals", len(intervals(t, res.Registry)))
	}
}

// TestExternalMaxOperations checks that max_operations counts the
// external stack's measured operations exactly, warm-up excluded.
func TestExternalMaxOperations(t *testing.T) {
	t.Parallel()

	src := strings.Replace(externalWorkload, "  duration: 1s\n", "  duration: 20s\n  max_operations: 500\n", 1)
	r := newExternalRig(t, src, "ok")
	res := r.run(r.phases()[0])

	get, fail := opStats(t, res.Registry, "get"), opStats(t, res.Registry, "fail_add")
	if n := get.Count + errorCount(get) + fail.Count + errorCount(fail); n != 500 {
		t.Errorf("recorded %d operations, want max_operations 500", n)
	}

	if res.Elapsed > 15*time.Second {
		t.Errorf("the phase ran %s: max_operations did not stop it", res.Elapsed)
	}
}

// TestExternalAdapterDeath checks that an adapter dying in a phase aborts
// it with the reason and the adapter's last log line.
func TestExternalAdapterDeath(t *testing.T) {
	t.Parallel()

	r := newExternalRig(t, externalWorkload, "die")
	res := r.runCtx(t.Context(), r.phases()[0])

	if res.Status != StatusAborted || !strings.Contains(res.Reason, "exit status 4") || !strings.Contains(res.Reason, "peer: dying at phase start") {
		t.Errorf("status %s, reason %q", res.Status, res.Reason)
	}
}
