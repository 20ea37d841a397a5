package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/analysis"
)

// TestRunGrowthComparisonBlock runs growth blocks against the embedded
// FerretDB and checks that the run ends with the growth comparison block
// (every operation's fits, then its blocks) and its answer as the last
// line, and that --markdown, refused for a single run without a block,
// writes the same block from the same model.
func TestRunGrowthComparisonBlock(t *testing.T) {
	t.Parallel()

	out := outPath(t)
	md := filepath.Join(t.TempDir(), "growth.md")

	code, stdout, stderr := runMain(t, "run", "testdata/growth.yaml", "--out", out, "--markdown", md, "--no-explain")
	if code != ExitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	blocks := analysis.Blocks(readResults(t, out))
	if len(blocks) != 1 || !blocks[0].Growth || len(blocks[0].Groups) != 2 {
		t.Fatalf("blocks of the results: %+v, want one growth block of create and search", blocks)
	}

	text, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}

	if !strings.Contains(stdout, "\nComparison: p50 by collection size") || !strings.Contains(string(text), "## Comparison: p50 by collection size") {
		t.Errorf("no growth block in the terminal or the Markdown:\n%s\n%s", stdout, text)
	}

	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	if want := "Growth: " + blocks[0].GrowthAnswer(); lines[len(lines)-1] != want {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
	}

	for _, g := range blocks[0].Groups {
		if g.Answer == "" || !strings.Contains(stdout, "\n  "+g.Answer+"\n") || !strings.Contains(string(text), "- "+g.Answer+"\n") {
			t.Errorf("answer %q missing from the terminal or the Markdown", g.Answer)
		}
	}
}

// TestDurationShortensGrowthBlocks checks that --duration applies to growth
// blocks: with the shortest duration, no block starts after the first.
func TestDurationShortensGrowthBlocks(t *testing.T) {
	t.Parallel()

	out := outPath(t)

	code, stdout, stderr := runMain(t, "run", "testdata/growth.yaml", "--out", out, "--no-explain", "--duration", "1ns")
	if code != ExitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	res := readResults(t, out)

	p := res.MainPhase()
	if p == nil || len(p.Blocks) != 1 || !p.Blocks[0].Complete {
		t.Fatalf("main phase %+v, want one complete block", p)
	}
}
