package workload

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// A capacity section is read whole, and each mistake in it is one error
// naming the file, the line and the field.
func TestCapacityValidation(t *testing.T) {
	t.Parallel()

	for name, tc := range map[string]struct {
		block string
		want  string // "" for valid
	}{
		"valid": {
			block: "capacity:\n  slo: [\"p99 < 20ms\", \"ins:error_rate < 0.1%\"]\n  start_rate: 200\n  max_rate: 5000\n" +
				"  step_duration: 5s\n  max_step_duration: 20s\n  workers: [1, 2, 4, 8]\n",
		},
		"slo grammar": {
			block: "capacity:\n  slo: [\"p99 < 20ms\", \"p99 < 20\"]\n",
			want:  `w.yaml:15:23: capacity.slo[1]: "p99 < 20"`,
		},
		"slo throughput": {
			block: "capacity: {slo: [\"throughput < 5\"]}\n",
			want:  "capacity.slo[0]: \"throughput < 5\": throughput is what the capacity search sets",
		},
		"slo lower bound": {
			block: "capacity: {slo: [\"p99 > 5ms\"]}\n",
			want:  "capacity.slo[0]: \"p99 > 5ms\": an objective is an upper bound",
		},
		"slo operation": {
			block: "capacity: {slo: [\"get:p99 < 5ms\"]}\n",
			want:  `capacity.slo[0]: no operation "get" (use an operation's name, or none for all of them; the workload has ins)`,
		},
		"start rate": {
			block: "capacity:\n  start_rate: 0\n",
			want:  "w.yaml:15:15: capacity.start_rate: must be > 0 operations per second",
		},
		"max below start": {
			block: "capacity: {start_rate: 500, max_rate: 100}\n",
			want:  "capacity.max_rate: must be at least start_rate (500)",
		},
		"step duration": {
			block: "capacity: {step_duration: 0s}\n",
			want:  "capacity.step_duration: must be > 0",
		},
		"max step duration": {
			block: "capacity: {step_duration: 5s, max_step_duration: 2s}\n",
			want:  "capacity.max_step_duration: must be at least step_duration",
		},
		"too few workers": {
			block: "capacity: {workers: [1, 2, 4]}\n",
			want:  "capacity.workers: a sweep needs at least 4 worker counts",
		},
		"workers decrease": {
			block: "capacity:\n  workers: [1, 4, 2, 8]\n",
			want:  "w.yaml:15:19: capacity.workers[2]: the worker counts must increase",
		},
		"workers zero": {
			block: "capacity: {workers: [0, 1, 2, 3]}\n",
			want:  "capacity.workers[0]: must be between 1 and 10000",
		},
		"unknown field": {
			block: "capacity: {growth: 3}\n",
			want:  `capacity.growth: unknown field "growth"`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			spec, errs := Parse("w.yaml", []byte(base+tc.block))

			got := errorText(errs)

			switch {
			case tc.want == "" && len(errs) > 0:
				t.Fatalf("unexpected errors:\n%s", got)
			case tc.want != "" && (len(errs) != 1 || !strings.Contains(got, tc.want)):
				t.Fatalf("errors:\n%s\nwant one, containing %q", got, tc.want)
			case tc.want == "":
				c := spec.Capacity
				if c == nil || !slices.Equal(c.SLO, []string{"p99 < 20ms", "ins:error_rate < 0.1%"}) || c.StartRate != 200 || c.MaxRate != 5000 ||
					c.StepDuration.D() != 5*time.Second || c.MaxStepDuration.D() != 20*time.Second || !slices.Equal(c.Workers, []int{1, 2, 4, 8}) {
					t.Errorf("capacity section read as %+v", c)
				}
			}
		})
	}
}
