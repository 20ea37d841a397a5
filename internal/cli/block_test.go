package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/verdict"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestRunMatrixComparisonBlock runs one workload on two wiretest servers,
// replying in 1 ms and 20 ms, for six rounds: the run ends with the
// comparison block, which ranks the 1 ms server first and calls the other
// slower with a 95% interval excluding 1. The 19 ms between them is far
// more than a loaded machine adds to a loopback round trip; how many times
// slower is a measurement and is not asserted.
func TestRunMatrixComparisonBlock(t *testing.T) {
	fast := startNullServer(t, time.Millisecond)
	slow := startNullServer(t, 20*time.Millisecond)
	out := outPath(t)

	md := strings.TrimSuffix(out, ".json") + ".md"

	code, stdout, stderr := runMain(t, "run", "testdata/null_insert.yaml", "--out", out, "--markdown", md, "--quiet", "--duration", "500ms",
		"--no-explain", "--server-stats-interval", "0", "--rounds", "6",
		"--target", "uri:name=fast,"+fast.URI(), "--target", "uri:name=slow,"+slow.URI())
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	re := regexp.MustCompile(`\nComparison: add p50 \(median of rounds\)\n  targets:\n    fast  +[0-9.]+ms  reference\n    slow  +[0-9.]+ms  (\d+(?:\.\d+)?)× slower \(95% CI (\d+(?:\.\d+)?)×–(\d+(?:\.\d+)?)×\)\n`)

	m := re.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no comparison block ranking fast first and slow slower with a CI:\n%s", stdout)
	}

	if r, lo := parseFloat(t, m[1]), parseFloat(t, m[2]); lo <= 1 || lo > r {
		t.Errorf("slow is %v× slower (CI from %v×), want a CI excluding 1", r, lo)
	}

	// The Markdown file ends with the same block.
	data, err := os.ReadFile(md)
	if err != nil || !regexp.MustCompile(`## Comparison: add p50\n\nMedian of rounds; the reference first, then best first\.\n\n### targets\n\n\| \| add p50 \| verdict \|\n\|---\|---:\|---\|\n\| fast \| [0-9.]+ms \| reference \|\n\| slow \| [0-9.]+ms \| \d+(?:\.\d+)?× slower \(95% CI \d+(?:\.\d+)?×–\d+(?:\.\d+)?×\) \|\n$`).Match(data) {
		t.Errorf("Markdown does not end with the block (%v):\n%s", err, data)
	}

	// The block printed is the one the results file gives.
	res, err := result.Read(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}

	b := analysis.MatrixBlock(res.Matrix, analysis.DefaultFigure)
	if len(b.Groups) != 1 || b.Groups[0].Lines[1].Kind != verdict.Difference {
		t.Errorf("block from the results file: %+v", b.Groups)
	}
}

// TestOperationsBlockDecodeCost reads 200 documents per find from the
// wiretest server, once without decoding and once into maps, over six
// rounds: the block of operations, per document and in cost mode, ranks
// the two reads and gives the other one's cost per document over the best
// with a 95% interval, from six paired rounds, in µs or ms per document.
// Which read is best and whether the interval excludes zero are measured
// facts that a loaded machine can blur, so they are not asserted here:
// TestMatrixBlockCost (internal/analysis) checks the arithmetic of the cost
// on fixed samples, and measuring decode cost is the job of the tool itself
// (workloads/examples/decode-cost.yaml).
func TestOperationsBlockDecodeCost(t *testing.T) {
	srv, err := wiretest.Start(wiretest.Config{FindDocs: 200})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	path := filepath.Join(t.TempDir(), "decode.yaml")
	if err := os.WriteFile(path, []byte(`name: decode
database: mongobench_cli_decode
collections: [{name: people}]
run: {concurrency: 1, max_operations: 200, sequence: [none, map], interval: 250ms}
operations:
  - {name: none, op: find, collection: people, decode: none}
  - {name: map, op: find, collection: people, decode: map}
`), 0o600); err != nil {
		t.Fatal(err)
	}

	out := outPath(t)

	code, stdout, stderr := runMain(t, "run", path, "--uri", srv.URI(), "--out", out, "--quiet", "--rounds", "6",
		"--no-explain", "--server-stats-interval", "0")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	res, err := result.Read(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}

	b := analysis.OperationsBlock(res.Matrix, analysis.Figure{PerDoc: true, Cost: true})
	if len(b.Groups) != 1 || len(b.Groups[0].Lines) != 2 {
		t.Fatalf("block %+v", b)
	}

	best, other := b.Groups[0].Lines[0], b.Groups[0].Lines[1]
	if names := best.Name + " " + other.Name; (names != "none map" && names != "map none") || best.Cost != nil || other.Cost == nil {
		t.Fatalf("lines %+v %+v, want none and map ranked, a cost on the second only", best, other)
	}

	if c := other.Cost; (c.Kind != verdict.Difference && c.Kind != verdict.NoDifference) || c.Used != 6 || c.Lo > c.Estimate || c.Estimate > c.Hi {
		t.Errorf("cost %+v, want an estimate inside its interval over 6 rounds", c)
	}

	var text strings.Builder
	b.WriteText(&text)

	num := `[+−][0-9.]+(µs|ms|ns)/doc`
	if !regexp.MustCompile(`\n    ` + other.Name + ` +[0-9.]+(µs|ms)/doc  .*; cost ` + num + ` \(95% CI ` + num + ` to ` + num + `\)\n`).MatchString(text.String()) {
		t.Errorf("block text:\n%s", text.String())
	}
}

