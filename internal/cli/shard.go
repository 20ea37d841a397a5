package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mongobench/mongobench/internal/lab/bench"
)

// Environment variables that stand for the sharding flags, so that a
// Kubernetes Indexed Job (which sets JOB_COMPLETION_INDEX in each pod) can
// run the shards from one pod template.
const (
	shardEnv      = "MONGOBENCH_SHARD"     // I/N, as --shard
	shardCountEnv = "MONGOBENCH_SHARDS"    // N, with the index from JOB_COMPLETION_INDEX
	jobIndexEnv   = "JOB_COMPLETION_INDEX" // set by Kubernetes in an Indexed Job's pods
	startAtEnv    = "MONGOBENCH_START_AT"  // as --start-at
)

// shardFlags are the sharding options of `mongobench run`.
type shardFlags struct {
	shard   string        // --shard I/N
	startAt string        // --start-at TIME|auto
	setup   string        // --shard-setup shard0|none
	wait    time.Duration // --shard-wait
}

func addShardFlags(fl *pflag.FlagSet, f *shardFlags) {
	fl.StringVar(&f.shard, "shard", "",
		"run shard I of N (I from 0) of a distributed run: the workload's workers, rates and max_operations are split "+
			"between the shards and their keys kept apart; merge their results files with 'mongobench merge' "+
			"(default $"+shardEnv+", or $"+shardCountEnv+" with the index from $"+jobIndexEnv+")")
	fl.StringVar(&f.startAt, "start-at", "",
		"with --shard, start measuring at this RFC 3339 instant (e.g. 2026-05-01T12:00:00Z) so the shards' intervals line up, "+
			"or 'auto': the shards meet through the target database and shard 0 sets the instant (default $"+startAtEnv+")")
	fl.StringVar(&f.setup, "shard-setup", "shard0",
		"with --shard: shard0 (shard 0 drops, creates and loads the database, the others wait for it) or none "+
			"(nobody sets it up or waits: a database prepared beforehand, or the null test server)")
	fl.DurationVar(&f.wait, "shard-wait", 10*time.Minute,
		"with --shard, how long a shard waits for the others: for shard 0's set-up, at the start barrier, and shard 0 for the others to finish")
}

// shardPlan reads the sharding flags and their environment forms; it returns
// nil for a run that is not sharded.
func shardPlan(st *State, changed func(string) bool, f *shardFlags) (*bench.Shard, error) {
	spec, from := f.shard, "--shard"

	switch {
	case spec != "":
	case st.Getenv(shardEnv) != "":
		spec, from = st.Getenv(shardEnv), "$"+shardEnv
	case st.Getenv(shardCountEnv) != "":
		idx := st.Getenv(jobIndexEnv)
		if idx == "" {
			return nil, badInput("$%s is set but $%s (the shard's index) is not", shardCountEnv, jobIndexEnv)
		}

		spec, from = idx+"/"+st.Getenv(shardCountEnv), "$"+jobIndexEnv+"/$"+shardCountEnv
	}

	startAt := f.startAt
	if startAt == "" {
		startAt = st.Getenv(startAtEnv)
	}

	if spec == "" {
		for _, name := range []string{"start-at", "shard-setup", "shard-wait"} {
			if changed(name) {
				return nil, badInput("--%s applies to a sharded run: give --shard I/N", name)
			}
		}

		return nil, nil
	}

	index, count, err := parseShard(spec)
	if err != nil {
		return nil, badInput("%s %q: %v", from, spec, err)
	}

	sh := &bench.Shard{Index: index, Count: count, Wait: f.wait}

	switch f.setup {
	case "shard0":
	case "none":
		sh.NoSetup = true
	default:
		return nil, badInput("--shard-setup %q: want shard0 or none", f.setup)
	}

	switch startAt {
	case "":
	case "auto":
		sh.AutoStart = true
	default:
		t, err := time.Parse(time.RFC3339Nano, startAt)
		if err != nil {
			return nil, badInput("--start-at %q: want an RFC 3339 instant such as 2026-05-01T12:00:00Z, or auto", startAt)
		}

		sh.StartAt = t.UTC()
	}

	if err := sh.Check(); err != nil {
		return nil, badInput("%v", err)
	}

	return sh, nil
}

// parseShard parses I/N.
func parseShard(s string) (index, count int, err error) {
	i, n, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("want I/N, such as 0/4 (I from 0 to N-1)")
	}

	index, err1 := strconv.Atoi(strings.TrimSpace(i))
	count, err2 := strconv.Atoi(strings.TrimSpace(n))

	switch {
	case err1 != nil || err2 != nil:
		return 0, 0, fmt.Errorf("want I/N with whole numbers, such as 0/4")
	case count < 1 || count > 10000:
		return 0, 0, fmt.Errorf("the number of shards must be between 1 and 10000")
	case index < 0 || index >= count:
		return 0, 0, fmt.Errorf("the index must be between 0 and %d", count-1)
	}

	return index, count, nil
}

// shardResultsName is the default results file's name stem: the workload's,
// with the shard, so that shards on one machine do not write one file.
func shardResultsName(name string, sh *bench.Shard) string {
	if sh == nil {
		return name
	}

	return fmt.Sprintf("%s-shard%d-of-%d", name, sh.Index, sh.Count)
}
