//go:build e2e

package cli

import (
	"testing"
)

// TestRunClientMatrix compares the Go engine with the Node.js driver and
// PyMongo as variants: every trial measured its max_operations through its
// own stack, the trials of the external stacks record their stack, and the
// matrix has its verdicts.
func TestRunClientMatrix(t *testing.T) {
	requireStack(t, "node-driver")
	requireStack(t, "python-pymongo")

	out := outPath(t)

	code, stdout, stderr := runMain(t, "run", "testdata/stacks.yaml", "--rounds", "2", "--out", out, "--quiet")
	if code != ExitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	res := readResults(t, out)
	if res.Matrix == nil || len(res.Matrix.Trials) != 6 {
		t.Fatalf("want a matrix of 3 variants × 2 rounds, got %+v", res.Matrix)
	}

	want := map[string]string{"go": "", "node-driver": "node-driver", "pymongo": "python-pymongo"}

	for _, tr := range res.Matrix.Trials {
		stack := ""
		if tr.Result.Client != nil {
			stack = tr.Result.Client.Stack
		}

		if stack != want[tr.Variant] {
			t.Errorf("variant %s, round %d: client %q, want %q", tr.Variant, tr.Round, stack, want[tr.Variant])
		}

		if ok, failed := totals(tr.Result.Operations); ok+failed != 200 || failed != 0 {
			t.Errorf("variant %s, round %d: %d ok, %d failed; want max_operations 200, none failed", tr.Variant, tr.Round, ok, failed)
		}
	}

	if len(res.Matrix.Verdicts) == 0 {
		t.Error("the matrix has no verdicts")
	}

	if left := adapterChildren(t); len(left) > 0 {
		t.Errorf("adapter processes left after the matrix: %v", left)
	}
}
