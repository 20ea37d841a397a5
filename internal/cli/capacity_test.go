package cli

import (
	"strings"
	"testing"
)

// Bad capacity flags are refused before anything starts, exit code 2, with
// a one-line message naming the flag.
func TestCapacityFlagErrors(t *testing.T) {
	w := "../../workloads/quickstart.yaml"

	cases := []struct {
		args []string
		want string
	}{
		{[]string{w}, "no --slo given"},
		{[]string{w, "--slo", "throughput > 5"}, "--slo"},
		{[]string{w, "--slo", "p99 > 5ms"}, "upper bound"},
		{[]string{w, "--slo", "p99 < 5"}, "latency unit"},
		{[]string{w, "--slo", "p99 < 5ms", "--workers", "1,x"}, "--workers"},
		{[]string{w, "--slo", "p99 < 5ms", "--workers", "4,2,8"}, "must increase"},
		{[]string{w, "--slo", "p99 < 5ms", "--workers", "1,2,4"}, "at least 4"},
		{[]string{w, "--slo", "p99 < 5ms", "--start-rate", "0"}, "--start-rate"},
		{[]string{w, "--slo", "p99 < 5ms", "--growth", "1"}, "--growth"},
		{[]string{w, "--slo", "p99 < 5ms", "--resolution", "x"}, "--resolution"},
		{[]string{w, "--slo", "p99 < 5ms", "--step-duration", "0s"}, "--step-duration"},
		{[]string{w, "--slo", "p99 < 5ms", "--target", "embedded", "--target", "embedded-memory"}, "one target"},
	}

	for _, c := range cases {
		code, _, stderr := runMain(t, append([]string{"capacity"}, c.args...)...)
		if code != ExitBadInput || !strings.Contains(stderr, c.want) || len(errorLines(stderr)) != 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", c.args, code, stderr, ExitBadInput, c.want)
		}
	}
}
