package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/results/runlog"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// runShards runs mongobench run once per shard, concurrently and in-process,
// each with its own arguments, and returns the exit codes and standard
// errors.
func runShards(t *testing.T, n int, args func(i int) []string) ([]int, []string) {
	t.Helper()

	codes, stderrs := make([]int, n), make([]string, n)

	var wg sync.WaitGroup

	for i := range n {
		wg.Go(func() {
			r := newCLIRun(args(i)...)
			codes[i] = r.wait(t, r.start(), mainTimeout)
			stderrs[i] = r.stderr.String()
		})
	}

	wg.Wait()

	return codes, stderrs
}

// nullShardWorkload is a closed-loop mix against the null test server.
const nullShardWorkload = `
name: sharded
database: mongobench_cli_sharded
collections: [{name: items}]
run: {concurrency: 7, warmup: 0s, duration: 3s, interval: 500ms, timeout: 5s}
operations:
  - name: get
    op: findOne
    collection: items
    filter: {_id: {^int: {min: 1, max: 1000}}}
  - name: put
    op: insertOne
    collection: items
    document: {_id: {^seq: {start: 1}}, x: {^string: 8}}
thresholds:
  get: ["p99 < 3600s"]
  all: ["error_rate < 50%"]
`

// TestShardedRunsMergeExactly runs three shards of one workload against the
// null test server, starting at one instant, merges their results files and
// checks the merge operation by operation: counts, errors and documents are
// the sums of the shards', each percentile and the maximum are those of
// the union of the shards' recorded histograms (computed here with the
// HdrHistogram library's own histogram, not mongobench's), the shards
// started measuring at the common instant, and the merged intervals lie on
// the grid from it with each the sum of one interval of every shard.
func TestShardedRunsMergeExactly(t *testing.T) {
	t.Parallel() // mostly waits

	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(200 * time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	path := writeWorkload(t, nullShardWorkload)

	const n = 3

	var (
		dir     string
		startAt time.Time
		files   []string
	)

	// The start instant is a few seconds ahead, time for the shards to get
	// ready; a shard ready after it starts late (and says so), which is not
	// the common start this test is about, so a loaded machine that was not
	// ready in time gets a start instant twice as far ahead, up to 16 s.
	for lead := 4 * time.Second; ; lead *= 2 {
		dir = t.TempDir()
		startAt = time.Now().Add(lead).UTC().Truncate(time.Second)
		files = make([]string, n)

		codes, stderrs := runShards(t, n, func(i int) []string {
			files[i] = filepath.Join(dir, fmt.Sprintf("shard%d.json", i))

			return []string{
				"run", path, "--uri", srv.URI(), "--out", files[i], "--no-explain", "--server-stats-interval", "0",
				"--shard", fmt.Sprintf("%d/%d", i, n), "--shard-setup", "none", "--start-at", startAt.Format(time.RFC3339),
			}
		})

		for i, code := range codes {
			if code != 0 {
				t.Fatalf("shard %d: exit code %d\n%s", i, code, stderrs[i])
			}
		}

		late := slices.IndexFunc(stderrs, func(e string) bool { return strings.Contains(e, "after the start instant") })
		if late < 0 {
			break
		}

		if lead >= 16*time.Second {
			t.Fatalf("shard %d was not ready %s before the start instant:\n%s", late, lead, stderrs[late])
		}

		t.Logf("shard %d was not ready %s before the start instant; again, further ahead", late, lead)
	}

	merged := filepath.Join(dir, "merged.json")
	if code, _, stderr := runMain(t, append([]string{"merge", "-o", merged}, files...)...); code != 0 {
		t.Fatalf("merge: exit code %d\n%s", code, stderr)
	}

	shards := make([]*result.Result, n)
	for i, f := range files {
		shards[i] = readResults(t, f)
	}

	out := readResults(t, merged)

	workers := 0

	for i, s := range shards {
		if s.Shard == nil || s.Shard.Index != i || s.Shard.Count != n || !s.Shard.StartAt.Equal(startAt) {
			t.Fatalf("shard %d records %+v", i, s.Shard)
		}

		workers += s.Concurrency

		if p := phase(s, "run"); !p.StartedAt.Equal(startAt) {
			t.Errorf("shard %d started measuring at %s, not at --start-at %s", i, p.StartedAt, startAt)
		}
	}

	if workers != 7 || out.Concurrency != 7 {
		t.Errorf("shards ran %d workers, the merge records %d; the workload has 7", workers, out.Concurrency)
	}

	if out.Merged == nil || len(out.Merged.Sources) != n {
		t.Fatalf("merged result records its sources as %+v", out.Merged)
	}

	mp := phase(out, "run")

	for j, o := range mp.Operations {
		var count, docs int64

		errs := map[string]int64{}
		union := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)

		for _, s := range shards {
			so := phase(s, "run").Operations[j]
			count += so.Count
			docs += so.Docs

			for k, v := range so.Errors {
				errs[k] += v
			}

			h, err := hdrhistogram.Decode([]byte(so.Histogram))
			if err != nil {
				t.Fatalf("decoding a shard's histogram: %v", err)
			}

			union.Merge(h)
		}

		if o.Count != count || o.Docs != docs || fmt.Sprint(o.Errors) != fmt.Sprint(nonZeroErrors(errs)) {
			t.Errorf("%s: merged count %d docs %d errors %v; the shards sum to %d, %d, %v", o.Name, o.Count, o.Docs, o.Errors, count, docs, errs)
		}

		if count == 0 {
			t.Fatalf("%s: no operation succeeded in any shard", o.Name)
		}

		want := result.Latency{
			P50: float64(union.ValueAtQuantile(50)), P90: float64(union.ValueAtQuantile(90)), P95: float64(union.ValueAtQuantile(95)),
			P99: float64(union.ValueAtQuantile(99)), P999: float64(union.ValueAtQuantile(99.9)), Max: float64(union.Max()),
		}
		got := o.LatencyUS
		got.Mean = 0

		if got != want || union.TotalCount() != o.Count {
			t.Errorf("%s: merged latencies %+v (count %d), the union of the shards' histograms %+v (count %d)", o.Name, got, o.Count, want, union.TotalCount())
		}

		if math.Abs(o.LatencyUS.Mean-union.Mean()) > 1e-6*union.Mean() {
			t.Errorf("%s: merged mean %v, the union's %v", o.Name, o.LatencyUS.Mean, union.Mean())
		}
	}

	// The merged intervals lie on the grid from the common instant, of a
	// step of run.interval (or a multiple, when a shard's intervals were
	// that long), and each holds the shards' intervals whose midpoints fall
	// in it. On an idle machine that is one interval of every shard; on a
	// loaded one a shard's tick may come late enough to move an interval to
	// the next cell, which the merge does by this rule and the test checks by
	// it, rather than by the machine's promptness.
	const interval = 500 * time.Millisecond

	if len(mp.Intervals) == 0 {
		t.Fatal("the merged phase has no intervals")
	}

	step := interval
	if len(mp.Intervals) > 1 {
		step = mp.Intervals[0].End.Sub(mp.Intervals[0].Start)
	}

	if step <= 0 || step%interval != 0 {
		t.Fatalf("merged intervals of %s, not a multiple of run.interval %s", step, interval)
	}

	for k, iv := range mp.Intervals {
		if want := startAt.Add(time.Duration(k) * step); !iv.Start.Equal(want) {
			t.Errorf("merged interval %d starts at %s, want %s", k, iv.Start, want)
		}
	}

	cells := make([]int64, len(mp.Intervals))

	for i, s := range shards {
		for _, iv := range phase(s, "run").Intervals {
			mid := iv.Start.Add(iv.End.Sub(iv.Start) / 2)

			k := int(mid.Sub(startAt) / step)
			if k < 0 || k >= len(cells) {
				t.Errorf("shard %d's interval %s–%s falls in cell %d, outside the merge's %d: it fell off the grid",
					i, iv.Start.Format(time.StampMilli), iv.End.Format(time.StampMilli), k, len(cells))

				continue
			}

			cells[k] += iv.Operations[0].Count
		}
	}

	for k, iv := range mp.Intervals {
		if iv.Operations[0].Count != cells[k] {
			t.Errorf("merged interval %d counts %d gets, the shards' intervals in its cell sum to %d", k, iv.Operations[0].Count, cells[k])
		}
	}

	// The thresholds are checked again on the merged figures.
	if len(out.Thresholds) != 2 || !out.Thresholds[0].Passed || out.Thresholds[0].Measured != mp.Operations[0].LatencyUS.P99 {
		t.Errorf("merged thresholds %+v; want get's p99 measured on the merged phase (%v µs), passed", out.Thresholds, mp.Operations[0].LatencyUS.P99)
	}

	// Every command reads the merged file.
	if code, _, stderr := runMain(t, "report", merged, "-o", filepath.Join(dir, "r.html"), "--csv", filepath.Join(dir, "csv")); code != 0 {
		t.Errorf("report of the merged file: exit code %d\n%s", code, stderr)
	}

	if code, stdout, stderr := runMain(t, "compare", files[0], merged); code != 0 || !strings.Contains(stdout, "get") {
		t.Errorf("compare with the merged file: exit code %d\n%s%s", code, stdout, stderr)
	}

	// A shard's run log stands for its results file: merging the logs
	// gives the same phases.
	logs := make([]string, n)
	for i, f := range files {
		logs[i] = runlog.PathFor(f)
	}

	fromLogs := filepath.Join(dir, "merged-logs.json")
	if code, _, stderr := runMain(t, append([]string{"merge", "-o", fromLogs}, logs...)...); code != 0 {
		t.Fatalf("merge of the run logs: exit code %d\n%s", code, stderr)
	}

	want, _ := json.Marshal(out.Phases)
	if got, _ := json.Marshal(readResults(t, fromLogs).Phases); !bytes.Equal(got, want) {
		t.Errorf("merging the shards' run logs gives other phases than merging their results files")
	}
}

