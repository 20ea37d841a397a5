package cli

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/lab/capacity"
	"github.com/mongobench/mongobench/internal/results/result"
)

// capacityShardWorkload is a read at a rate the capacity steps set.
const capacityShardWorkload = `
name: capacity_shard
database: mongobench_cli_capshard
collections: [{name: items}]
run: {concurrency: 2, interval: 250ms, timeout: 5s}
operations:
  - name: get
    op: findOne
    collection: items
    filter: {_id: 1}
`

// TestShardedCapacitySearch runs a capacity search as two shards against
// one embedded FerretDB, meeting through it: they must run the same steps
// (the follower's count of steps is shard 0's, and their reported runs have
// the same workload, rate included), and shard 0's capacity must be the
// two shards' together: the reported step's operations are the sum of
// both files' and its achieved rate the sum of their rates. Every step
// passes a generous objective, so the search ends at --max-rate whatever
// the machine's load; the sweep's workers are split between the shards.
func TestShardedCapacitySearch(t *testing.T) {
	t.Parallel() // mostly waits at barriers

	srv := startServer(t)
	path := writeWorkload(t, capacityShardWorkload)
	dir := t.TempDir()

	files := []string{filepath.Join(dir, "shard0.json"), filepath.Join(dir, "shard1.json")}
	codes, stderrs := runShards(t, 2, func(i int) []string {
		return []string{
			"capacity", path, "--uri", srv.URI(), "--out", files[i], "--quiet",
			"--slo", "p99 < 2s", "--start-rate", "60", "--max-rate", "120",
			"--step-duration", "1s", "--max-step-duration", "2s", "--warmup", "200ms", "--workers", "2,3,4,5",
			"--shard", fmt.Sprintf("%d/2", i), "--start-at", "auto", "--shard-wait", "60s",
		}
	})

	for i, code := range codes {
		if code != 0 {
			t.Fatalf("shard %d: exit code %d\n%s", i, code, stderrs[i])
		}
	}

	lead, follower := readResults(t, files[0]), readResults(t, files[1])

	c := lead.Capacity
	if c == nil || c.Shards != 2 || len(c.Steps) < 2 || c.MaxRate != 120 || !c.Confirmed || len(c.Sweep) != 4 {
		t.Fatalf("shard 0's capacity %+v, want the 2 shards' steps confirmed at --max-rate 120/s and a sweep of 4 steps", c)
	}

	for i, st := range c.Sweep {
		if want := []int{2, 3, 4, 5}[i]; st.Workers != want || st.Count == 0 {
			t.Errorf("sweep step %d: %d workers, %d operations; want %d workers in all, measured", i, st.Workers, st.Count, want)
		}
	}

	if lead.CapacityFollower != nil {
		t.Errorf("shard 0 marked as a follower: %+v", lead.CapacityFollower)
	}

	fo := follower.CapacityFollower
	if follower.Capacity != nil || fo == nil || fo.Shard != 1 || fo.Count != 2 || fo.Steps != len(c.Steps)+len(c.Sweep) {
		t.Fatalf("shard 1: capacity %+v, follower %+v; want no capacity, marked as shard 1 of 2 that ran shard 0's %d steps", follower.Capacity, fo, len(c.Steps)+len(c.Sweep))
	}

	if lead.Shard == nil || follower.Shard == nil || lead.Shard.SpecSHA256 != follower.Shard.SpecSHA256 {
		t.Fatalf("shard records %+v and %+v: the reported runs must be one sharded run of one workload", lead.Shard, follower.Shard)
	}

	confirm := c.Steps[len(c.Steps)-1]
	if confirm.Kind != result.CapacityStepConfirm {
		t.Fatalf("last step %+v, want the confirmation", confirm)
	}

	var (
		count int64
		rate  float64
	)

	for i, res := range []*result.Result{lead, follower} {
		p := res.MainPhase()
		if p == nil {
			t.Fatalf("shard %d: no run phase", i)
		}

		for _, o := range p.Operations {
			count += o.Count

			for _, n := range o.Errors {
				count += n
			}

			rate += float64(o.Count) / p.DurationS
		}
	}

	if confirm.Count+confirm.Errors != count {
		t.Errorf("the confirmation step counts %d operations, the shards' files %d: want their sum", confirm.Count+confirm.Errors, count)
	}

	if math.Abs(confirm.AchievedRate-rate)/rate > 0.02 {
		t.Errorf("the confirmation step achieved %.1f ops/s, the shards %.1f together: want their sum", confirm.AchievedRate, rate)
	}

	// The two files merge into the reported run, whole.
	merged := filepath.Join(dir, "merged.json")
	if code, _, stderr := runMain(t, "merge", files[0], files[1], "-o", merged); code != 0 {
		t.Fatalf("merge exit %d: %s", code, stderr)
	}

	if p := readResults(t, merged).MainPhase(); p == nil || p.Operations[0].Count != confirm.Count {
		t.Errorf("merged run phase %+v, want the confirmation's %d operations", p, confirm.Count)
	}

	// history reads shard 0's capacity, the follower's share and the
	// merged run side by side.
	if code, _, stderr := runMain(t, "history", dir); code != 0 {
		t.Errorf("history of the shards' files: exit %d: %s", code, stderr)
	}

	// Shard 0 dropped the database through which the shards met.
	names, err := connectClient(t, srv.URI()).Database(capacity.CoordinationDatabase("mongobench_cli_capshard")).ListCollectionNames(t.Context(), map[string]any{})
	if err != nil || len(names) != 0 {
		t.Errorf("coordination database after the search: collections %v, error %v; want it dropped", names, err)
	}
}

