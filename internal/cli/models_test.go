package cli

import (
	"strings"
	"testing"
)

// TestRunGrowthBlocks runs growth blocks against the embedded FerretDB: the
// collection grows block by block, every block has its own statistics, and
// a measure: false phase is kept but excluded from the figures.
func TestRunGrowthBlocks(t *testing.T) {
	t.Parallel()

	out := outPath(t)

	code, stdout, stderr := runMain(t, "run", "testdata/growth.yaml", "--out", out)
	if code != ExitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	if !strings.Contains(stdout, "Growth blocks") || strings.Contains(stdout, "warm phase") {
		t.Errorf("stdout should show the blocks and not the warm phase:\n%s", stdout)
	}

	res := readResults(t, out)

	warm := phase(res, "warm")
	if warm == nil || !warm.Excluded {
		t.Fatalf("warm phase missing or not excluded: %+v", warm)
	}

	grow := phase(res, "grow")
	if grow == nil || grow.Model != "blocks" {
		t.Fatalf("grow phase missing or wrong model: %+v", grow)
	}

	if len(grow.Blocks) != 3 {
		t.Fatalf("%d blocks, want 3", len(grow.Blocks))
	}

	var prevDocs, prevData int64

	for i, b := range grow.Blocks {
		if !b.Complete || b.Index != i {
			t.Errorf("block %d: complete=%v index=%d", i, b.Complete, b.Index)
		}

		if want := int64(40 * (i + 1)); b.Collection.Documents != want {
			t.Errorf("block %d: %d documents, want %d", i, b.Collection.Documents, want)
		}

		if b.Collection.DataBytes <= prevData || b.Collection.Documents <= prevDocs {
			t.Errorf("block %d: size did not grow (%d docs, %d bytes after %d, %d)",
				i, b.Collection.Documents, b.Collection.DataBytes, prevDocs, prevData)
		}

		prevDocs, prevData = b.Collection.Documents, b.Collection.DataBytes

		counts := map[string]int64{}
		for _, o := range b.Operations {
			counts[o.Name] = o.Count

			if o.Count > 0 && !(o.LatencyUS.P50 <= o.LatencyUS.P90 && o.LatencyUS.P90 <= o.LatencyUS.P99 && o.LatencyUS.P99 <= o.LatencyUS.Max) {
				t.Errorf("block %d, %s: percentiles not monotone: %+v", i, o.Name, o.LatencyUS)
			}
		}

		if counts["create"] != 40 || counts["search"] != 10 {
			t.Errorf("block %d: counts %v, want create 40 and search 10", i, counts)
		}
	}

	// The phase's totals are the sum of its blocks.
	for _, o := range grow.Operations {
		var sum int64
		for _, b := range grow.Blocks {
			for _, bo := range b.Operations {
				if bo.Name == o.Name {
					sum += bo.Count
				}
			}
		}

		if sum != o.Count {
			t.Errorf("%s: phase count %d, blocks add up to %d", o.Name, o.Count, sum)
		}
	}

	if m := res.MainPhase(); m == nil || m.Name != "grow" {
		t.Errorf("main phase = %+v, want grow", m)
	}
}
