package workload

import (
	"strings"
	"testing"
	"time"
)

const replayBase = `name: t
database: bench
collections: [{name: c}]
run:
  replay:
    speed: 2
    connections:
      - {at: [0, 100, 250], ops: [ins, get, ins]}
      - {at: [40, 3000], ops: [get, get]}
operations:
  - name: ins
    op: insertOne
    collection: c
    document: {a: 1}
  - name: get
    op: findOne
    collection: c
    filter: {a: 1}
`

// TestReplayDefaults: a replay phase is the replay model, has a worker per
// connection, and lasts until its last entry is due at its speed (3000 ms
// / 2) plus a second.
func TestReplayDefaults(t *testing.T) {
	t.Parallel()

	s, errs := Parse("w.yaml", []byte(replayBase))
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}

	p := &s.Run.Phase
	if p.Model() != ModelReplay || p.Concurrency != 2 {
		t.Errorf("model %s, concurrency %d; want %s and 2", p.Model(), p.Concurrency, ModelReplay)
	}

	if got, want := p.Duration.D(), 2500*time.Millisecond; got != want {
		t.Errorf("duration %s, want %s", got, want)
	}

	if got := p.Replay.Offset(100); got != 50*time.Millisecond {
		t.Errorf("offset of 100 ms at speed 2: %s, want 50ms", got)
	}

	if _, err := p.ShardShare(0, 2); err == nil || !strings.Contains(err.Error(), "cannot be sharded") {
		t.Errorf("sharding a replay: %v", err)
	}
}

// TestReplayMessages: each mistake in a timeline is named by file, line
// and field.
func TestReplayMessages(t *testing.T) {
	t.Parallel()

	cases := []struct{ old, new, want string }{
		{"speed: 2", "speed: -1", "w.yaml:6:12: run.replay.speed: must be > 0"},
		{"[0, 100, 250], ops: [ins, get, ins]", "[0, 100], ops: [ins, get, ins]", "run.replay.connections[0].at: 2 times for 3 operations"},
		{"[40, 3000]", "[40, 30]", "run.replay.connections[1].at[1]: must be >= 0 and not before"},
		{"ops: [get, get]", "ops: [get, nope]", `run.replay.connections[1].ops[1]: operation "nope" is not one of the phase's operations`},
		{"  replay:\n", "  rate: 10/s\n  replay:\n", "run.rate: a replay phase starts operations at their recorded times"},
		{"    connections:\n      - {at: [0, 100, 250], ops: [ins, get, ins]}\n      - {at: [40, 3000], ops: [get, get]}\n", "    connections: []\n", "run.replay.connections: must hold between 1 and"},
	}

	for _, tc := range cases {
		text := strings.Replace(replayBase, tc.old, tc.new, 1)
		if text == replayBase {
			t.Fatalf("%q not in the base", tc.old)
		}

		_, errs := Parse("w.yaml", []byte(text))

		if got := errorText(errs); !strings.Contains(got, tc.want) {
			t.Errorf("%s -> %s: errors %q, want %q", tc.old, tc.new, got, tc.want)
		}
	}
}