// TestShardedCapacityWaitsAreBounded starts a follower whose shard 0 never
// comes: it gives up after --shard-wait with one line saying what it
// waited for.
func TestShardedCapacityWaitsAreBounded(t *testing.T) {
	t.Parallel()

	srv := startServer(t)
	path := writeWorkload(t, capacityShardWorkload)

	code, _, stderr := runMain(t, "capacity", path, "--uri", srv.URI(), "--out", filepath.Join(t.TempDir(), "r.json"),
		"--slo", "p99 < 2s", "--shard", "1/2", "--start-at", "auto", "--shard-wait", "1s")

	var errs []string

	for line := range strings.Lines(stderr) {
		if strings.HasPrefix(line, "Error:") || strings.Contains(line, "goroutine") {
			errs = append(errs, line)
		}
	}

	if code != ExitFailed || len(errs) != 1 || !strings.Contains(errs[0], "gave up waiting for shard 0's announcement of the search after --shard-wait 1s") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d and one line saying shard 0's announcement did not come within --shard-wait", code, stderr, ExitFailed)
	}
}

// TestShardedCapacityRefusals: a sharded search needs the start barrier of
// --start-at auto, and sweep steps whose workers every shard can share.
func TestShardedCapacityRefusals(t *testing.T) {
	path := writeWorkload(t, capacityShardWorkload)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "0/2"}, "needs --start-at auto"},
		{[]string{"--shard", "0/2", "--start-at", "2026-05-01T12:00:00Z"}, "needs --start-at auto"},
		{[]string{"--shard", "0/2", "--start-at", "auto", "--workers", "1,2,3,4"}, "the smallest count must be at least 2"},
	} {
		args := append([]string{"capacity", path, "--uri", closedPort(t), "--slo", "p99 < 2s"}, tc.args...)

		code, _, stderr := runMain(t, args...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d saying %q", tc.args, code, stderr, ExitBadInput, tc.want)
		}
	}
}

// TestShardedCapacityFollowerStopsWithShardZero has shard 0 fail its first
// step's set-up (its load inserts one _id twice) while shard 1 waits
// inside the step for shard 0's ready marker: shard 1 stops with shard 0's
// reason, not after --shard-wait (whose message would be another).
func TestShardedCapacityFollowerStopsWithShardZero(t *testing.T) {
	t.Parallel()

	srv := startServer(t)
	path := writeWorkload(t, `
name: capacity_shard_broken
database: mongobench_cli_capshard_broken
collections: [{name: items}]
load:
  - collection: items
    documents: 4
    document: {_id: 1}
run: {concurrency: 2, interval: 250ms, timeout: 5s}
operations:
  - name: get
    op: findOne
    collection: items
    filter: {_id: 1}
`)
	dir := t.TempDir()

	codes, stderrs := runShards(t, 2, func(i int) []string {
		return []string{
			"capacity", path, "--uri", srv.URI(), "--out", filepath.Join(dir, fmt.Sprintf("s%d.json", i)), "--quiet",
			"--slo", "p99 < 2s", "--step-duration", "1s", "--warmup", "0s",
			"--shard", fmt.Sprintf("%d/2", i), "--start-at", "auto", "--shard-wait", "10m",
		}
	})

	if codes[0] != ExitFailed || !strings.Contains(stderrs[0], "duplicate key") {
		t.Fatalf("shard 0: exit %d, stderr:\n%s\nwant its load's failure", codes[0], stderrs[0])
	}

	if codes[1] != ExitFailed || !strings.Contains(stderrs[1], "shard 0 ended the search: ") || !strings.Contains(stderrs[1], "duplicate key") {
		t.Errorf("shard 1: exit %d, stderr:\n%s\nwant it stopped with shard 0's reason", codes[1], stderrs[1])
	}
}
