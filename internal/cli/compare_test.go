package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/metrics"
	"github.com/mongobench/mongobench/internal/targets"
)

// compareRun describes a synthetic run for the compare tests.
type compareRun struct {
	// tail multiplies find_by_id's slowest 5% of latencies, which are
	// what its p99 measures; the rest (p50, p90) is the same in every run.
	tail float64
	// finds is find_by_id's operations per one-second interval.
	finds int
	// seed varies the tail's noise.
	seed uint64
	// intervals is the number of one-second intervals, 20 if 0.
	intervals int
}

// writeCompareRun records a run phase (20 intervals by default) with real histograms
// through metrics.Registry and result.NewPhase, writes it to path
// and checks that the file is consistent.
func writeCompareRun(t *testing.T, path string, run compareRun) {
	t.Helper()

	start := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	reg := metrics.NewRegistry([]string{"find_by_id", "insert"})
	reg.Reset(start)

	h := reg.NewHandle()
	body := rand.New(rand.NewPCG(1, 2)) // identical in every run
	tail := rand.New(rand.NewPCG(run.seed, 3))

	intervals := run.intervals
	if intervals == 0 {
		intervals = 20
	}

	for n := range intervals {
		for i := range run.finds {
			lat := 900 + 200*body.Float64() // µs
			if i%20 == 0 {
				lat = 5000 * run.tail * (1 + 0.02*(tail.Float64()-0.5))
			}

			h.Record(0, time.Duration(lat*float64(time.Microsecond)), 1, "")
		}

		// insert: nothing in the first interval (no latency measured
		// there), then 50 at about 2ms.
		for i := range 50 {
			if n > 0 {
				h.Record(1, time.Duration(1900+4*i)*time.Microsecond, 1, "")
			}
		}

		reg.Tick(start.Add(time.Duration(n+1) * time.Second))
	}

	phase, err := result.NewPhase(result.PhaseRun, time.Second, reg.Intervals())
	if err != nil {
		t.Fatal(err)
	}

	res := &result.Result{
		SchemaVersion:     result.SchemaVersion,
		MongobenchVersion: "v0.0.0-test",
		Workload:          result.Workload{Name: "compare-test"},
		Target:            result.Target{Kind: targets.KindURI, URI: "mongodb://localhost:27017"},
		StartedAt:         start,
		DurationS:         21,
		Seed:              1,
		Concurrency:       2,
		Status:            result.StatusCompleted,
	}
	res.AddPhase(phase)

	if err := result.WriteFile(path, res); err != nil {
		t.Fatal(err)
	}

	readResults(t, path) // fails the test if Check objects
}

// compareFixture holds the sides shared by the compare tests: directories
// of five runs each.
type compareFixture struct {
	base string // the baseline
	cand string // find_by_id's p99 30% higher, everything else equal
	same string // five more runs like base's
	slow string // find_by_id's throughput 20% lower (160 instead of 200 ops/s)
}

// writeCompareSide writes runs of run into a new directory dir, one seed
// each from seed on.
func writeCompareSide(t *testing.T, dir string, run compareRun, runs int) {
	t.Helper()

	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	for i := range runs {
		r := run
		r.seed = run.seed + uint64(i)
		writeCompareRun(t, filepath.Join(dir, fmt.Sprintf("run%d.json", i)), r)
	}
}

