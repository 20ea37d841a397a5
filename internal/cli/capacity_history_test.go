package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
)

// history over capacity results tracks each search's maximum sustainable
// rate with its interval, and --fail-on-regression 'max_rate -10%' fails on
// a drop. The files are one real search's results (capacity against the
// test server), written again as twelve searches, the last six at 70% of
// the first six's capacity: the rate of a real search depends on the
// machine, the detector's input must not.
func TestHistoryOfCapacitySearches(t *testing.T) {
	srv := startNullServer(t, time.Millisecond)

	path := capacityProbe(t, "capacity_history", "")
	searched := filepath.Join(t.TempDir(), "search.json")

	code, stdout, stderr := runMain(t, "capacity", path, "--uri", srv.URI(), "--out", searched, "--slo", "p99 < 2s",
		"--start-rate", "50", "--max-rate", "100", "--step-duration", "300ms", "--max-step-duration", "600ms", "--warmup", "50ms")
	if code != 0 {
		t.Fatalf("capacity exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	dir := t.TempDir()

	for i := range 12 {
		res, err := result.Read(context.Background(), searched)
		if err != nil {
			t.Fatal(err)
		}

		rate := 1000 * (1 + 0.01*float64(i%3-1))
		if i >= 6 {
			rate *= 0.7
		}

		res.StartedAt = res.StartedAt.Add(time.Duration(i) * time.Hour)
		res.Label = fmt.Sprintf("build-%02d", i+1)
		res.Capacity.MaxRate, res.Capacity.MaxRateCI = rate, [2]float64{0.97 * rate, 1.03 * rate}

		if err := result.WriteFile(filepath.Join(dir, fmt.Sprintf("search-%02d.json", i+1)), res); err != nil {
			t.Fatal(err)
		}
	}

	code, stdout, stderr = runMain(t, "history", dir, "--fail-on-regression", "max_rate -10%")
	if code != ExitRegression {
		t.Fatalf("history exit %d, want %d (a 30%% drop of the capacity)\nstdout:\n%s\nstderr:\n%s", code, ExitRegression, stdout, stderr)
	}

	for _, want := range []string{
		"max sustainable rate (p99 < 2s) per run:",
		"1. " + filepath.Join(dir, "search-01.json") + " (build-01): 990.0 ops/s (95% CI 960.3–1019.7)",
		"8. " + filepath.Join(dir, "search-08.json") + " (build-08): 700.0 ops/s (95% CI 679.0–721.0)",
		"all max_rate:",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("history's output lacks %q:\n%s", want, stdout)
		}
	}

	if !strings.Contains(stderr, `Regression (--fail-on-regression "max_rate -10%")`) || !strings.Contains(stderr, "search-07.json") {
		t.Errorf("stderr %q, want the regression starting at the seventh search", stderr)
	}

	// The same files pass a gate they do not break.
	if code, stdout, stderr := runMain(t, "history", dir, "--fail-on-regression", "max_rate -40%"); code != 0 {
		t.Errorf("history with a 40%% limit: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