func nonZeroErrors(m map[string]int64) map[string]int64 {
	out := map[string]int64{}

	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}

	return out
}

// shardInsertWorkload loads documents with sequential _ids and inserts more
// with the same template (the same ^seq counter) in the run.
const shardInsertWorkload = `
name: sharded-inserts
database: mongobench_cli_sharded_inserts
collections: [{name: items}]
load:
  - collection: items
    documents: 90
    batch_size: 30
    document: &item
      _id: {^format: {pattern: "item-%06d", args: [{^seq: {start: 1}}]}}
      n: {^seq: {counter: items, start: 1}}
run: {concurrency: 3, warmup: 0s, max_operations: 240, timeout: 10s}
operations:
  - name: add
    op: insertOne
    collection: items
    document: *item
  - name: read
    op: findOne
    collection: items
    filter: {n: {^uniform: {counter: items}}}
    weight: 0.2
`

// TestShardedInsertsNoDuplicateKey runs three shards of an insert workload
// against one embedded FerretDB, meeting at the start through the database
// (--start-at auto): shard 0 loads, the others continue the keys after the
// load, and no insert collides with another shard's or with the load's.
func TestShardedInsertsNoDuplicateKey(t *testing.T) {
	t.Parallel() // mostly waits

	srv := startServer(t)
	path := writeWorkload(t, shardInsertWorkload)
	dir := t.TempDir()

	const n = 3

	files := make([]string, n)
	codes, stderrs := runShards(t, n, func(i int) []string {
		files[i] = filepath.Join(dir, fmt.Sprintf("shard%d.json", i))

		return []string{
			"run", path, "--uri", srv.URI(), "--out", files[i], "--no-explain", "--server-stats-interval", "0",
			"--shard", fmt.Sprintf("%d/%d", i, n), "--start-at", "auto", "--shard-wait", "90s", "--keep-db",
		}
	})

	for i, code := range codes {
		if code != 0 {
			t.Fatalf("shard %d: exit code %d\n%s", i, code, stderrs[i])
		}
	}

	var adds int64

	for i, f := range files {
		res := readResults(t, f)
		p := phase(res, "run")

		for _, o := range p.Operations {
			if len(nonZeroErrors(o.Errors)) > 0 {
				t.Errorf("shard %d: %s failed: %v", i, o.Name, o.Errors)
			}

			if o.Name == "add" {
				adds += o.Count
			}
		}

		if res.Shard.StartAtMode != "auto" || res.Shard.StartAt.IsZero() || !p.StartedAt.Equal(res.Shard.StartAt) {
			t.Errorf("shard %d: shard record %+v, phase started at %s", i, res.Shard, p.StartedAt)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	coll := connectClient(t, srv.URI()).Database("mongobench_cli_sharded_inserts").Collection("items")

	docs, err := coll.CountDocuments(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}

	cur, err := coll.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}

	var all []struct {
		ID string `bson:"_id"`
		N  int64  `bson:"n"`
	}

	if err := cur.All(ctx, &all); err != nil {
		t.Fatal(err)
	}

	values := map[int64]bool{}
	for _, d := range all {
		values[d.N] = true
	}

	if docs != 90+adds || int64(len(values)) != docs {
		t.Errorf("the collection holds %d documents with %d distinct n; the load and the shards inserted %d", docs, len(values), 90+adds)
	}
}

// TestShardPlanFlagsAndEnvironment checks --shard, its environment forms
// (the Kubernetes Indexed Job one included) and their refusals.
func TestShardPlanFlagsAndEnvironment(t *testing.T) {
	plan := func(env map[string]string, f shardFlags, changed ...string) (*bench.Shard, error) {
		st := &State{Getenv: func(k string) string { return env[k] }}
		if f.setup == "" {
			f.setup = "shard0"
		}

		if f.wait == 0 {
			f.wait = time.Minute
		}

		return shardPlan(st, func(name string) bool { return slices.Contains(changed, name) }, &f)
	}

	for _, c := range []struct {
		env  map[string]string
		f    shardFlags
		want string // Index/Count StartAt-or-auto
	}{
		{nil, shardFlags{shard: "2/4"}, "2/4 "},
		{map[string]string{"MONGOBENCH_SHARD": "1/3"}, shardFlags{}, "1/3 "},
		{map[string]string{"MONGOBENCH_SHARD": "1/3"}, shardFlags{shard: "0/2"}, "0/2 "},
		{map[string]string{"MONGOBENCH_SHARDS": "5", "JOB_COMPLETION_INDEX": "4"}, shardFlags{}, "4/5 "},
		{map[string]string{"MONGOBENCH_START_AT": "auto"}, shardFlags{shard: "0/2"}, "0/2 auto"},
		{map[string]string{"MONGOBENCH_START_AT": "2026-05-01T12:00:00+02:00"}, shardFlags{shard: "0/2"}, "0/2 2026-05-01T10:00:00Z"},
	} {
		sh, err := plan(c.env, c.f)
		if err != nil {
			t.Errorf("%v %+v: %v", c.env, c.f, err)
			continue
		}

		got := fmt.Sprintf("%d/%d ", sh.Index, sh.Count)
		if sh.AutoStart {
			got += "auto"
		} else if !sh.StartAt.IsZero() {
			got += sh.StartAt.Format(time.RFC3339)
		}

		if got != c.want {
			t.Errorf("%v %+v: %q, want %q", c.env, c.f, got, c.want)
		}
	}

	if sh, err := plan(nil, shardFlags{}); sh != nil || err != nil {
		t.Errorf("no shard flag: %+v, %v", sh, err)
	}

	for _, c := range []struct {
		env     map[string]string
		f       shardFlags
		changed []string
		want    string
	}{
		{nil, shardFlags{shard: "3/3"}, nil, "the index must be between 0 and 2"},
		{nil, shardFlags{shard: "a/3"}, nil, "want I/N"},
		{nil, shardFlags{shard: "1"}, nil, "want I/N"},
		{map[string]string{"MONGOBENCH_SHARDS": "3"}, shardFlags{}, nil, "JOB_COMPLETION_INDEX"},
		{nil, shardFlags{shard: "0/2", startAt: "tomorrow"}, nil, "RFC 3339"},
		{nil, shardFlags{shard: "0/2", setup: "all"}, nil, "want shard0 or none"},
		{nil, shardFlags{shard: "0/2", setup: "none", startAt: "auto"}, nil, "--start-at TIME"},
		{nil, shardFlags{startAt: "auto"}, []string{"start-at"}, "give --shard I/N"},
	} {
		_, err := plan(c.env, c.f, c.changed...)

		var ee *exitError
		if !errors.As(err, &ee) || ee.code != ExitBadInput || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v %+v: %v, want a one-line bad-input error saying %q", c.env, c.f, err, c.want)
		}
	}
}

