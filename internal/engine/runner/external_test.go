package runner

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/engine/client/clienttest"
	"github.com/mongobench/mongobench/internal/engine/errkind"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
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
func newExternalRig(t *testing.T, src, mode string, extraEnv ...string) *rig {
	t.Helper()

	r := newRig(t, src, wiretest.Config{Latency: wiretest.Fixed(0)}, nil)
	args, env := clienttest.Command(mode)
	s, _ := client.Lookup(r.spec.Run.Client)

	a, err := client.Start(t.Context(), client.Config{
		Stack: s, Command: args, Env: append([]string{env}, extraEnv...), URI: r.srv.URI(), Database: r.spec.Database,
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

// sameDataWorkload is a weighted mix of two reads with generated filters,
// sorts and limits, one worker, a fixed number of operations.
const sameDataWorkload = `name: same
database: d
collections:
  - name: c
operations:
  - name: one
    op: findOne
    collection: c
    filter: {n: {^int: {min: 1, max: 1000000}}, s: {^name: {}}}
  - name: many
    op: find
    collection: c
    filter: {k: {^choice: {values: [a, b, c]}}, at: {$gt: {^int: {min: 1, max: 1000}}}}
    sort: {n: -1}
    limit: {^int: {min: 1, max: 50}}
run:
  client: node-driver
  concurrency: 1
  max_operations: 150
  duration: 60s
  timeout: 2s
`

// TestExternalSameData checks that an external stack is sent exactly what
// the Go engine runs: the same operations in the same order, with the same
// filters, sorts and limits, from the same seeded worker scope.
func TestExternalSameData(t *testing.T) {
	t.Parallel()

	// The Go engine against the null server, whose recorder sees every
	// find command in order (one worker).
	type call struct {
		filter string
		limit  int64
	}

	var (
		mu     sync.Mutex
		goRuns []call
	)

	canon := func(raw bson.Raw) string {
		text, err := bson.MarshalExtJSON(raw, true, false)
		if err != nil {
			t.Error(err)
		}

		return string(text)
	}

	spec := strings.Replace(sameDataWorkload, "  client: node-driver\n", "", 1)
	r := newRig(t, spec, wiretest.Config{Latency: wiretest.Fixed(0), Record: func(c *wiretest.Command) {
		if c.Name != "find" {
			return
		}

		f, _ := c.Body.Lookup("filter").DocumentOK()
		l, _ := c.Body.Lookup("limit").AsInt64OK()

		mu.Lock()
		goRuns = append(goRuns, call{canon(f), l})
		mu.Unlock()
	}}, nil)
	r.run(r.phases()[0])

	// The same workload through the peer, which writes down every
	// operation it receives.
	path := filepath.Join(t.TempDir(), "ops.jsonl")
	x := newExternalRig(t, sameDataWorkload, "ok", clienttest.RecordEnv+"="+path)
	x.run(x.phases()[0])
	x.eng.Client.Close(5 * time.Second)

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	var sent []call

	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)

	for sc.Scan() {
		var entry [3]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &entry); err != nil {
			t.Fatal(err)
		}

		var args struct {
			Filter json.RawMessage `json:"filter"`
			Limit  int64           `json:"limit"`
		}

		if err := json.Unmarshal(entry[2], &args); err != nil {
			t.Fatal(err)
		}

		var d bson.D
		if err := bson.UnmarshalExtJSON(args.Filter, true, &d); err != nil {
			t.Fatal(err)
		}

		raw, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}

		var id int
		_ = json.Unmarshal(entry[1], &id)

		limit := args.Limit
		if x.ops[id].Name() == "one" {
			limit = 1 // the Go driver sends findOne as a find with limit 1
		}

		sent = append(sent, call{canon(raw), limit})
	}

	mu.Lock()
	defer mu.Unlock()

	if len(goRuns) != 150 || len(sent) < 150 {
		t.Fatalf("the Go engine ran %d finds, the peer received %d operations; want 150 and at least 150", len(goRuns), len(sent))
	}

	for i := range goRuns {
		if goRuns[i] != sent[i] {
			t.Fatalf("operation %d differs:\n  Go engine %+v\n  sent      %+v", i, goRuns[i], sent[i])
		}
	}
}

// hungExternalWorkload is externalWorkload with a long phase, long
// intervals and abort_after 1 s.
const hungExternalWorkload = `name: ext
database: d
collections:
  - name: c
operations:
  - name: get
    op: findOne
    collection: c
    filter: {n: 1}
run:
  client: node-driver
  concurrency: 2
  warmup: 0s
  duration: 28s
  interval: 25s
  timeout: 10s
  abort_after: 1s
`

// TestExternalHungAbortsBySameRule runs an adapter that reports nothing and
// never confirms its stop, as one whose server hangs: the phase must be
// aborted by the Go engine's rule (no operation completed for abort_after)
// and end within the grace given to an aborted adapter, not after the
// operation timeout plus 10 s that a planned stop grants.
func TestExternalHungAbortsBySameRule(t *testing.T) {
	t.Parallel()

	r := newExternalRig(t, hungExternalWorkload, "hang")
	res := r.runCtx(t.Context(), r.phases()[0])

	if res.Status != StatusAborted || !strings.Contains(res.Reason, "no operation succeeded for") {
		t.Fatalf("status %s (%s), want aborted because no operation succeeded", res.Status, res.Reason)
	}

	// abort_after (1 s) + abortGrace (2 s) against timeout + 10 s = 20 s.
	if res.Elapsed >= 12*time.Second {
		t.Errorf("elapsed %s: the aborted phase waited for the hung adapter's operations", res.Elapsed)
	}
}
