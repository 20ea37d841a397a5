package cli

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestRunParamFlags checks --set and --max-operations end to end: the
// values reach the server (documents loaded, operations run) and the
// results file.
func TestRunParamFlags(t *testing.T) {
	t.Parallel()

	var loaded, finds atomic.Int64

	srv, err := wiretest.Start(wiretest.Config{Record: func(c *wiretest.Command) {
		switch c.Name {
		case "insert":
			if coll, _ := c.Body.Lookup("insert").StringValueOK(); coll == "usertable" {
				loaded.Add(int64(len(c.Sequences["documents"])))
			}
		case "find":
			finds.Add(1)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	out := outPath(t)

	code, stdout, stderr := runMain(t, "run", "../../workloads/ycsb/c.yaml", "--uri", srv.URI(), "--out", out, "--quiet",
		"--no-explain", "--server-stats-interval", "0", "--set", "recordcount=37", "--max-operations", "55")
	if code != 0 {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	if loaded.Load() != 37 || finds.Load() != 55 {
		t.Errorf("the server received %d loaded records and %d reads, want 37 (--set recordcount) and 55 (--max-operations)",
			loaded.Load(), finds.Load())
	}

	res := readResults(t, out)
	spec, _ := res.Workload.Spec.(map[string]any)
	params, _ := spec["params"].([]any)

	found := false

	for _, p := range params {
		if m, _ := p.(map[string]any); m["name"] == "recordcount" {
			found = m["value"] == "37" && m["default"] == "1000" && m["set"] == true
		}
	}

	if !found {
		t.Errorf("results file params %v do not record recordcount 37 set over the default 1000", params)
	}
}

func TestRunParamFlagErrors(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// The rules of --set and of --max-operations on a workload are the
		// workload's (TestParamsErrors, TestSetMaxOperations); these check
		// that the command refuses them before it starts a server.
		{"undeclared", []string{"--set", "scanproportion=0.5"}, `declares no parameter "scanproportion"`},
		{"zero max operations", []string{"--max-operations", "0"}, "--max-operations must be > 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			args := append([]string{"run", "../../workloads/ycsb/c.yaml", "--out", outPath(t)}, tc.args...)

			code, stdout, stderr := runMain(t, args...)
			if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, ExitBadInput, tc.want, stdout, stderr)
			}

			if strings.Contains(stderr, "started embedded FerretDB") {
				t.Errorf("a server was started for bad input:\n%s", stderr)
			}
		})
	}
}

// TestGeneratedArguments checks that a find's limit, skip, cursor batch
// size, sort direction and projection can be generated per call: the
// server sees every value.
func TestGeneratedArguments(t *testing.T) {
	t.Parallel()

	var (
		mu   sync.Mutex
		seen = map[string]map[string]bool{"limit": {}, "skip": {}, "sort": {}, "projection": {}, "batchSize": {}}
	)

	srv, err := wiretest.Start(wiretest.Config{Record: func(c *wiretest.Command) {
		if c.Name != "find" {
			return
		}

		mu.Lock()
		defer mu.Unlock()

		seen["limit"][c.Body.Lookup("limit").String()] = true
		seen["skip"][c.Body.Lookup("skip").String()] = true
		seen["sort"][c.Body.Lookup("sort", "a").String()] = true
		seen["batchSize"][c.Body.Lookup("batchSize").String()] = true

		if keys, err := c.Body.Lookup("projection").Document().Elements(); err == nil && len(keys) == 1 {
			seen["projection"][keys[0].Key()] = true
		}
	}})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	dir := t.TempDir()
	path := filepath.Join(dir, "genargs.yaml")

	if err := os.WriteFile(path, []byte(`name: genargs
database: mongobench_genargs
collections: [{name: c}]
run: {max_operations: 400}
operations:
  - name: q
    op: find
    collection: c
    sort: {a: {^choice: {values: [1, -1]}}}
    projection: {^choice: {values: [{a: 1}, {b: 1}]}}
    limit: {^int: {min: 1, max: 5}}
    skip: {^int: {min: 0, max: 3}}
    batch_size: {^int: {min: 1, max: 3}}
`), 0o600); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runMain(t, "run", path, "--uri", srv.URI(), "--out", filepath.Join(dir, "r.json"), "--quiet",
		"--no-explain", "--server-stats-interval", "0")
	if code != 0 {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	mu.Lock()
	defer mu.Unlock()

	want := map[string]int{"limit": 5, "skip": 4, "sort": 2, "projection": 2, "batchSize": 3} // skip 0 is not sent: one value is "absent"
	for field, n := range want {
		if len(seen[field]) != n {
			t.Errorf("%s: the server saw %d distinct values %v, want %d", field, len(seen[field]), seen[field], n)
		}
	}
}
