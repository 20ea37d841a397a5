package workload

import (
	"strings"
	"testing"
	"time"
)

const thinkBase = `name: t
database: bench
collections: [{name: c}]
run:
  concurrency: 3
  duration: 10s
  think_time: 1500us
operations:
  - name: get
    op: findOne
    collection: c
    filter: {a: 1}
`

// TestThinkTimeParses: think_time is read as a duration onto the closed
// loop it belongs to, and a phase without it has none.
func TestThinkTimeParses(t *testing.T) {
	t.Parallel()

	s, errs := Parse("w.yaml", []byte(thinkBase))
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}

	if p := &s.Run.Phase; p.Model() != ModelClosed || p.ThinkTime.D() != 1500*time.Microsecond {
		t.Errorf("model %s, think time %s; want %s and 1.5ms", p.Model(), p.ThinkTime.D(), ModelClosed)
	}

	s, errs = Parse("w.yaml", []byte(strings.Replace(thinkBase, "  think_time: 1500us\n", "", 1)))
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}

	if s.Run.ThinkTime != 0 {
		t.Errorf("think time %s without think_time, want 0", s.Run.ThinkTime.D())
	}
}

// TestThinkTimeMessages: a think time that is negative, absurdly long, or
// on a phase that is not a closed loop is an error naming file, line and
// field.
func TestThinkTimeMessages(t *testing.T) {
	t.Parallel()

	cases := []struct{ old, new, want string }{
		{"think_time: 1500us", "think_time: -1ms", "w.yaml:7:15: run.think_time: must not be negative"},
		{"think_time: 1500us", "think_time: 2h", "w.yaml:7:15: run.think_time: must be at most 1m0s"},
		{"  concurrency: 3\n", "  rate: 100/s\n", "w.yaml:7:15: run.think_time: applies to closed-loop phases only"},
		{"  concurrency: 3\n  duration: 10s\n", "  stages: [{duration: 5s, concurrency: 4}]\n", "run.think_time: applies to closed-loop phases only"},
		{"think_time: 1500us", "think_time: soon", "run.think_time"},
	}

	for _, tc := range cases {
		text := strings.Replace(thinkBase, tc.old, tc.new, 1)
		if text == thinkBase {
			t.Fatalf("%q not in the base", tc.old)
		}

		_, errs := Parse("w.yaml", []byte(text))

		if got := errorText(errs); !strings.Contains(got, tc.want) {
			t.Errorf("%q → %q: errors %q, want one containing %q", tc.old, tc.new, got, tc.want)
		}
	}
}