// TestCompare runs the compare tests on results files written once.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	fx := &compareFixture{
		base: filepath.Join(dir, "base"),
		cand: filepath.Join(dir, "cand"),
		same: filepath.Join(dir, "same"),
		slow: filepath.Join(dir, "slow"),
	}
	writeCompareSide(t, fx.base, compareRun{tail: 1, finds: 200, seed: 10}, 5)
	writeCompareSide(t, fx.cand, compareRun{tail: 1.3, finds: 200, seed: 20}, 5)
	writeCompareSide(t, fx.same, compareRun{tail: 1, finds: 200, seed: 30}, 5)
	writeCompareSide(t, fx.slow, compareRun{tail: 1, finds: 160, seed: 10}, 5)

	for _, tc := range []struct {
		name string
		test func(*testing.T, *compareFixture)
	}{
		{"FailIfP99Regression", testCompareFailIfP99Regression},
		{"FailIfWithinThreshold", testCompareFailIfWithinThreshold},
		{"FailIfOperation", testCompareFailIfOperation},
		{"FailIfAnyMetric", testCompareFailIfAnyMetric},
		{"ThroughputGate", testCompareThroughputGate},
		{"IdenticalFiles", testCompareIdenticalFiles},
		{"BadExpression", testCompareBadExpression},
		{"UnreadableFiles", testCompareUnreadableFiles},
		{"Markdown", testCompareMarkdown},
		{"OutputExample", testCompareOutputExample},
		{"OneRunASide", testCompareOneRunASide},
		{"CommaList", testCompareCommaList},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.test(t, fx)
		})
	}
}

// verdictCells returns the verdict column of each metric row of an
// operation's table in compare's text output (two files).
func verdictCells(t *testing.T, stdout, op string) map[string]string {
	t.Helper()

	i := strings.Index(stdout, "\n"+op+"\n")
	if i < 0 {
		t.Fatalf("no table for %s in:\n%s", op, stdout)
	}

	out := map[string]string{}
	row := regexp.MustCompile(`^  (throughput|mean|p50|p90|p99) +(\S+(?: ops/s)?) +(\S+(?: ops/s)?)  (.+)$`)

	for _, line := range strings.Split(stdout[i+len(op)+2:], "\n") {
		if line == "" {
			break
		}

		if m := row.FindStringSubmatch(line); m != nil {
			out[m[1]] = m[4]
		}
	}

	if len(out) != 5 {
		t.Fatalf("table for %s has %d metric rows, want 5:\n%s", op, len(out), stdout)
	}

	return out
}

func testCompareFailIfP99Regression(t *testing.T, fx *compareFixture) {
	base, cand := fx.base, fx.cand

	code, stdout, stderr := runMain(t, "compare", base, cand, "--fail-if", "p99 +10%", "--fail-if", "throughput -5%")
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitFailed, stdout, stderr)
	}

	v := verdictCells(t, stdout, "find_by_id")
	if !regexp.MustCompile(`^1\.(29|30|31)× higher, 95% CI 1\.(2\d|30)×–1\.(29|3\d)×$`).MatchString(v["p99"]) {
		t.Errorf("p99 verdict %q, want about 1.30× higher", v["p99"])
	}

	for _, m := range []string{"throughput", "p50", "p90"} {
		if v[m] != "no meaningful difference (within ±5%; 95% CI 1.00×–1.00×)" {
			t.Errorf("%s verdict %q, want no meaningful difference", m, v[m])
		}
	}

	fail := regexp.MustCompile(`(?m)^FAIL --fail-if "p99 \+10%": find_by_id: B \(\S*cand\) p99 \S+ → \S+: \+(29|30|31)\.\d%, .*\(p=0\.\d+\)$`)
	if !fail.MatchString(stderr) {
		t.Errorf("stderr does not name the failed p99 check:\n%s", stderr)
	}

	if strings.Count(stderr, "FAIL") != 1 || !strings.Contains(stderr, `ok   --fail-if "throughput -5%"`) {
		t.Errorf("want exactly one failure, throughput ok:\n%s", stderr)
	}

	if !strings.Contains(stderr, "Error: 1 --fail-if check(s) failed") {
		t.Errorf("stderr:\n%s", stderr)
	}

	for _, s := range []string{"A  " + base, "B  " + cand, "5 runs", "Each run is one sample", "Mann-Whitney"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}

	assertNoStackTrace(t, stdout+stderr)
}

