package workload

import (
	"fmt"
	"strings"
	"testing"
)

// manyOps returns a workload with n findOne operations and the given run
// section lines.
func manyOps(n int, run ...string) string {
	var b strings.Builder

	b.WriteString("name: t\ndatabase: bench\ncollections:\n  - name: c\nrun:\n")

	for _, l := range run {
		b.WriteString("  " + l + "\n")
	}

	b.WriteString("operations:\n")

	for i := range n {
		fmt.Fprintf(&b, "  - name: op%d\n    op: findOne\n    collection: c\n", i)
	}

	return b.String()
}

func TestMemoryCaps(t *testing.T) {
	t.Parallel()

	for name, tc := range map[string]struct {
		yaml string
		want string // "" means valid
	}{
		"the tester's open-loop backlog": {
			yaml: manyOps(1, "duration: 1s", "rate: 100", "max_backlog: 1000000000000"),
			want: "w.yaml:8:16: run.max_backlog: 1000000000000 is above the cap of 1000000: the backlog queue is allocated " +
				"when the phase starts (48 bytes per waiting operation, 43.7 TiB here)",
		},
		"backlog at the cap": {
			yaml: manyOps(1, "duration: 1s", "rate: 100", "max_backlog: 1000000"),
		},
		"in-flight slots above the cap": {
			yaml: manyOps(1, "duration: 1s", "rate: 100", "max_in_flight: 20000"),
			want: "w.yaml:8:18: run.max_in_flight: must be between 1 and 10000: each in-flight slot is a worker",
		},
		"1000 operations at 64 workers fit": {
			yaml: manyOps(1000, "duration: 1s", "concurrency: 64"),
		},
		"the tester's 72,000 operation-worker pairs fit": {
			yaml: manyOps(3600, "duration: 1s", "concurrency: 20"),
		},
		"2 operations at the most workers fit": {
			yaml: manyOps(2, "duration: 1s", "concurrency: 10000"),
		},
		"operations × workers above the budget": {
			yaml: manyOps(200, "duration: 1s", "concurrency: 10000"),
			want: "w.yaml:7:16: run.concurrency: 200 operations × 10000 workers would hold about 1.9 GiB of latency " +
				"histograms, above the budget of 1 GiB: each worker keeps a histogram for every operation it runs",
		},
		"in-flight slots far above the cap": {
			yaml: manyOps(1, "duration: 1s", "rate: 100", "max_in_flight: 200000"),
			want: "w.yaml:8:18: run.max_in_flight: must be between 1 and 10000",
		},
		"open loop counts slots and service times": {
			yaml: manyOps(100, "duration: 1s", "rate: 100", "max_in_flight: 10000"),
			want: "run.max_in_flight: 100 operations × 10000 in-flight slots would hold about 1.9 GiB of latency " +
				"histograms, twice over for service times, above the budget of 1 GiB",
		},
		"a ramp counts its largest stage": {
			yaml: manyOps(200, "stages:", "  - {duration: 1s, concurrency: 10}", "  - {duration: 1s, concurrency: 10000}"),
			want: "run.concurrency: 200 operations × 10000 workers would hold about 1.9 GiB",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			_, errs := Parse("w.yaml", []byte(tc.yaml))

			got := errorText(errs)

			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("unexpected errors:\n%s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("errors:\n%s\nwant one containing:\n%s", got, tc.want)
			}
		})
	}
}
