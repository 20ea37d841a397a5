package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/clients"
	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/results/result"
)

// requireStack skips the test when the stack's adapter is not installed
// in the user's cache, the only reason a stack test may skip: .ci/run
// installs them.
func requireStack(t *testing.T, name string) {
	t.Helper()

	cache, err := client.CacheDir(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}

	in := &client.Installer{Sources: clients.Sources(), Cache: cache}
	s, _ := client.Lookup(name)

	if _, err := in.Command(context.Background(), s); err != nil {
		// CI installs every stack, so there a missing one is a failure,
		// not a silent skip.
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed, and CI must run it: %v", name, err)
		}

		t.Skipf("%s not installed: run mongobench clients install (%v)", name, err)
	}
}

// adapterChildren lists this process's child processes that run an
// adapter (adapter.js, adapter.py): none may outlive a run.
func adapterChildren(t *testing.T) []string {
	t.Helper()

	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to look for processes: %v", err)
	}

	self := strconv.Itoa(os.Getpid())

	var out []string

	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}

		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}

		// The parent pid is the 4th field, after the command in parentheses.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		if f := strings.Fields(rest); len(f) < 2 || f[1] != self {
			continue
		}

		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if c := strings.ReplaceAll(string(cmdline), "\x00", " "); strings.Contains(c, "adapter.") {
			out = append(out, e.Name()+": "+c)
		}
	}

	return out
}

// TestRunClientStacks runs the small workload through the Node.js driver
// and PyMongo adapters against the embedded FerretDB, with a profile:
// every operation is measured by the stack, the results and the header
// name the stack and its versions, the profile's top frames are recorded,
// and no adapter process is left.
func TestRunClientStacks(t *testing.T) {
	for _, tc := range []struct {
		stack    string
		versions []string
		auto     bool // --client-profile without a value
	}{
		{"node-driver", []string{"node", "mongodb"}, false},
		{"python-pymongo", []string{"python", "pymongo"}, true},
	} {
		t.Run(tc.stack, func(t *testing.T) {
			requireStack(t, tc.stack)

			out := outPath(t)
			prof, flag := filepath.Join(t.TempDir(), "prof"), "--client-profile="
			if tc.auto {
				prof, flag = strings.TrimSuffix(out, ".json")+".client", "--client-profile"
			} else {
				flag += prof
			}

			// Bounded by operations, not small.yaml's 1.5 s: on a loaded
			// machine an adapter's first operations can take that long.
			code, stdout, stderr := runMain(t, "run", countedWorkload(t, 200), "--client", tc.stack, flag, "--out", out)
			if code != ExitOK {
				t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}

			if !strings.Contains(stderr, "Client: "+tc.stack+" (") {
				t.Errorf("stderr does not name the client stack:\n%s", stderr)
			}

			if !strings.Contains(stdout, "small on FerretDB") || !strings.Contains(stdout, " through "+tc.stack+" (") {
				t.Errorf("the table's title does not name the client stack:\n%s", stdout)
			}

			res := readResults(t, out)
			if res.Client == nil || res.Client.Stack != tc.stack {
				t.Fatalf("results record client %+v, want stack %s", res.Client, tc.stack)
			}

			if p := res.Client.Profile; p == nil || p.Prefix != prof || len(p.Frames) == 0 {
				t.Errorf("results record profile %+v, want frames from %s.top.json", p, prof)
			}

			if _, err := os.Stat(prof + ".top.json"); err != nil {
				t.Errorf("the adapter wrote no profile summary: %v", err)
			}

			for _, v := range tc.versions {
				if res.Client.Versions[v] == "" {
					t.Errorf("results record no %s version: %v", v, res.Client.Versions)
				}
			}

			run := phase(res, "run")
			if run == nil {
				t.Fatal("no run phase in the results")
			}

			for _, name := range smallOps {
				found := false

				for _, o := range run.Operations {
					if o.Name == name {
						found = true

						if o.Count == 0 {
							t.Errorf("%s: no operation succeeded through %s (errors %v)", name, tc.stack, o.Errors)
						}
					}
				}

				if !found {
					t.Errorf("no row for %s", name)
				}
			}

			if left := adapterChildren(t); len(left) > 0 {
				t.Errorf("adapter processes left after the run: %v", left)
			}
		})
	}
}

// TestRunClientInterrupt interrupts a run through the Node.js driver
// adapter: the run stops (interrupted, not completed: it was to measure for
// 10 minutes), writes the results so far and leaves no adapter process.
func TestRunClientInterrupt(t *testing.T) {
	requireStack(t, "node-driver")

	out := outPath(t)
	r := newCLIRun("run", "testdata/small.yaml", "--client", "node-driver", "--duration", "10m", "--out", out)
	done := r.start()

	waitFor(t, setupLimit, "a measured interval with operations", func() bool {
		return busyIntervalRe.MatchString(r.stderr.String())
	})

	// The check for leftovers below must be able to see an adapter.
	if len(adapterChildren(t)) == 0 {
		t.Error("no adapter process seen while the run measured")
	}

	r.signals <- os.Interrupt

	code := r.wait(t, done, mainTimeout)
	if code != ExitFailed {
		t.Errorf("exit code %d, want %d\nstderr:\n%s", code, ExitFailed, r.stderr)
	}

	res := readResults(t, out)
	if res.Status != result.StatusInterrupted {
		t.Errorf("status %q, want %q", res.Status, result.StatusInterrupted)
	}

	if ok, _ := totals(res.Operations); ok == 0 {
		t.Errorf("no measured operation in the results of the interrupted run")
	}

	if left := adapterChildren(t); len(left) > 0 {
		t.Errorf("adapter processes left after the interrupt: %v", left)
	}
}