// TestCompareOperationsRanksMixes runs a weighted mix of two reads of 20
// documents (one that decodes nothing, one that decodes into maps) on the
// wiretest server: without run.compare_operations the mix is not ranked;
// with it, a comparison of six rounds ends with the two reads ranked per
// variant, round by round, and a single run with them ranked interval by
// interval, as the stacks studies rank the two sides of a query tweak
// through a client stack that runs no sequences.
func TestCompareOperationsRanksMixes(t *testing.T) {
	srv, err := wiretest.Start(wiretest.Config{FindDocs: 20})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	const base = `name: mix
database: mongobench_cli_mix
collections: [{name: people}]
run: {concurrency: 1, max_operations: 200, interval: 250ms, compare_by: per_doc%s}
operations:
  - {name: none, op: find, collection: people, decode: none}
  - {name: map, op: find, collection: people, decode: map}
variants:
  - name: a
  - name: b
`

	run := func(t *testing.T, ranked, variants bool, args ...string) *result.Result {
		t.Helper()

		extra := ""
		if ranked {
			extra = ", compare_operations: true"
		}

		text := strings.Replace(base, "%s", extra, 1)
		if !variants {
			text, _, _ = strings.Cut(text, "variants:")
		}

		path := filepath.Join(t.TempDir(), "mix.yaml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}

		out := outPath(t)
		args = append([]string{"run", path, "--uri", srv.URI(), "--out", out, "--quiet", "--no-explain", "--server-stats-interval", "0"}, args...)

		code, stdout, stderr := runMain(t, args...)
		if code != ExitOK {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}

		res, err := result.Read(context.Background(), out)
		if err != nil {
			t.Fatal(err)
		}

		// The terminal prints the blocks of the results file.
		for _, b := range analysis.Blocks(res) {
			for _, g := range b.Groups {
				if !strings.Contains(stdout, "\n  "+g.Title+":\n") {
					t.Errorf("group %q not printed:\n%s", g.Title, stdout)
				}
			}
		}

		return res
	}

	titles := func(res *result.Result) map[string][]string {
		out := map[string][]string{}

		for _, b := range analysis.Blocks(res) {
			for _, g := range b.Groups {
				for _, l := range g.Lines {
					out[g.Title] = append(out[g.Title], l.Name)
				}
			}
		}

		return out
	}

	t.Run("comparison", func(t *testing.T) {
		got := titles(run(t, true, true, "--rounds", "6"))

		for _, v := range []string{"a", "b"} {
			names := got["operations on uri, variant "+v]
			if len(names) != 2 || !slices.Contains(names, "none") || !slices.Contains(names, "map") {
				t.Errorf("variant %s: operations ranked %v, want none and map (groups %v)", v, names, got)
			}
		}

		if len(got["variants on uri"]) != 2 {
			t.Errorf("the variants are no longer ranked: %v", got)
		}
	})

	t.Run("comparison, not ranked", func(t *testing.T) {
		got := titles(run(t, false, true, "--rounds", "6"))
		if len(got) != 1 || len(got["variants on uri"]) != 2 {
			t.Errorf("a mix is ranked without run.compare_operations: %v", got)
		}
	})

	t.Run("single run", func(t *testing.T) {
		got := titles(run(t, true, false))
		if names := got["operations of the run phase"]; len(names) != 2 {
			t.Errorf("single run: operations ranked %v (groups %v)", names, got)
		}
	})
}
