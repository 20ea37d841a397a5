package merge

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
)

// TestMergeRefusesShardRecords checks the refusals that TestMergeRefuses
// does not: a missing result, an index outside the run, a workload
// without an interval, phases that measure different operations, an
// interval far from the run's start and a blocks phase. Each is an
// *InputError of one line naming the file at fault.
func TestMergeRefusesShardRecords(t *testing.T) {
	mk := func(i int, edit func(*result.Result)) *result.Result {
		r := shardResult(t, i, 2, 0, 1, 1)
		if edit != nil {
			edit(r)
		}

		return r
	}

	renameOp := func(r *result.Result) {
		p := r.MainPhase()
		p.Operations[0].Name = "put"

		for k := range p.Intervals {
			p.Intervals[k].Operations[0].Name = "put"
		}
	}

	cases := []struct {
		name   string
		in     []Input
		file   string
		phrase string
	}{
		{"no result", []Input{{Name: "s0.json", Result: mk(0, nil)}, {Name: "empty.json"}}, "empty.json", "no result"},
		{"index past the count", inputs(mk(0, nil), mk(1, func(r *result.Result) { r.Shard.Index = 2 })), "s1.json", "shard index 2 is outside 0..1"},
		{"negative index", inputs(mk(0, nil), mk(1, func(r *result.Result) { r.Shard.Index = -1 })), "s1.json", "shard index -1 is outside 0..1"},
		{"no interval", inputs(mk(0, func(r *result.Result) { r.Workload.Spec = map[string]any{"run": map[string]any{}} }), mk(1, nil)), "s0.json", `workload.spec.run.interval "" is not a duration`},
		{"bad interval", inputs(mk(0, func(r *result.Result) { r.Workload.Spec = map[string]any{"run": map[string]any{"interval": "-1s"}} }), mk(1, nil)), "s0.json", `interval "-1s" is not a duration`},
		{"other operations", inputs(mk(0, nil), mk(1, renameOp)), "s1.json", `phase "run" measures operations [put], but s0.json's measures [get]`},
		{"far interval", inputs(mk(0, nil), mk(1, func(r *result.Result) {
			p := r.MainPhase()
			for k := range p.Intervals {
				p.Intervals[k].Start = p.Intervals[k].Start.Add(30 * 24 * time.Hour)
				p.Intervals[k].End = p.Intervals[k].End.Add(30 * 24 * time.Hour)
			}
		})), "s1.json", "not a shard of the same run"},
		{"blocks", inputs(mk(0, nil), mk(1, func(r *result.Result) { r.MainPhase().Blocks = []result.Block{{}} })), "s1.json", "growth blocks cannot be merged"},
	}

	for _, c := range cases {
		_, err := Results(c.in)

		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: error %v, want an InputError", c.name, err)
			continue
		}

		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, c.file+": ") || !strings.Contains(msg, c.phrase) {
			t.Errorf("%s: %q, want one line starting with %s and saying %q", c.name, msg, c.file, c.phrase)
		}
	}
}

// TestMergeStatus checks the merged status: the worst of the shards'
// (aborted over incomplete over interrupted over completed), with every
// failed shard's reason kept, in shard order.
func TestMergeStatus(t *testing.T) {
	tests := []struct {
		statuses []string
		want     string
	}{
		{[]string{result.StatusCompleted, result.StatusCompleted}, result.StatusCompleted},
		{[]string{result.StatusInterrupted, result.StatusCompleted}, result.StatusInterrupted},
		{[]string{result.StatusInterrupted, result.StatusIncomplete}, result.StatusIncomplete},
		{[]string{result.StatusAborted, result.StatusIncomplete}, result.StatusAborted},
		{[]string{result.StatusIncomplete, result.StatusAborted}, result.StatusAborted},
	}

	for _, tt := range tests {
		var rs []*result.Result

		for i, s := range tt.statuses {
			r := shardResult(t, i, len(tt.statuses), 0, 1, 1)
			r.Status = s

			if s != result.StatusCompleted {
				r.StatusReason = "reason " + s
			}

			rs = append(rs, r)
		}

		m, err := Results(inputs(rs...))
		if err != nil {
			t.Fatal(err)
		}

		if m.Status != tt.want {
			t.Errorf("shards %v: merged status %q, want %q", tt.statuses, m.Status, tt.want)
		}

		var want []string

		for i, s := range tt.statuses {
			if s != result.StatusCompleted {
				want = append(want, "shard "+string(rune('0'+i))+" (s"+string(rune('0'+i))+".json): "+s+": reason "+s)
			}
		}

		if got := m.StatusReason; got != strings.Join(want, "; ") {
			t.Errorf("shards %v: reason %q, want %q", tt.statuses, got, strings.Join(want, "; "))
		}

		for i, src := range m.Merged.Sources {
			if src.Status != tt.statuses[i] || src.Index != i {
				t.Errorf("shards %v: source %d is %+v", tt.statuses, i, src)
			}
		}
	}
}

