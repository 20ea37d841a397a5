package cli

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mongobench/mongobench/internal/wiretest"
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
		{"undeclared", []string{"--set", "scanproportion=0.5"}, `declares no parameter "scanproportion"`},
		{"wrong type", []string{"--set", "recordcount=many"}, `--set recordcount=many: "many" is not a valid int`},
		{"not a value", []string{"--set", "requestdistribution=gaussian"}, `"gaussian" is not one of uniform, zipfian`},
		{"zero max operations", []string{"--max-operations", "0"}, "--max-operations must be > 0"},
		{"max operations of blocks", []string{"--max-operations", "5"}, "--max-operations applies to phases that run for a duration or a number of operations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			file := "../../workloads/ycsb/c.yaml"
			if strings.Contains(tc.name, "blocks") {
				file = "../../workloads/examples/growth.yaml" // its phase ends by growth blocks
			}

			args := append([]string{"run", file, "--out", outPath(t)}, tc.args...)

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