// TestShardRefusals checks that run refuses a workload the shards cannot
// share, and merge files that are not shards of one run, with exit code 2
// and a line naming the file.
func TestShardRefusals(t *testing.T) {
	path := writeWorkload(t, `
name: few
database: mongobench_cli_few
collections: [{name: items}]
run: {concurrency: 2, warmup: 0s, duration: 1s}
operations:
  - {name: get, op: findOne, collection: items, filter: {_id: 1}}
`)

	code, _, stderr := runMain(t, "run", path, "--uri", closedPort(t), "--shard", "0/3", "--shard-setup", "none")
	if code != ExitBadInput || !strings.Contains(stderr, path+": phase \"run\": concurrency 2 is less than the 3 shards") {
		t.Errorf("run of 2 workers on 3 shards: exit code %d\n%s", code, stderr)
	}

	code, _, stderr = runMain(t, "run", path, "--shard", "0/2")
	if code != ExitBadInput || !strings.Contains(stderr, "--shard needs a server every shard reaches") {
		t.Errorf("run --shard on the embedded server: exit code %d\n%s", code, stderr)
	}

	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.json")

	res := &result.Result{
		SchemaVersion: result.SchemaVersion, Status: result.StatusCompleted,
		Target:    result.Target{Kind: "uri", URI: "mongodb://h/"},
		Workload:  result.Workload{Name: "w"},
		StartedAt: time.Now(),
	}
	if err := result.WriteFile(plain, res); err != nil {
		t.Fatal(err)
	}

	code, _, stderr = runMain(t, "merge", plain, plain, "-o", filepath.Join(dir, "m.json"))
	if lines := errorLines(stderr); code != ExitBadInput || len(lines) != 1 || !strings.Contains(lines[0], plain+": not a shard") {
		t.Errorf("merge of a results file that is no shard: exit code %d\n%s", code, stderr)
	}

	if code, _, _ := runMain(t, "merge", plain); code != ExitBadInput {
		t.Errorf("merge without -o: exit code %d", code)
	}
}

