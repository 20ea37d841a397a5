package cli

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// fakeMongodEnv makes the test binary act as a mongod: it serves the null
// wire protocol server on the --port it is given until SIGTERM, so that a
// mongod target can be launched from --mongod-binary or MONGOBENCH_MONGOD
// end to end without a real mongod (none is installed here).
const fakeMongodEnv = "MONGOBENCH_CLI_FAKE_MONGOD"

func TestMain(m *testing.M) {
	if os.Getenv(fakeMongodEnv) == "1" {
		os.Exit(runFakeMongod(os.Args[1:]))
	}

	if code, ok := runOutputChild(); ok {
		os.Exit(code)
	}

	os.Exit(runWithOwnKey(m))
}

// runWithOwnKey runs the tests with a configuration directory of their own,
// so that mongobench's owner key (see target.OwnerKeyPath) is made there and
// never in the user's.
func runWithOwnKey(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mongobench-cli-test-config-")
	if err != nil {
		fmt.Println(err)
		return 1
	}

	defer func() { _ = os.RemoveAll(dir) }()

	if err := os.Setenv("XDG_CONFIG_HOME", dir); err != nil {
		fmt.Println(err)
		return 1
	}

	defer func() {
		if builtMongobench.dir != "" {
			_ = os.RemoveAll(builtMongobench.dir)
		}
	}()

	return m.Run()
}

// builtMongobench is mongobench built once for the end-to-end tests that
// run it as a child process (buildBinary, in files tagged e2e), so that
// each of them does not pay for a build of its own; runWithOwnKey removes
// it after the tests.
var builtMongobench struct {
	once sync.Once
	dir  string // temporary directory holding the binary
	path string
	err  error
}

// runFakeMongod is the fake mongod's main function.
func runFakeMongod(args []string) int {
	port := ""

	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--port" {
			port = args[i+1]
		}
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)

	srv, err := wiretest.Start(wiretest.Config{Addr: "127.0.0.1:" + port})
	if err != nil {
		fmt.Println("fake mongod:", err)
		return 48 // mongod's exit code for network errors
	}

	<-sigs
	_ = srv.Close()

	return 0
}

// TestMongodTargetFromFlagAndEnvironment launches a mongod target from
// --mongod-binary and from MONGOBENCH_MONGOD — the test binary acting as a
// fake mongod — runs a workload on it and reads the results file with
// every command. Not verified against a real mongod here.
func TestMongodTargetFromFlagAndEnvironment(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake mongod relies on Unix signals")
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}

	t.Setenv(fakeMongodEnv, "1")

	path := kindsWorkload(t, "targets:\n  - {kind: mongod, mongod: {args: [--quiet]}}\n")

	for _, how := range []string{"flag", "environment"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "results.json")

			args := []string{"run", path, "--out", out, "--no-explain", "--server-stats-interval", "0", "--quiet"}
			if how == "flag" {
				args = append(args, "--mongod-binary", exe)
			}

			r := newCLIRun(args...)

			getenv := r.st.Getenv
			r.st.Getenv = func(k string) string {
				if k == workload.MongodBinaryEnv && how == "environment" {
					return exe
				}

				return getenv(k)
			}

			if code := r.wait(t, r.start(), mainTimeout); code != ExitOK {
				t.Fatalf("exit %d\nstderr:\n%s", code, r.stderr)
			}

			res := readChecked(t, out)
			if res.Kind() != result.KindRun || res.Target.Kind != targets.KindMongod {
				t.Errorf("result kind %q, target kind %q; want a run on a mongod target", res.Kind(), res.Target.Kind)
			}

			assertReadable(t, dir, out)
		})
	}
}
