package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
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

// A workload's capacity section gives the search's settings where no flag
// does; a flag given overrides its field.
func TestCapacityWorkloadSection(t *testing.T) {
	srv := startNullServer(t, time.Millisecond)

	path := capacityProbe(t, "capacity_section", `
thresholds:
  all: ["p99 < 1s"]
capacity:
  slo: ["get:p99 < 2s", "error_rate < 1%"]
  start_rate: 40
  max_rate: 80
  step_duration: 300ms
  max_step_duration: 600ms
`)
	dir := t.TempDir()

	search := func(out string, flags ...string) *result.Result {
		t.Helper()

		args := append([]string{"capacity", path, "--uri", srv.URI(), "--out", out, "--warmup", "50ms"}, flags...)

		code, stdout, stderr := runMain(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", flags, code, stdout, stderr)
		}

		return readResults(t, out)
	}

	// The section alone: its objectives (not the thresholds), from 40/s
	// up to its max_rate of 80/s, whose step lasts its 300ms.
	c := search(filepath.Join(dir, "section.json")).Capacity
	if !slices.Equal(c.SLO, []string{"get:p99 < 2s", "error_rate < 1%"}) {
		t.Errorf("objectives %v, want the section's", c.SLO)
	}

	if len(c.Steps) == 0 || c.Steps[0].OfferedRate != 40 || c.MaxRate != 80 || c.Steps[0].DurationS >= 0.6 {
		t.Errorf("first step %+v, max rate %v: want the section's 40/s, 80/s and 300ms steps", c.Steps, c.MaxRate)
	}

	// Flags override their fields and leave the others to the section.
	c = search(filepath.Join(dir, "flags.json"), "--slo", "p99 < 3s", "--max-rate", "40").Capacity
	if !slices.Equal(c.SLO, []string{"p99 < 3s"}) || c.MaxRate != 40 || c.Steps[0].OfferedRate != 40 {
		t.Errorf("objectives %v, max rate %v, first step %v: want --slo's objective and --max-rate's 40/s from the section's start", c.SLO, c.MaxRate, c.Steps[0].OfferedRate)
	}
}

// A mistake in the capacity section is bad input naming the file, line
// and field, before anything runs.
func TestCapacityWorkloadSectionErrors(t *testing.T) {
	path := writeWorkload(t, `name: capacity_bad
database: mongobench_cli_capacity_bad
collections: [{name: items}]
operations:
  - name: get
    op: findOne
    collection: items
    filter: {_id: 1}
capacity:
  slo: ["p99 < 20"]
`)

	code, _, stderr := runMain(t, "capacity", path)
	if code != ExitBadInput || !strings.Contains(stderr, path+":10:9: capacity.slo[0]:") {
		t.Errorf("exit %d, stderr %q; want %d and the file, line and field", code, stderr, ExitBadInput)
	}
}

// capacityProbe writes the workload the capacity command tests search:
// one read by _id on an empty collection, named name (database
// mongobench_cli_NAME), with extra appended (top-level YAML, e.g. a
// capacity section). Against startNullServer each step costs the server's
// delay and nothing else.
func capacityProbe(t *testing.T, name, extra string) string {
	t.Helper()

	return writeWorkload(t, `
name: `+name+`
database: mongobench_cli_`+name+`
collections: [{name: items}]
run: {concurrency: 1, interval: 250ms}
operations:
  - name: get
    op: findOne
    collection: items
    filter: {_id: 1}
`+extra)
}
