//go:build e2e

package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets/pglaunch/pglaunchtest"
)

// durabilityWorkload is a small durability study: one insert per trial on
// each target, then the durability phase crashes a server of each kind
// once 1,000 documents are acknowledged.
const durabilityWorkload = `name: crash
database: mongobench_crash
collections: [{name: items}, {name: acked}]
run: {concurrency: 1, max_error_rate: 0}
phases:
  - {name: run, operations: [insert], max_operations: 2}
operations:
  - {name: insert, op: insertOne, collection: items, document: {n: 1}, write_concern: {w: 1}}
durability: {collection: acked, documents: 1000, batch_size: 50, concurrency: 3, operation: insert}
targets:
  - {name: sqlite, kind: embedded}
  - {name: memory, kind: embedded-memory}
  - {name: pg_sync, kind: ferretdb-postgres, settings: {synchronous_commit: "on"}}
  - {name: pg_async, kind: ferretdb-postgres, settings: {synchronous_commit: "off"}}
`

// TestDurabilityPhaseCrashesServers runs the built binary on a workload
// with a durability phase: each target's server (a mongobench serve child
// process for the embedded kinds, PostgreSQL for ferretdb-postgres) is
// killed with SIGKILL under load, restarted, and its acknowledged writes
// counted. SQLite files and PostgreSQL with synchronous_commit=on keep
// every acknowledged document; in-memory SQLite, the positive control,
// loses every one, which shows that the count finds losses. Afterwards no
// process runs from the run's temporary directory and nothing is left in
// it.
func TestDurabilityPhaseCrashesServers(t *testing.T) {
	pglaunchtest.Require(t)

	bin := buildBinary(t)

	// PostgreSQL runs as the postgres user under root: it must be able to
	// enter the directory (t.TempDir's parent is 0700).
	dir, err := os.MkdirTemp("", "mongobench-durability-e2e-")
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = os.RemoveAll(dir) })

	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	work := filepath.Join(dir, "crash.yaml")
	if err := os.WriteFile(work, []byte(durabilityWorkload), 0o644); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "results.json")

	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()

	cmd := exec.CommandContext(ctx, bin, "run", work, "--out", out, "--rounds", "1", "--no-explain", "--quiet")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)

	combined, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mongobench run: %v\n%s", err, combined)
	}

	assertNoStackTrace(t, string(combined))

	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}

	var res result.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}

	got := map[string]result.Durability{}
	for _, d := range res.Durability {
		got[d.Target] = d
	}

	for _, name := range []string{"sqlite", "memory", "pg_sync", "pg_async"} {
		d, ok := got[name]
		if !ok {
			t.Errorf("no durability row for %s in %+v", name, res.Durability)
			continue
		}

		if d.Error != "" {
			t.Errorf("%s: %s", name, d.Error)
			continue
		}

		if d.Acknowledged < 1000 || d.Crash == "" || d.WriteConcern != "w:1" {
			t.Errorf("%s: %d acknowledged (want at least 1,000), crash %q, write concern %q", name, d.Acknowledged, d.Crash, d.WriteConcern)
		}

		if d.Present < d.Acknowledged-d.Lost {
			t.Errorf("%s: %d present, fewer than the %d acknowledged and kept", name, d.Present, d.Acknowledged-d.Lost)
		}
	}

	for _, name := range []string{"sqlite", "pg_sync"} {
		if d := got[name]; d.Lost != 0 {
			t.Errorf("%s lost %d of %d acknowledged documents after a process crash; it must keep them", name, d.Lost, d.Acknowledged)
		}
	}

	if d := got["memory"]; d.Lost != d.Acknowledged || d.Present != 0 {
		t.Errorf("memory (the positive control) lost %d of %d, %d present; a crash must lose everything it held", d.Lost, d.Acknowledged, d.Present)
	}

	if !strings.Contains(string(combined), "Answer (cost: insert p50; buys: acknowledged documents lost after a crash under load): sqlite ") {
		t.Errorf("no answer line in the output:\n%s", combined)
	}

	// Nothing the run started is still running: no process has the run's
	// directory on its command line (the serve children's --data-dir,
	// PostgreSQL's -D).
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}

	for _, p := range procs {
		cl, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}

		if strings.Contains(string(cl), dir) {
			t.Errorf("still running after the run: %s: %s", p, strings.ReplaceAll(string(cl), "\x00", " "))
		}
	}

	// Nothing left in the directory but the inputs and outputs.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}

	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "mongobench-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
