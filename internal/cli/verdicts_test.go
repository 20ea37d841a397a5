package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/verdict"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// startNullServer starts an in-process wiretest server on a free loopback
// port that holds every reply for delay, closed at the end of the test.
func startNullServer(t *testing.T, delay time.Duration) *wiretest.Server {
	t.Helper()

	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(delay)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	return srv
}

// readMatrix reads a comparison run's results file, checked as
// readResults checks every results file.
func readMatrix(t *testing.T, path string) *result.Matrix {
	t.Helper()

	res := readResults(t, path)
	if res.Kind() != result.KindMatrix {
		t.Fatalf("%s holds a result of kind %q, not a matrix", path, res.Kind())
	}

	return res.Matrix
}

func parseFloat(t *testing.T, s string) float64 {
	t.Helper()

	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}

	return f
}

// TestRunTwoTargetsVerdict runs a workload without variants on two
// --target uri:… servers, one answering in 1 ms and one in 20 ms, with the
// default rounds: the rounds must alternate between the targets in ABBA
// order, and the verdict must call the 20 ms server slower with a
// confidence interval that excludes 1. The server cannot answer sooner than
// its delay, and 19 ms is far more than a loaded machine adds to a loopback
// round trip, so the direction holds on any machine; how many times slower
// is a measurement and is not asserted.
func TestRunTwoTargetsVerdict(t *testing.T) {
	fast := startNullServer(t, time.Millisecond)
	slow := startNullServer(t, 20*time.Millisecond)

	out := outPath(t)
	md := strings.TrimSuffix(out, ".json") + ".md"

	code, stdout, stderr := runMain(t, "run", "testdata/null_insert.yaml", "--out", out, "--markdown", md, "--quiet",
		"--no-explain", "--server-stats-interval", "0",
		"--target", "uri:name=fast,"+fast.URI(), "--target", "uri:name=slow,"+slow.URI())
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	m := readMatrix(t, out)
	if m == nil {
		t.Fatal("no matrix in the results file")
	}

	if m.Rounds != workload.DefaultRounds {
		t.Errorf("%d rounds, want the default %d", m.Rounds, workload.DefaultRounds)
	}

	// The trials in the order they ran: fast slow, slow fast, fast slow, …
	var order []string
	for i, tr := range m.Trials {
		order = append(order, fmt.Sprintf("%s%d", tr.Target, tr.Round))

		if i > 0 && tr.Result.StartedAt.Before(m.Trials[i-1].Result.StartedAt) {
			t.Errorf("trial %d started before trial %d", i, i-1)
		}
	}

	want := "fast1 slow1 slow2 fast2 fast3 slow3 slow4 fast4 fast5 slow5 slow6 fast6"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("trial order\n got %s\nwant %s", got, want)
	}

	p50 := findVerdict(m, analysis.CrossTarget, "add", "p50")
	if p50 == nil {
		t.Fatalf("no cross-target p50 verdict: %+v", m.Verdicts)
	}

	cells := map[string]result.CellVerdict{}
	for _, cv := range p50.Variants {
		cells[cv.Variant] = cv
	}

	if f := cells["fast"]; f.Kind != verdict.Reference || !f.Best {
		t.Errorf("fast: %+v, want the reference", f)
	}

	s := cells["slow"]
	if s.Kind != verdict.Difference || s.RatioLo <= 1 || s.RatioLo > s.Ratio || s.Ratio > s.RatioHi {
		t.Errorf("slow: %+v, want a difference with a CI excluding 1", s)
	}

	if !regexp.MustCompile(`^\d+(?:\.\d+)?× higher, 95% CI \d+(?:\.\d+)?×–\d+(?:\.\d+)?×$`).MatchString(s.Text) {
		t.Errorf("slow: text %q", s.Text)
	}

	// Throughput has a verdict too; on a loaded machine one round can go
	// the other way, which six rounds cannot outvote, so its kind is not
	// asserted (p50's is, above).
	if tp := findVerdict(m, analysis.CrossTarget, "add", "throughput"); tp == nil || !strings.Contains(stdout, "add — throughput (ops/s)") {
		t.Errorf("no throughput verdict in the matrix:\n%s", stdout)
	}

	if data, err := os.ReadFile(md); err != nil || !regexp.MustCompile(`\| \d+\.\d+ms — \d+(?:\.\d+)?× higher, 95% CI \d+(?:\.\d+)?×–\d+(?:\.\d+)?× \|`).Match(data) {
		t.Errorf("Markdown lacks the p50 verdict with its interval (%v):\n%s", err, data)
	}

	if strings.Contains(stdout+stderr, "same-ish") {
		t.Errorf("old verdict wording:\n%s\n%s", stdout, stderr)
	}

	assertNoStackTrace(t, stdout+stderr)
}