// TestShardWaitsAreBounded runs shards whose partners never come: shard 0
// of 2 waits at the start barrier, gives up and drops its database (no
// other shard ran); then shard 1 of 2 waits for shard 0's set-up, whose
// ready marker went with the database. Each gives up after --shard-wait
// with a line saying what it waited for.
func TestShardWaitsAreBounded(t *testing.T) {
	t.Parallel() // mostly waits

	srv := startServer(t)
	path := writeWorkload(t, shardInsertWorkload)
	dir := t.TempDir()

	for _, c := range []struct {
		shard, want string
	}{
		{"0/2", "start barrier: 1 of 2 shards arrived within --shard-wait 2s"},
		{"1/2", "shard 1/2: gave up waiting for shard 0's set-up (its ready marker) after --shard-wait 2s"},
	} {
		start := time.Now()
		code, _, stderr := runMain(t, "run", path, "--uri", srv.URI(), "--out", filepath.Join(dir, "r.json"), "--no-explain",
			"--server-stats-interval", "0", "--shard", c.shard, "--start-at", "auto", "--shard-wait", "2s")

		if lines := errorLines(stderr); code != ExitFailed || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("shard %s alone: exit code %d, want %d and one error line saying %q\n%s", c.shard, code, ExitFailed, c.want, stderr)
		}

		if took := time.Since(start); took > time.Minute {
			t.Errorf("shard %s alone took %s to give up", c.shard, took)
		}

		assertNoStackTrace(t, stderr)
	}
}

