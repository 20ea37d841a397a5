package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/result"
	"github.com/mongobench/mongobench/internal/verdict"
)

// TestRunMatrixComparisonBlock runs one workload on two wiretest servers,
// replying in 1 ms and 5 ms, for six rounds: the run ends with the
// comparison block, which ranks the 1 ms server first and calls the other
// several times slower with a 95% interval excluding 1 (below 5×: both
// share the round trip, and a loaded machine stretches the short sleep).
func TestRunMatrixComparisonBlock(t *testing.T) {
	fast := startNullServer(t, time.Millisecond)
	slow := startNullServer(t, 5*time.Millisecond)
	out := outPath(t)

	md := strings.TrimSuffix(out, ".json") + ".md"

	code, stdout, stderr := runMain(t, "run", "testdata/null_insert.yaml", "--out", out, "--markdown", md, "--quiet", "--duration", "500ms",
		"--no-explain", "--server-stats-interval", "0", "--rounds", "6",
		"--target", "uri:name=fast,"+fast.URI(), "--target", "uri:name=slow,"+slow.URI())
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	re := regexp.MustCompile(`\nComparison: add p50 \(median of rounds\)\n  targets:\n    fast  +[0-9.]+ms  fastest\n    slow  +[0-9.]+ms  (\d\.\d\d)× slower \(95% CI (\d\.\d\d)×–(\d\.\d\d)×\)\n`)

	m := re.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no comparison block ranking fast first and slow slower with a CI:\n%s", stdout)
	}

	if r, lo := parseFloat(t, m[1]), parseFloat(t, m[2]); r < 2 || r > 5.5 || lo <= 1 {
		t.Errorf("slow is %v× slower (CI from %v×), want about 5× with a CI excluding 1", r, lo)
	}

	// The Markdown file ends with the same block.
	data, err := os.ReadFile(md)
	if err != nil || !regexp.MustCompile(`## Comparison: add p50\n\nMedian of rounds; best first\.\n\n### targets\n\n\| \| add p50 \| verdict \|\n\|---\|---:\|---\|\n\| fast \| [0-9.]+ms \| fastest \|\n\| slow \| [0-9.]+ms \| \d\.\d\d× slower \(95% CI \d\.\d\d×–\d\.\d\d×\) \|\n$`).Match(data) {
		t.Errorf("Markdown does not end with the block (%v):\n%s", err, data)
	}

	// The block printed is the one the results file gives.
	res, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}

	b := analysis.MatrixBlock(res.Matrix, analysis.DefaultFigure)
	if len(b.Groups) != 1 || b.Groups[0].Lines[1].Kind != verdict.Difference {
		t.Errorf("block from the results file: %+v", b.Groups)
	}
}
