package cli

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/results/runlog"
)

// brokenThresholds is a workload whose p50 threshold the test server's
// 5 ms delay breaks, beside one it keeps, one on the phase by name, and one
// on the error rate of every operation.
const brokenThresholds = `name: finisher
database: mongobench_cli_finisher
collections: [{name: items}]
run: {concurrency: 2, warmup: 0s, duration: 1s, interval: 250ms}
operations:
  - {name: add, op: insertOne, collection: items, document: {n: 1}}
thresholds:
  add: ["p50 < 1ms", "max < 60s"]
  add@run: ["p50 < 2ms"]
  all: ["error_rate < 1%"]
`

// TestRunFinishMergeAgree runs a threshold-breaking workload against the
// test server and finishes its results the three ways a user can: run
// exits 99; finish of its run log exits 99 too and records the same
// threshold outcomes and findings; its two shards each exit 0 (a shard
// does not gate on its share), as does finish of a shard's run log, and
// merge of the shards, of their results files or of their run logs, exits
// 99 with the same outcomes as the run's but for the values measured.
func TestRunFinishMergeAgree(t *testing.T) {
	t.Parallel() // mostly waits

	srv := startNullServer(t, 5*time.Millisecond)
	path := writeWorkload(t, brokenThresholds)
	dir := t.TempDir()
	common := []string{"--uri", srv.URI(), "--quiet", "--no-explain", "--server-stats-interval", "0"}

	out := filepath.Join(dir, "run.json")
	if code, stdout, stderr := runMain(t, append([]string{"run", path, "--out", out}, common...)...); code != ExitThresholds {
		t.Fatalf("run: exit %d, want %d\n%s%s", code, ExitThresholds, stdout, stderr)
	}

	ran := readResults(t, out)
	if len(ran.Thresholds) != 4 || failedThresholds(ran) != "add p50 < 1ms,add p50 < 2ms" {
		t.Fatalf("run's outcomes %+v; want add's two p50 thresholds failed of 4", ran.Thresholds)
	}

	finished := filepath.Join(dir, "finished.json")
	if code, stdout, stderr := runMain(t, "finish", runlog.PathFor(out), "-o", finished); code != ExitThresholds {
		t.Fatalf("finish of the run log: exit %d, want %d\n%s%s", code, ExitThresholds, stdout, stderr)
	} else if !strings.Contains(stderr, "2 of 4 thresholds failed") {
		t.Errorf("finish does not say which failed:\n%s", stderr)
	}

	fin := readResults(t, finished)
	if !reflect.DeepEqual(fin.Thresholds, ran.Thresholds) {
		t.Errorf("finish recorded the thresholds\n%+v\nrun recorded\n%+v", fin.Thresholds, ran.Thresholds)
	}

	if !reflect.DeepEqual(fin.Findings, ran.Findings) || fin.Status != ran.Status {
		t.Errorf("finish: status %s, findings %+v; run: %s, %+v", fin.Status, fin.Findings, ran.Status, ran.Findings)
	}

	// Two shards of the same run: each records the thresholds on its share
	// without gating; the merge gates.
	const n = 2

	files := make([]string, n)
	codes, stderrs := runShards(t, n, func(i int) []string {
		files[i] = filepath.Join(dir, fmt.Sprintf("shard%d.json", i))

		return append([]string{"run", path, "--out", files[i], "--shard", fmt.Sprintf("%d/%d", i, n), "--shard-setup", "none"}, common...)
	})

	for i, code := range codes {
		if code != ExitOK || !strings.Contains(stderrs[i], "share of the load") {
			t.Fatalf("shard %d: exit %d, want %d with a note that a shard does not gate\n%s", i, code, ExitOK, stderrs[i])
		}
	}

	if code, _, stderr := runMain(t, "finish", runlog.PathFor(files[0]), "-o", filepath.Join(dir, "shard0-finished.json")); code != ExitOK {
		t.Errorf("finish of shard 0's run log: exit %d, want %d as the shard's run\n%s", code, ExitOK, stderr)
	}

	logs := []string{runlog.PathFor(files[0]), runlog.PathFor(files[1])}

	var merges []*result.Result

	for _, inputs := range [][]string{files, logs} {
		merged := filepath.Join(dir, fmt.Sprintf("merged%d.json", len(merges)))
		if code, stdout, stderr := runMain(t, append([]string{"merge", "-o", merged}, inputs...)...); code != ExitThresholds {
			t.Fatalf("merge of %q: exit %d, want %d\n%s%s", inputs, code, ExitThresholds, stdout, stderr)
		}

		merges = append(merges, readResults(t, merged))
	}

	if !reflect.DeepEqual(merges[0].Thresholds, merges[1].Thresholds) {
		t.Errorf("merging the results files and the run logs gives other outcomes:\n%+v\n%+v", merges[0].Thresholds, merges[1].Thresholds)
	}

	if got, want := judged(merges[0].Thresholds), judged(ran.Thresholds); !reflect.DeepEqual(got, want) {
		t.Errorf("merge judged\n%q\nrun judged\n%q", got, want)
	}
}

// failedThresholds lists the failed outcomes, "OPERATION CONDITION"
// separated by commas.
func failedThresholds(res *result.Result) string {
	var out []string

	for _, o := range res.Thresholds {
		if !o.Passed {
			out = append(out, o.Operation+" "+o.Condition)
		}
	}

	return strings.Join(out, ",")
}

// judged is each outcome without its measured value: which rule, on which
// phase, and whether it passed.
func judged(outcomes []result.ThresholdOutcome) []string {
	out := make([]string, 0, len(outcomes))

	for _, o := range outcomes {
		line, _, _ := strings.Cut(o.Text, " (")
		out = append(out, fmt.Sprintf("%s|%s|%s|%v|%v", o.Phase, o.Operation, line, o.Measurable, o.Passed))
	}

	return out
}
