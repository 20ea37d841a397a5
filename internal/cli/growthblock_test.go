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
// (one answer line per operation, each block against the first) and that
// --markdown, refused for a single run without a block, writes the same
// block from the same model.
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

	for _, g := range blocks[0].Groups {
		if g.Answer == "" || !strings.Contains(stdout, "\n  "+g.Answer+"\n") || !strings.Contains(string(text), "- "+g.Answer+"\n") {
			t.Errorf("answer %q missing from the terminal or the Markdown", g.Answer)
		}
	}
}
