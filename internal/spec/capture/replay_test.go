package capture

import (
	"bytes"
	"slices"
	"testing"

	"github.com/mongobench/mongobench/internal/base/golden"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

func replayMeta() Meta {
	m := meta()
	m.Replay, m.Speed = true, 2

	return m
}

// TestReplayTimeline captures the fixture as a replay and parses it as
// mongobench validate does. By hand from the fixture: the first operation
// is conn11's insert logged at 10:00:03.000 after 2 ms, so it started at
// 02.998, the timeline's origin; conn12's first insert (03.400, 3 ms) is at
// 399 ms, conn13's (03.800, 4 ms) at 798 ms, conn11's second (04.100,
// 5 ms) at 1097 ms. The 32 operations the workload holds are all there (the
// update command without statements is not), and the speed is kept.
func TestReplayTimeline(t *testing.T) {
	c := captureFile(t, Options{Timeline: true}, fixture)

	out, _, notes, err := c.WorkloadAndShapes(replayMeta())
	if err != nil {
		t.Fatal(err)
	}

	s, errs := workload.Parse("captured.yaml", out)
	if len(errs) > 0 {
		t.Fatalf("the replay workload does not validate: %v\n%s", errs, out)
	}

	p := &s.Run.Phase
	if p.Model() != workload.ModelReplay || p.Replay.Speed != 2 || len(p.Replay.Connections) != 3 {
		t.Fatalf("model %s, speed %v, %d connections; want replay, 2, 3", p.Model(), p.Replay.Speed, len(p.Replay.Connections))
	}

	conns := p.Replay.Connections
	if got := []float64{conns[0].At[0], conns[1].At[0], conns[2].At[0], conns[0].At[1]}; !slices.Equal(got, []float64{0, 399, 798, 1097}) {
		t.Errorf("first times %v, want [0 399 798 1097]", got)
	}

	if conns[0].Ops[0] != "insert_orders" || conns[2].Ops[len(conns[2].Ops)-1] != "aggregate_orders" {
		t.Errorf("conn11 starts with %s, conn13 ends with %s; want insert_orders, aggregate_orders", conns[0].Ops[0], conns[2].Ops[len(conns[2].Ops)-1])
	}

	n := 0
	for _, c := range conns {
		n += len(c.Ops)
	}

	if n != 32 {
		t.Errorf("%d operations in the timeline, want 32; notes %q", n, notes)
	}

	golden.Check(t, "testdata/shop.replay.yaml", out)
}

// TestReplayCanary: the timeline names operations, never values.
func TestReplayCanary(t *testing.T) {
	out, _, _, err := captureFile(t, Options{Timeline: true}, fixture).WorkloadAndShapes(replayMeta())
	if err != nil {
		t.Fatal(err)
	}

	for _, s := range []string{"CANARY-7f3a9q", "987654321", "663895a0c1e1f0a1b2c3d401", "archived"} {
		if bytes.Contains(out, []byte(s)) {
			t.Errorf("the replay workload copies %q from the log", s)
		}
	}
}