// TestRunTooFewRoundsInconclusive runs two targets with --rounds 2: allowed,
// with a warning, and every comparison is inconclusive. Every variant but
// the reference is checked, whichever had the best median: on a loaded
// machine the 5 ms server's p99 may come out below the 1 ms one's, and
// which is faster is not what this test is about.
func TestRunTooFewRoundsInconclusive(t *testing.T) {
	fast := startNullServer(t, time.Millisecond)
	slow := startNullServer(t, 5*time.Millisecond)

	out := outPath(t)

	code, stdout, stderr := runMain(t, "run", "testdata/null_insert.yaml", "--out", out, "--quiet", "--rounds", "2",
		"--no-explain", "--server-stats-interval", "0", "--duration", "500ms",
		"--target", "uri:name=fast,"+fast.URI(), "--target", "uri:name=slow,"+slow.URI())
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	if !strings.Contains(stderr, "Warning: 2 round(s) are fewer than the 6 a 95% confidence interval needs") {
		t.Errorf("no warning:\n%s", stderr)
	}

	m := readMatrix(t, out)
	if m.Rounds != 2 || len(m.Trials) != 4 {
		t.Fatalf("%d rounds, %d trials", m.Rounds, len(m.Trials))
	}

	compared := 0

	for _, mv := range m.Verdicts {
		for _, cv := range mv.Variants {
			// The reference (the first target) is what the others are
			// compared with: it carries no verdict of its own.
			if cv.Kind != verdict.Reference {
				compared++
			}

			if cv.Kind != verdict.Reference && (cv.Kind != verdict.Inconclusive || cv.Text != "inconclusive: 2 rounds, at least 6 needed") {
				t.Errorf("%s %s %s: %+v", mv.Target, mv.Operation, mv.Metric, cv)
			}
		}
	}

	if compared == 0 {
		t.Errorf("no verdict compares a variant with a reference: %+v", m.Verdicts)
	}

	if code, _, stderr := runMain(t, "run", "testdata/null_insert.yaml", "--rounds", "0", "--target", "uri:"+fast.URI()); code != ExitBadInput ||
		!strings.Contains(stderr, "--rounds must be between 1 and 1000") {
		t.Errorf("--rounds 0: exit %d\n%s", code, stderr)
	}
}

// TestCompareRealRuns compares real runs against null servers answering in
// 1 ms and 20 ms, four runs a side (directories): the verdict is a
// difference with an interval that excludes 1 (its size is a measurement,
// not asserted; see TestRunTwoTargetsVerdict), and the
// p50 gate fails. One run a side of the same servers is inconclusive, and
// its gate says so and passes.
func TestCompareRealRuns(t *testing.T) {
	dir := t.TempDir()
	sides := map[string]string{}

	for name, delay := range map[string]time.Duration{"fast": time.Millisecond, "slow": 20 * time.Millisecond} {
		srv := startNullServer(t, delay)
		sides[name] = filepath.Join(dir, name)

		for i := range analysis.CompareMinRuns {
			out := filepath.Join(sides[name], fmt.Sprintf("run%d.json", i))

			code, stdout, stderr := runMain(t, "run", "testdata/null_insert.yaml", "--uri", srv.URI(), "--out", out,
				"--duration", "1s", "--quiet", "--no-explain", "--server-stats-interval", "0")
			if code != ExitOK {
				t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", name, code, stdout, stderr)
			}
		}
	}

	code, stdout, stderr := runMain(t, "compare", sides["fast"], sides["slow"], "--fail-if", "p50 +50%")
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d (the p50 gate fails)\nstdout:\n%s\nstderr:\n%s", code, ExitFailed, stdout, stderr)
	}

	v := verdictCells(t, stdout, "add")

	// p50 only: on a loaded machine one of four 1-second runs can lose
	// most of its throughput, which four runs a side cannot outvote.
	for metric, word := range map[string]string{"p50": "higher"} {
		m := regexp.MustCompile(`^(\d+(?:\.\d+)?)× ` + word + `, 95% CI (\d+(?:\.\d+)?)×–(\d+(?:\.\d+)?)×$`).FindStringSubmatch(v[metric])
		if m == nil {
			t.Errorf("%s verdict %q, want a difference with its interval", metric, v[metric])
			continue
		}

		ratio, lo, hi := parseFloat(t, m[1]), parseFloat(t, m[2]), parseFloat(t, m[3])
		if lo <= 1 || lo > ratio || hi < ratio {
			t.Errorf("%s verdict %q, want a difference with a CI excluding 1", metric, v[metric])
		}
	}

	if !strings.Contains(stderr, `FAIL --fail-if "p50 +50%": add: B`) {
		t.Errorf("stderr:\n%s", stderr)
	}

	if strings.Contains(stdout, "round") {
		t.Errorf("compare output speaks of rounds:\n%s", stdout)
	}

	// One run a side: 20× apart, and still one observation each.
	one := func(name string) string { return filepath.Join(sides[name], "run0.json") }

	code, stdout, stderr = runMain(t, "compare", one("fast"), one("slow"), "--fail-if", "p50 +50%")
	if code != ExitOK || !strings.HasPrefix(verdictCells(t, stdout, "add")["p50"], "inconclusive: 1 run a side") ||
		!strings.Contains(stderr, "can establish nothing") {
		t.Errorf("one run a side: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