// TestRunClientNotInstalled checks the one-line error for a stack whose
// adapter is not installed, given before any server starts.
func TestRunClientNotInstalled(t *testing.T) {
	t.Parallel()

	r := newCLIRun("run", "testdata/small.yaml", "--client", "python-mongoengine", "--out", outPath(t))
	cache := t.TempDir()
	r.st.Getenv = func(k string) string {
		if k == "XDG_CACHE_HOME" {
			return cache
		}

		return ""
	}

	code := r.wait(t, r.start(), mainTimeout)
	stderr := r.stderr.String()

	if code != ExitBadInput || !strings.Contains(stderr, "client python-mongoengine is not installed: run mongobench clients install python-mongoengine") {
		t.Errorf("exit code %d, stderr:\n%s", code, stderr)
	}

	if strings.Contains(stderr, "started embedded FerretDB") {
		t.Errorf("a server was started for a stack that cannot run:\n%s", stderr)
	}
}

// TestRunClientValidation checks that --client is checked, by name and
// against what the workload does, with positioned errors and exit code 2.
func TestRunClientValidation(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	path := filepath.Join(dir, "w.yaml")

	src := "name: w\ndatabase: d\ncollections: [{name: c}]\nrun:\n  duration: 1s\n  rate: 10\n" +
		"operations:\n  - name: wipe\n    op: drop\n    collection: c\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}

	code, _, stderr := runMain(t, "run", path, "--client", "node-prisma")
	if code != ExitBadInput || !strings.Contains(stderr, `--client: unknown client "node-prisma" (known: go, node-driver,`) {
		t.Errorf("unknown client: exit %d, stderr:\n%s", code, stderr)
	}

	code, _, stderr = runMain(t, "run", path, "--client", "node-mongoose")
	if code != ExitBadInput {
		t.Errorf("exit code %d, want %d", code, ExitBadInput)
	}

	for _, want := range []string{
		path + ":5:3: run: client node-mongoose runs closed-loop phases only; this phase's load model is rate",
		path + `:9:9: operations[0].op: operation "wipe": client node-mongoose has no call for kind drop`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}

	code, _, stderr = runMain(t, "run", "testdata/small.yaml", "--client-profile=/tmp/never")
	if code != ExitBadInput || !strings.Contains(stderr, "--client-profile profiles an external client's adapter; this run uses client go") {
		t.Errorf("--client-profile with client go: exit %d, stderr:\n%s", code, stderr)
	}

	assertNoStackTrace(t, stderr)
}

// TestRunClientSecondInterrupt sends two interrupts to a run through the
// Node.js driver adapter: the forced exit kills the adapter before Exit is
// called, so that nothing outlives mongobench.
func TestRunClientSecondInterrupt(t *testing.T) {
	requireStack(t, "node-driver")

	r := newCLIRun("run", "testdata/small.yaml", "--client", "node-driver", "--duration", "10m", "--out", outPath(t))
	r.st.steps.burst = time.Nanosecond

	leftAtExit := make(chan []string, 1)
	r.onExit = func(int) { leftAtExit <- adapterChildren(t) }

	done := r.start()

	waitFor(t, setupLimit, "a measured interval", func() bool { return measuredIntervalRe.MatchString(r.stderr.String()) })

	if len(adapterChildren(t)) == 0 {
		t.Error("no adapter process seen while the run measured")
	}

	r.signals <- os.Interrupt
	r.signals <- os.Interrupt

	select {
	case left := <-leftAtExit:
		if len(left) > 0 {
			t.Errorf("adapter processes alive when Exit was called: %v", left)
		}
	case <-time.After(mainTimeout):
		t.Fatalf("Exit was not called after a second interrupt\nstderr:\n%s", r.stderr)
	}

	// In a real process Exit does not return; here Main goes on and must
	// still end.
	r.waitAllowPanic(t, done, mainTimeout)
}

// TestClientsList checks `mongobench clients` with an empty cache: every
// stack listed, go ready, the others not installed (or their runtime
// missing), and the cache directory named.
func TestClientsList(t *testing.T) {
	t.Parallel()

	cache := t.TempDir()
	r := newCLIRun("clients")
	r.st.Getenv = func(k string) string {
		if k == "XDG_CACHE_HOME" {
			return cache
		}

		return ""
	}

	if code := r.wait(t, r.start(), mainTimeout); code != ExitOK {
		t.Fatalf("exit code %d\nstderr:\n%s", code, r.stderr)
	}

	out := r.stdout.String()

	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = l
		}
	}

	if !strings.Contains(rows["go"], "ready") {
		t.Errorf("go is not ready: %q", rows["go"])
	}

	for _, s := range client.Stacks() {
		l := rows[s.Name]
		if !strings.Contains(l, "not installed") && !strings.Contains(l, "runtime missing") {
			t.Errorf("%s in an empty cache: %q", s.Name, l)
		}
	}

	if !strings.Contains(out, filepath.Join(cache, "mongobench", "clients")) {
		t.Errorf("the listing does not name the cache directory:\n%s", out)
	}
}

// TestClientsInstallUnknown checks that installing a stack that does not
// exist is bad input, with the stacks that do.
func TestClientsInstallUnknown(t *testing.T) {
	t.Parallel()

	code, _, stderr := runMain(t, "clients", "install", "node-prisma")
	if code != ExitBadInput || !strings.Contains(stderr, `unknown client stack "node-prisma" (installable: node-driver, node-mongoose,`) {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}
