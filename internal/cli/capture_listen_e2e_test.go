//go:build e2e

package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mongobench/mongobench/clients"
	"github.com/mongobench/mongobench/internal/base/freeport"
	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/embeddedtest"
)

// appScript is an application that is not mongobench: a shop's order
// service in Python (pymongo), with a fixed seed so that the test knows
// what it did. It prints how many operations of each kind it ran. The same
// file is the application of scripts/capture-fidelity.
const appScript = "../../scripts/capture-app.py"

// pymongoPython returns the Python of the installed python-pymongo client
// stack (its own venv, with the pymongo version mongobench pins), skipping
// as requireStack does when it is not installed.
func pymongoPython(t *testing.T) string {
	t.Helper()
	requireStack(t, "python-pymongo")

	cache, err := client.CacheDir(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}

	in := &client.Installer{Sources: clients.Sources(), Cache: cache}
	s, _ := client.Lookup("python-pymongo")

	argv, err := in.Command(context.Background(), s)
	if err != nil || len(argv) == 0 {
		t.Fatalf("python-pymongo command: %v", err)
	}

	return argv[0]
}

// TestRecordPythonApplication is issue 25's done-when for the wire: a
// Python application that is not mongobench runs against the embedded
// FerretDB through `mongobench record`, and capture turns the recording
// into the shape table of what the application did (each kind of
// operation counted exactly) and a workload that validates.
func TestRecordPythonApplication(t *testing.T) {
	python := pymongoPython(t)

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	e := embeddedtest.Start(t, targets.EmbeddedOptions{})

	port, err := freeport.Loopback()
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	recording := filepath.Join(dir, "app.log")
	listen := "127.0.0.1:" + strconv.Itoa(port)

	r := newCLIRun("record", "--listen", listen, "--upstream", e.URI(), "-o", recording)
	done := r.start()

	waitFor(t, time.Minute, "the proxy's connection string", func() bool { return strings.Contains(r.stdout.String(), listen) })

	cmd := exec.CommandContext(ctx, python, appScript, strings.TrimSpace(r.stdout.String()))
	cmd.Stderr = os.Stderr

	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("the application failed: %v", err)
	}

	var did map[string]int64
	if err := json.Unmarshal(stdout, &did); err != nil {
		t.Fatalf("the application's counts %q: %v", stdout, err)
	}

	r.signals <- syscall.SIGINT

	if code := r.wait(t, done, mainTimeout); code != ExitOK {
		t.Fatalf("record exited %d\n%s", code, r.stderr)
	}

	workload := filepath.Join(dir, "app.yaml")

	code, table, stderr := runMain(t, "capture", recording, "-o", workload, "--duration", "2s")
	if code != ExitOK {
		t.Fatalf("capture exited %d:\n%s", code, stderr)
	}

	// The table: shape, count, share, p50, p99, operation (kind first).
	got := map[string]int64{}

	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[0] == "shape" {
			continue
		}

		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}

		got[f[5]] += n
	}

	for kind, n := range did {
		if got[kind] != n {
			t.Errorf("%s: %d in the shape table, the application ran %d\n%s", kind, got[kind], n, table)
		}
	}

	if len(got) != len(did) {
		t.Errorf("shape table kinds %v, the application's %v\n%s", got, did, table)
	}

	if code, _, stderr := runMain(t, "validate", workload); code != ExitOK {
		t.Fatalf("the captured workload does not validate (%d):\n%s", code, stderr)
	}

	// Nothing but the files the test made: no temporary file of the
	// atomic write is left.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}

	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}

	if strings.Join(names, " ") != "app.log app.shapes.json app.yaml" {
		t.Errorf("the directory holds %v, want app.log, app.shapes.json and app.yaml", names)
	}
}
