package result

import (
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// unitResult is a result whose run phase has operations a and b and the
// iteration unit of the sequence [a, b, a], recorded n times, with the
// given number of those iterations failing in b.
func unitResult(t *testing.T, n, failed int) *Result {
	t.Helper()

	reg := metrics.NewRegistry([]string{"a", "b", "iteration"})
	reg.SetUnit(2, UnitIteration, []string{"a", "b", "a"})
	reg.Reset(t0)

	h := reg.NewHandle()
	for i := range n {
		kind := ""
		if i < failed {
			kind = "timeout"
		}

		h.Record(0, time.Millisecond, 1, "")
		h.Record(1, time.Millisecond, 0, kind)
		h.Record(0, time.Millisecond, 1, "")
		h.Record(2, 3*time.Millisecond, 2, kind)
	}

	reg.Tick(t0.Add(time.Second))

	p, err := NewPhase(PhaseRun, 0, reg.Intervals())
	if err != nil {
		t.Fatal(err)
	}

	r := &Result{SchemaVersion: SchemaVersion, Target: Target{Kind: "uri"}, Status: StatusCompleted}
	r.AddPhase(p)

	return r
}

func TestCheckUnits(t *testing.T) {
	t.Parallel()

	if errs := unitResult(t, 10, 3).Check(); errs != nil {
		t.Fatalf("consistent units: %v", errs)
	}

	r := unitResult(t, 10, 3)
	if u := r.Phases[0].Operations[2]; u.Unit != UnitIteration || len(u.Steps) != 3 || r.Phases[0].Intervals[0].Operations[2].Steps != nil {
		t.Fatalf("iteration %+v: want the unit with its steps on the phase only", u)
	}

	for name, tc := range map[string]struct {
		tamper func(p *Phase)
		want   string
	}{
		"step ran less than the unit lists it": {
			tamper: func(p *Phase) { p.Operations[2].Steps = []string{"a", "b", "a", "a"} },
			want:   "its step a ran only 20 times (listed 3 times)",
		},
		"unknown step": {
			tamper: func(p *Phase) { p.Operations[2].Steps = []string{"a", "zz"} },
			want:   `step "zz" is not an operation of the phase`,
		},
		"unit fails more than its steps": {
			tamper: func(p *Phase) { p.Operations[1].Unit, p.Operations[1].Steps = UnitComposite, []string{"a"} },
			want:   "3 failed executions, but its steps failed only 0 times",
		},
		"unknown unit kind": {
			tamper: func(p *Phase) { p.Operations[2].Unit = "loop" },
			want:   `unit "loop" is not`,
		},
		"steps without a unit": {
			tamper: func(p *Phase) { p.Operations[0].Steps = []string{"b"} },
			want:   "steps without a unit",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			r := unitResult(t, 10, 3)
			tc.tamper(&r.Phases[0])
			r.Operations = r.Phases[0].Operations

			errs := r.Check()

			var all []string
			for _, e := range errs {
				all = append(all, e.Error())
			}

			if !strings.Contains(strings.Join(all, "\n"), tc.want) {
				t.Errorf("errors %q, want one containing %q", all, tc.want)
			}
		})
	}
}

func TestCheckCompareOn(t *testing.T) {
	t.Parallel()

	r := unitResult(t, 5, 0)
	r.Workload.CompareOn = "iteration"

	if errs := r.Check(); errs != nil {
		t.Fatalf("compare_on iteration: %v", errs)
	}

	r.Workload.CompareOn = "nope"
	if errs := r.Check(); len(errs) != 1 || !strings.Contains(errs[0].Error(), `compare_on "nope"`) {
		t.Errorf("errors %v, want one about compare_on", errs)
	}
}