// TestShardsRefuseNullServer runs shards that meet through the database
// against the null server, which stores nothing: each must stop at once
// with exit code 2 and one line saying so and naming --shard-setup none
// (shard 1 used to fail decoding the server's canned documents, shard 0 to
// wait silently). Without canned documents, shard 0 finds out by reading
// back what it wrote.
func TestShardsRefuseNullServer(t *testing.T) {
	path := writeWorkload(t, nullShardWorkload)
	dir := t.TempDir()

	for _, c := range []struct {
		findDocs int
		shard    string
		because  string
	}{
		{1, "0/2", "a find for a document never written returned one"},
		{1, "1/2", "a find for a document never written returned one"},
		{0, "0/2", "a document just written could not be read back"},
	} {
		srv, err := wiretest.Start(wiretest.Config{FindDocs: c.findDocs})
		if err != nil {
			t.Fatal(err)
		}

		code, _, stderr := runMain(t, "run", path, "--uri", srv.URI(), "--out", filepath.Join(dir, "r.json"), "--no-explain",
			"--server-stats-interval", "0", "--shard", c.shard, "--start-at", "auto", "--shard-wait", "1m")
		_ = srv.Close()

		want := "shard " + c.shard + ": the server does not store documents (" + c.because + ")"
		if lines := errorLines(stderr); code != ExitBadInput || len(lines) != 1 || !strings.Contains(lines[0], want) ||
			!strings.Contains(lines[0], "--shard-setup none") {
			t.Errorf("find docs %d, shard %s: exit code %d, want %d and one line saying %q and naming --shard-setup none\n%s",
				c.findDocs, c.shard, code, ExitBadInput, want, stderr)
		}
	}
}

// TestShardZeroSaysWhatItWaitsFor runs two shards on a real server without
// --keep-db: shard 0 waits for shard 1 to finish before dropping the
// database, and must say so rather than wait silently.
func TestShardZeroSaysWhatItWaitsFor(t *testing.T) {
	t.Parallel() // mostly waits

	srv := startServer(t)
	path := writeWorkload(t, shardInsertWorkload)
	dir := t.TempDir()

	codes, stderrs := runShards(t, 2, func(i int) []string {
		return []string{
			"run", path, "--uri", srv.URI(), "--out", filepath.Join(dir, fmt.Sprintf("shard%d.json", i)), "--no-explain",
			"--server-stats-interval", "0", "--shard", fmt.Sprintf("%d/2", i), "--start-at", "auto", "--shard-wait", "90s",
		}
	})

	for i, code := range codes {
		if code != 0 {
			t.Fatalf("shard %d: exit code %d\n%s", i, code, stderrs[i])
		}
	}

	want := `Shard 0/2: waiting for shard 1 to finish before dropping database "mongobench_cli_sharded_inserts"`
	if !strings.Contains(stderrs[0], want) {
		t.Errorf("shard 0 does not say what it waits for (%q):\n%s", want, stderrs[0])
	}
}
