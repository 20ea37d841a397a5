//go:build e2e

package cli

import (
	"context"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

// captureAndRun captures the log fixture with the given capture flags into
// a workload, runs it on the embedded default server and reads its
// results: the results file's path and the results.
func captureAndRun(t *testing.T, flags ...string) (string, *result.Result) {
	t.Helper()

	dir := t.TempDir()
	workloadPath := filepath.Join(dir, "shop.yaml")

	if code, _, stderr := runMain(t, append([]string{"capture", captureFixture, "-o", workloadPath}, flags...)...); code != ExitOK {
		t.Fatalf("capture: exit %d\n%s", code, stderr)
	}

	out := filepath.Join(dir, "res.json")
	if code, _, stderr := runMain(t, "run", workloadPath, "-o", out, "--quiet"); code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}

	res, err := result.Read(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}

	return out, res
}

// TestCaptureRunsEmbedded captures the log fixture as a closed loop and
// runs the workload on the embedded default server: each shape that can run
// is an operation of the run phase (7 of the 9: not the update command whose
// statements the log omits, nor the inserts, which all ran before any other
// operation and are the load step), and no operation fails.
func TestCaptureRunsEmbedded(t *testing.T) {
	out, res := captureAndRun(t, "--closed-loop", "--duration", "3s", "--load-documents", "200")

	ran := 0

	var issued int64

	for _, ph := range res.Phases {
		if ph.Name != "run" {
			continue
		}

		for _, op := range ph.Operations {
			ran++
			issued += op.Count

			for kind, n := range op.Errors {
				t.Errorf("%s: %d errors of kind %s", op.Name, n, kind)
			}
		}
	}

	if ran != 7 {
		t.Errorf("%d operations in the run phase, want the 7 captured shapes of the mix", ran)
	}

	// The fidelity report finds the shape file beside the workload the
	// results name, and lines up every operation. The mix is drawn at
	// random by weight, so over the few hundred operations of a 3 s run
	// on a shared machine it is not exact: the bound is four standard
	// deviations of a share of 50% over the operations run, a sanity
	// check only (the exact figures are TestFidelity* of package capture).
	code, stdout, stderr := runMain(t, "capture", "--fidelity", out)
	if code != ExitOK {
		t.Fatalf("capture --fidelity: exit %d\n%s", code, stderr)
	}

	t.Logf("fidelity report:\n%s", stdout)

	m := regexp.MustCompile(`(?m)^mix within ([0-9.]+) points, p50 within 25% for (\d+) of (\d+) shapes$`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no summary line:\n%s", stdout)
	}

	bound := 100 * 4 * math.Sqrt(0.25/float64(max(issued, 1)))
	if pts, _ := strconv.ParseFloat(m[1], 64); pts > bound {
		t.Errorf("mix %v points from the captured one over %d operations, want <= %.1f", pts, issued, bound)
	}

	if m[3] != "7" {
		t.Errorf("%s shapes compared, want 7 (every shape of the mix ran and has a captured median >= 1 ms)", m[3])
	}

	if strings.Contains(stdout, "that no shape names") || strings.Contains(stderr, "not the file capture wrote") {
		t.Errorf("the run's operations are not all the captured shapes':\n%s\n%s", stdout, stderr)
	}

	// --fidelity-shapes adds the comparison at the proxy after the one at
	// the client. Given the capture's own shape file as the recording, the
	// two sides are the same: 0 points and every p50 within.
	shapes := filepath.Join(filepath.Dir(out), "shop.shapes.json")
	if code, stdout, stderr = runMain(t, "capture", "--fidelity", out, "--fidelity-shapes", shapes); code != ExitOK {
		t.Fatalf("capture --fidelity --fidelity-shapes: exit %d\n%s", code, stderr)
	}

	client, proxy, ok := strings.Cut(stdout, "At the proxy")
	if !ok || !strings.HasPrefix(client, "At the client") || !strings.HasSuffix(proxy, "\nmix within 0.0 points, p50 within 25% for 7 of 7 shapes\n") {
		t.Errorf("--fidelity-shapes with the capture's own shape file: want both reports, the proxy's exact\n%s", stdout)
	}
}

// TestCaptureReplayEmbedded captures the fixture as a replay at speed 5
// (its 21 s timeline in 4.2 s, then a second's grace) and runs it on the
// embedded server: the run phase is the replay model and starts exactly
// the 32 operations of the timeline, so the fidelity report finds the
// captured mix exactly.
func TestCaptureReplayEmbedded(t *testing.T) {
	out, res := captureAndRun(t, "--replay", "--speed", "5", "--load-documents", "200")

	ph := res.MainPhase()

	var issued int64

	for _, op := range ph.Operations {
		issued += op.Count
		for _, n := range op.Errors {
			issued += n
		}
	}

	if ph.Model != "replay" || issued != 32 {
		t.Errorf("model %q, %d operations started; want replay and the timeline's 32", ph.Model, issued)
	}

	code, stdout, stderr := runMain(t, "capture", "--fidelity", out)
	if code != ExitOK {
		t.Fatalf("capture --fidelity: exit %d\n%s", code, stderr)
	}

	t.Logf("fidelity report:\n%s", stdout)

	if !strings.Contains(stdout, "mix within 0.0 points,") {
		t.Errorf("a replay of the whole timeline does not reproduce the captured mix exactly:\n%s", stdout)
	}
}