func testCompareFailIfWithinThreshold(t *testing.T, fx *compareFixture) {
	base, cand := fx.base, fx.cand

	code, stdout, stderr := runMain(t, "compare", base, cand, "--fail-if", "p99 +50%")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	if !strings.Contains(stderr, `ok   --fail-if "p99 +50%"`) || strings.Contains(stderr, "FAIL") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func testCompareFailIfOperation(t *testing.T, fx *compareFixture) {
	base, cand := fx.base, fx.cand

	// insert did not change; find_by_id did.
	if code, stdout, stderr := runMain(t, "compare", base, cand, "--fail-if", "p99 +10% insert"); code != ExitOK {
		t.Errorf("insert only: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	code, _, stderr := runMain(t, "compare", base, cand, "--fail-if", "p99 +10% find_by_id")
	if code != ExitFailed || !strings.Contains(stderr, "find_by_id") {
		t.Errorf("find_by_id: exit %d\nstderr:\n%s", code, stderr)
	}

	// A decrease gate does not fire on an increase.
	if code, _, stderr := runMain(t, "compare", base, cand, "--fail-if", "p99 -10%"); code != ExitOK {
		t.Errorf("p99 -10%%: exit %d\nstderr:\n%s", code, stderr)
	}

	// The other way round, p99 dropped by 23%.
	if code, _, stderr := runMain(t, "compare", cand, base, "--fail-if", "p99 -20%"); code != ExitFailed {
		t.Errorf("reversed p99 -20%%: exit %d\nstderr:\n%s", code, stderr)
	}
}

func testCompareThroughputGate(t *testing.T, fx *compareFixture) {
	base, cand := fx.base, fx.slow

	code, stdout, stderr := runMain(t, "compare", base, cand, "--fail-if", "throughput -5%", "--fail-if", "throughput -30%")
	if code != ExitFailed {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	// 200 vs 160 ops/s in every run: exactly 1.25× slower.
	if v := verdictCells(t, stdout, "find_by_id")["throughput"]; v != "1.25× slower, 95% CI 1.25×–1.25×" {
		t.Errorf("throughput verdict %q", v)
	}

	if !strings.Contains(stderr, `FAIL --fail-if "throughput -5%": find_by_id: B`) || !strings.Contains(stderr, "-20.0%") ||
		!strings.Contains(stderr, `ok   --fail-if "throughput -30%"`) {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func testCompareIdenticalFiles(t *testing.T, fx *compareFixture) {
	a, b := fx.base, fx.same

	code, stdout, stderr := runMain(t, "compare", a, b, "--fail-if", "p99 +0%", "--fail-if", "throughput -0%")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	// Runs of the same kind on both sides: within the minimum effect, or
	// no significant difference; never a difference.
	for _, op := range []string{"find_by_id", "insert"} {
		for m, v := range verdictCells(t, stdout, op) {
			if !regexp.MustCompile(`^(no meaningful difference \(within ±5%; 95% CI (0\.9\d|1\.0\d)×–(0\.9\d|1\.0\d)×\)|no significant difference; 95% CI 0\.9\d×–1\.0\d×)$`).MatchString(v) {
				t.Errorf("%s %s: %q, want no (meaningful) difference", op, m, v)
			}
		}
	}
}

func testCompareBadExpression(t *testing.T, fx *compareFixture) {
	base, cand := fx.base, fx.cand

	for _, expr := range []string{"p99 10%", "p0 +10%", "latency +10%", "no_such_op:p99 +10%", "a:p99 +10% b", "p99 +x%", "", "p99 +10", "+10% p99", "p99 +10% find_by_id extra", "p99 +10% no_such_op"} {
		code, stdout, stderr := runMain(t, "compare", base, cand, "--fail-if", expr)
		if code != ExitBadInput {
			t.Errorf("--fail-if %q: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", expr, code, stdout, stderr)
			continue
		}

		if !strings.Contains(stderr, "--fail-if") {
			t.Errorf("--fail-if %q: stderr does not explain:\n%s", expr, stderr)
		}

		if strings.Contains(stdout, "find_by_id") {
			t.Errorf("--fail-if %q: compared anyway:\n%s", expr, stdout)
		}
	}

	// Accepted forms.
	args := []string{"compare", base, base}
	accepted := []string{
		"P99 +10%", "p99+10%", " mean +20.5% ", "throughput -5%", "p50 +.5% insert", "p90 +0%",
		"p42 +10%", "find_by_id:p99.9 +10%", "max +50%", "error_rate +10%",
	}
	for _, expr := range accepted {
		args = append(args, "--fail-if", expr)
	}

	if code, _, stderr := runMain(t, args...); code != ExitOK || strings.Count(stderr, "ok   --fail-if") != len(accepted) {
		t.Errorf("%q: exit %d\n%s", args, code, stderr)
	}
}

func testCompareUnreadableFiles(t *testing.T, fx *compareFixture) {
	base := fx.base
	dir := t.TempDir()

	missing := filepath.Join(dir, "missing.json")

	notJSON := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(notJSON, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}

	noPhases := filepath.Join(dir, "empty.json")
	if err := result.WriteFile(noPhases, &result.Result{Status: result.StatusCompleted, Target: result.Target{Kind: targets.KindURI}}); err != nil {
		t.Fatal(err)
	}

	for _, bad := range []string{missing, notJSON, noPhases} {
		for _, args := range [][]string{{base, bad}, {bad, base}} {
			code, stdout, stderr := runMain(t, append([]string{"compare"}, args...)...)
			if code != ExitBadInput {
				t.Errorf("%v: exit %d, want 2\nstderr:\n%s", args, code, stderr)
			}

			if !strings.Contains(stderr, bad) || strings.Contains(stderr, base) {
				t.Errorf("%v: stderr should name %s only:\n%s", args, bad, stderr)
			}

			if stdout != "" {
				t.Errorf("%v: stdout:\n%s", args, stdout)
			}

			assertNoStackTrace(t, stderr)
		}
	}

	if code, _, _ := runMain(t, "compare"); code != ExitBadInput {
		t.Errorf("no arguments: exit %d", code)
	}
}

func testCompareMarkdown(t *testing.T, fx *compareFixture) {
	base, cand := fx.base, fx.cand
	dir := t.TempDir()
	md := filepath.Join(dir, "comparison.md")

	code, stdout, stderr := runMain(t, "compare", base, cand, cand, "--markdown", md, "--fail-if", "p99 +10%")
	if code != ExitFailed {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	data, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}

	text := string(data)
	for _, s := range []string{
		"# mongobench compare",
		"## find_by_id",
		"## insert",
		"| metric | A (baseline) | B | B vs A | C | C vs A |",
		"| --- | ---: | ---: | --- | ---: | --- |",
		"| throughput | 200 ops/s | 200 ops/s | no meaningful difference (within ±5%; 95% CI 1.00×–1.00×) | 200 ops/s | no meaningful difference (within ±5%; 95% CI 1.00×–1.00×) |",
		"× higher, 95% CI 1.",
		"Each run is one sample",
		"## Checks",
		"FAIL --fail-if",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("Markdown lacks %q:\n%s", s, text)
		}
	}

	if !regexp.MustCompile(`(?m)^\| p99 \| 5\.0\dms \| 6\.[45]\dms \| 1\.\d\d× higher, 95% CI 1\.\d\d×–1\.\d\d× \|`).MatchString(text) {
		t.Errorf("Markdown p99 row:\n%s", text)
	}

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}

	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the Markdown file (no temporary left)", len(entries))
	}

	// An unwritable destination (below a regular file, so no directory can
	// be created) is bad input, and nothing is left behind.
	blocker := filepath.Join(dir, "blocker")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	code, _, stderr = runMain(t, "compare", base, cand, "--markdown", filepath.Join(blocker, "x.md"))
	if code != ExitBadInput || !strings.Contains(stderr, "x.md") {
		t.Errorf("unwritable Markdown: exit %d\n%s", code, stderr)
	}
}

func testCompareOutputExample(t *testing.T, fx *compareFixture) {
	base, cand := fx.base, fx.cand

	code, stdout, stderr := runMain(t, "compare", base, cand)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}

	t.Logf("stdout:\n%s", stdout)

	_, _, stderr = runMain(t, "compare", base, cand, "--fail-if", "p99 +10%", "--fail-if", "throughput -5%")
	t.Logf("stderr with --fail-if:\n%s", stderr)

	// The insert table: the same latencies in every run.
	if v := verdictCells(t, stdout, "insert"); v["p50"] != "no meaningful difference (within ±5%; 95% CI 1.00×–1.00×)" {
		t.Errorf("insert: %v", v)
	}
}

func testCompareOneRunASide(t *testing.T, _ *compareFixture) {
	// One run a side is one observation of the machine each: however far
	// apart, the verdict is inconclusive, the gate says why it cannot judge
	// and does not fail, unless --strict.
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one.json"), filepath.Join(dir, "two.json")
	writeCompareRun(t, one, compareRun{tail: 1, finds: 200, seed: 3})
	writeCompareRun(t, two, compareRun{tail: 2, finds: 200, seed: 4})

	code, stdout, stderr := runMain(t, "compare", one, two, "--fail-if", "p99 +10%")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	if v := verdictCells(t, stdout, "find_by_id")["p99"]; !strings.HasPrefix(v, "inconclusive: 1 run a side, at least 4 a side needed") {
		t.Errorf("p99 verdict %q", v)
	}

	for _, want := range []string{
		"Note: --fail-if with 1 run a side can establish nothing",
		`Warning: --fail-if "p99 +10%": find_by_id, B vs A: inconclusive: 1 run a side`,
		"not judged",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	if !strings.Contains(stdout, "One run a side is one observation") {
		t.Errorf("stdout does not explain one run a side:\n%s", stdout)
	}

	code, _, stderr = runMain(t, "compare", one, two, "--fail-if", "p99 +10%", "--strict")
	if code != ExitFailed || !strings.Contains(stderr, "could not be judged (--strict)") {
		t.Errorf("--strict: exit %d\n%s", code, stderr)
	}

	if code, _, stderr := runMain(t, "compare", one, two, "--strict"); code != ExitBadInput || !strings.Contains(stderr, "--strict goes with --fail-if") {
		t.Errorf("--strict alone: exit %d\n%s", code, stderr)
	}

	if code, _, stderr := runMain(t, "compare", one, two, "--min-effect", "5"); code != ExitBadInput || !strings.Contains(stderr, "--min-effect") {
		t.Errorf("--min-effect 5: exit %d\n%s", code, stderr)
	}
}

func testCompareCommaList(t *testing.T, fx *compareFixture) {
	// A comma-separated list is a side as a directory is: the same verdicts.
	list := func(dir string) string {
		m, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(m) != 5 {
			t.Fatalf("%s: %v %v", dir, m, err)
		}

		return strings.Join(m, ",")
	}

	_, fromDirs, _ := runMain(t, "compare", fx.base, fx.cand)
	code, fromLists, stderr := runMain(t, "compare", list(fx.base), list(fx.cand))

	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}

	if a, b := verdictCells(t, fromDirs, "find_by_id"), verdictCells(t, fromLists, "find_by_id"); !reflect.DeepEqual(a, b) {
		t.Errorf("directories %v, lists %v", a, b)
	}

	// A directory without results files is bad input.
	empty := t.TempDir()
	if code, _, stderr := runMain(t, "compare", fx.base, empty); code != ExitBadInput || !strings.Contains(stderr, "holds no results file") {
		t.Errorf("empty directory: exit %d\n%s", code, stderr)
	}
}
