package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// TestCalibrateBadInput: every bad flag is a one-line message and exit 2,
// before anything runs.
func TestCalibrateBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--experiments", "0"}, "--experiments must be between 1 and 1000"},
		{[]string{"--rounds", "-1"}, "--rounds must be between 1 and 1000"},
		{[]string{"--runs", "0"}, "--runs must be between 1 and 1000"},
		{[]string{"--trial", "0s"}, "--trial must be positive"},
		{[]string{"--effect", "20"}, `bad --effect "20"`},
		{[]string{"--min-effect", "100%"}, "bad --min-effect"},
		{[]string{"--fail-if", "p99 10%"}, "--fail-if"},
		{[]string{"workloads/quickstart.yaml"}, "a workload of your own needs --uri"},
		{[]string{"--uri", "http://x"}, "--uri: the connection string must start with mongodb://"},
	} {
		code, stdout, stderr := runMain(t, append([]string{"calibrate"}, tc.args...)...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("%v: exit %d, want 2 and %q\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.want, stdout, stderr)
		}

		if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
			t.Errorf("%v: %d lines of error, want one:\n%s", tc.args, n+1, stderr)
		}
	}
}

// TestCalibrateRuns runs the smallest calibration through the command line:
// progress on standard error, the report on standard output, its last line
// the answer.
func TestCalibrateRuns(t *testing.T) {
	code, stdout, stderr := runMain(t, "calibrate", "--experiments", "1", "--trial", "100ms", "--runs", "2", "--effect", "100%")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	for _, want := range []string{"A/A 1/1:", "A/B +100% 1/1:", "gate 1/1:"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if !strings.HasPrefix(lines[0], "Calibration against the built-in test server") ||
		!strings.HasPrefix(lines[len(lines)-1], "On this machine: false \"difference\" ") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestRunMinEffect: --min-effect reaches the matrix verdicts and the
// results file. A 40 ms and a 60 ms server differ by less than 2× (the
// round trip is in both): under a 99% minimum effect that is "no
// meaningful difference", never a difference; a bad value is refused
// before anything runs. The delays are long against a loaded machine's
// scheduling noise (1 ms and 1.5 ms were swamped by it, the interval of the
// ratio reaching past 2× and the verdict "no significant difference"), and
// the run is long enough for 8 intervals of each.
func TestRunMinEffect(t *testing.T) {
	fast := startNullServer(t, 40*time.Millisecond)
	slow := startNullServer(t, 60*time.Millisecond)
	out := outPath(t)

	code, stdout, stderr := runMain(t, "run", "testdata/null_insert.yaml", "--out", out, "--quiet", "--duration", "2s",
		"--no-explain", "--server-stats-interval", "0", "--min-effect", "99%",
		"--target", "uri:name=fast,"+fast.URI(), "--target", "uri:name=slow,"+slow.URI())
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	m := readMatrix(t, out)

	p50 := findVerdict(m, analysis.CrossTarget, "add", "p50")
	if p50 == nil {
		t.Fatalf("no p50 verdict: %+v", m.Verdicts)
	}

	for _, cv := range p50.Variants {
		if cv.Variant == "slow" && (cv.Kind != verdict.NoDifference || !strings.HasPrefix(cv.Text, "no meaningful difference (within ±99%")) {
			t.Errorf("slow: %+v", cv)
		}
	}

	if code, _, stderr := runMain(t, "run", "testdata/null_insert.yaml", "--min-effect", "big"); code != ExitBadInput ||
		!strings.Contains(stderr, "bad --min-effect") {
		t.Errorf("--min-effect big: exit %d\n%s", code, stderr)
	}
}

// TestCompareUnrelatedWorkloads: sides with no operation in common are
// refused (exit 2) instead of compared into pages of "no data".
func TestCompareUnrelatedWorkloads(t *testing.T) {
	dir := t.TempDir()
	a, b := dir+"/a.json", dir+"/b.json"

	writeCompareRun(t, a, compareRun{tail: 1, finds: 200, seed: 1})
	writeCompareRun(t, b, compareRun{tail: 1, finds: 200, seed: 2})

	res := readResults(t, b)
	for i := range res.Phases {
		for j := range res.Phases[i].Operations {
			res.Phases[i].Operations[j].Name += "_other"
		}
	}

	other := dir + "/other.json"
	if err := result.WriteFile(other, res); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runMain(t, "compare", a, other)
	if code != ExitBadInput || !strings.Contains(stderr, "has no operation in common with the baseline") || stdout != "" {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestCompareWarnsOnce: a run that did not complete is said once, whether
// its side is one file or a directory of runs.
func TestCompareWarnsOnce(t *testing.T) {
	dir := t.TempDir()
	a, b := dir+"/a.json", dir+"/b.json"

	writeCompareRun(t, a, compareRun{tail: 1, finds: 200, seed: 1})
	writeCompareRun(t, b, compareRun{tail: 1, finds: 200, seed: 2})

	res := readResults(t, b)
	res.Status = result.StatusIncomplete

	if err := result.WriteFile(b, res); err != nil {
		t.Fatal(err)
	}

	_, _, stderr := runMain(t, "compare", a, b)
	if n := strings.Count(stderr, "is from a run that was incomplete"); n != 1 {
		t.Errorf("warned %d times, want once:\n%s", n, stderr)
	}
}