// TestMergeRecord checks what the merged file says of its shards: the
// run's span from the earliest start to the latest end, the summed
// concurrency, a note for each shard that ran another mongobench, and
// shard 0's workload, target and seed.
func TestMergeRecord(t *testing.T) {
	a := shardResult(t, 0, 2, 0, 1, 1)
	b := shardResult(t, 1, 2, 0, 1, 1)

	a.MongobenchVersion, b.MongobenchVersion = "v1.0.0", "v1.1.0"
	a.Seed = 42
	b.StartedAt = a.StartedAt.Add(-2 * time.Second) // b started 2 s earlier
	b.DurationS = 4                                 // and ended 3 s before a

	m, err := Results(inputs(a, b))
	if err != nil {
		t.Fatal(err)
	}

	if !m.StartedAt.Equal(b.StartedAt) || m.DurationS != 7 {
		t.Errorf("merged run from %s for %v s; want %s for 7 s", m.StartedAt, m.DurationS, b.StartedAt)
	}

	if m.Concurrency != 3 || m.Seed != 42 || m.MongobenchVersion != "v1.0.0" || m.Workload.Name != "w" {
		t.Errorf("merged concurrency %d, seed %d, version %q, workload %q", m.Concurrency, m.Seed, m.MongobenchVersion, m.Workload.Name)
	}

	notes := strings.Join(m.Target.Notes, "\n")
	if !strings.Contains(notes, "merged from 2 shards") || !strings.Contains(notes, "shard 1 ran mongobench v1.1.0, shard 0 ran v1.0.0") {
		t.Errorf("notes %q", m.Target.Notes)
	}

	if len(a.Target.Notes) != 0 {
		t.Errorf("merging added notes to shard 0's own result: %q", a.Target.Notes)
	}

	if m.Merged.SpecSHA256 != "abc" || m.Merged.SeedScheme != result.SeedScheme || !m.Merged.StartAt.Equal(t0) {
		t.Errorf("merged record %+v", m.Merged)
	}
}

// TestMergePhaseOrder checks that the merged phases are shard 0's in its
// order, then those only another shard has (shard 0 alone loads, but a
// phase may be missing from it when it stopped early).
func TestMergePhaseOrder(t *testing.T) {
	a := shardResult(t, 0, 2, 0, 1, 1)
	b := shardResult(t, 1, 2, 0, 1, 1)

	extra := *b.MainPhase()
	extra.Name = "cooldown"
	b.Phases = append(b.Phases, extra)

	warm := *a.MainPhase()
	warm.Name = "warm"
	a.Phases = append([]result.Phase{warm}, a.Phases...)

	m, err := Results(inputs(b, a))
	if err != nil {
		t.Fatal(err)
	}

	var names []string
	for _, p := range m.Phases {
		names = append(names, p.Name)
	}

	if got := strings.Join(names, ","); got != "warm,run,cooldown" {
		t.Errorf("merged phases %s, want warm,run,cooldown", got)
	}

	// The run phase holds both shards' operations, the others one shard's.
	counts := map[string]int64{}
	for _, p := range m.Phases {
		counts[p.Name] = p.Operations[0].Count
	}

	if counts["run"] != 2*10+2*20 || counts["warm"] != 2*10 || counts["cooldown"] != 2*20 {
		t.Errorf("merged counts %v", counts)
	}

	if errs := m.Check(); len(errs) > 0 {
		t.Errorf("merged result is inconsistent: %v", errs)
	}
}

// TestStamp checks the instants in refusals: UTC, to the nanosecond, and
// a word for none.
func TestStamp(t *testing.T) {
	if got := stamp(time.Time{}); got != "no common instant" {
		t.Errorf("zero time: %q", got)
	}

	in := time.Date(2026, 5, 1, 14, 0, 0, 5, time.FixedZone("CEST", 2*3600))
	if got := stamp(in); got != "2026-05-01T12:00:00.000000005Z" {
		t.Errorf("stamp = %q", got)
	}
}
