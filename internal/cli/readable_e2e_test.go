//go:build e2e

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestEveryResultsFileReadable runs every bundled workload at its smallest
// size, a run on two targets (two wiretest servers) and a run of variants
// on two kinds of embedded target, and reads each results file with every
// command, in-process: Check finds nothing wrong, compare compares it,
// report writes a page and report --csv writes CSV files with rows.
func TestEveryResultsFileReadable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every bundled workload on an embedded FerretDB")
	}

	for _, f := range bundledWorkloads(t) {
		name, err := filepath.Rel("../../workloads", f)
		if err != nil {
			t.Fatal(err)
		}

		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}

			dir := t.TempDir()
			path := filepath.Join(dir, filepath.Base(f))

			if err := os.WriteFile(path, []byte(smallestSize(t, string(text))), 0o600); err != nil {
				t.Fatal(err)
			}

			res := runForResults(t, dir, path)
			assertReadable(t, dir, res)
		})
	}

	t.Run("two targets", func(t *testing.T) {
		var uris []string

		for range 2 {
			srv, err := wiretest.Start(wiretest.Config{})
			if err != nil {
				t.Fatal(err)
			}

			t.Cleanup(func() { _ = srv.Close() })

			uris = append(uris, srv.URI())
		}

		dir := t.TempDir()
		res := runForResults(t, dir, "testdata/small.yaml", "--target", "uri:name=a,"+uris[0], "--target", "uri:name=b,"+uris[1])

		r := readChecked(t, res)
		if r.Kind() != result.KindMatrix || len(r.Matrix.Targets) != 2 {
			t.Fatalf("kind %q with %d targets, want a matrix of two", r.Kind(), len(r.Matrix.Targets))
		}

		// Alone, a matrix file compares its cells with its first one.
		code, stdout, stderr := runMain(t, "compare", res)
		for _, want := range []string{"A  " + res + " [a · small]", "B  " + res + " [b · small]", "B vs A"} {
			if code != 0 || !strings.Contains(stdout, want) {
				t.Errorf("compare of the matrix alone: exit %d, no %q in\n%s\nstderr:\n%s", code, want, stdout, stderr)
			}
		}

		assertReadable(t, dir, res)
	})

	t.Run("variants on two kinds", func(t *testing.T) {
		dir := t.TempDir()
		res := runForResults(t, dir, "testdata/matrix.yaml", "--target", targets.KindEmbedded, "--target", targets.KindEmbeddedMemory)

		r := readChecked(t, res)
		if r.Kind() != result.KindMatrix || len(r.Matrix.Variants) != 3 {
			t.Fatalf("kind %q with %d variants, want a matrix of three", r.Kind(), len(r.Matrix.Variants))
		}

		for _, tr := range r.Matrix.Trials {
			if tr.Result.Target.Kind != tr.Target {
				t.Errorf("trial on %s records target kind %q", tr.Target, tr.Result.Target.Kind)
			}
		}

		assertReadable(t, dir, res)
	})
}

// bundledWorkloads returns every workload under workloads/ that runs on
// this machine: all but those under studies/mongod/, which need a real
// mongod (TestStudiesValidate validates them).
func bundledWorkloads(t *testing.T) []string {
	t.Helper()

	var files []string

	for _, pattern := range []string{"../../workloads/*.yaml", "../../workloads/*/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}

		files = append(files, m...)
	}

	if len(files) < 10 {
		t.Fatalf("found %d bundled workloads, want the ten or so under workloads/", len(files))
	}

	return files
}

// runForResults runs workload with a short measured duration and returns
// the results file's path.
func runForResults(t *testing.T, dir, workload string, args ...string) string {
	t.Helper()

	out := filepath.Join(dir, "results.json")
	base := []string{"run", workload, "--out", out, "--no-explain", "--server-stats-interval", "0", "--quiet"}
	if hasTimedPhase(t, workload) {
		// --duration is refused where no phase is timed by one.
		base = append(base, "--duration", "1s")
	}

	args = append(base, args...)

	code, stdout, stderr := runMain(t, args...)
	if code != 0 {
		t.Fatalf("run: exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	return out
}
