//go:build e2e

package cli

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

// TestCaptureRunsEmbedded captures the log fixture as a closed loop and
// runs the workload on the embedded default server: each shape that can run
// is an operation of the run phase, and no operation fails.
func TestCaptureRunsEmbedded(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "shop.yaml")

	if code, _, stderr := runMain(t, "capture", captureFixture, "-o", w, "--closed-loop", "--duration", "3s", "--load-documents", "200"); code != ExitOK {
		t.Fatalf("capture: exit %d\n%s", code, stderr)
	}

	out := filepath.Join(dir, "res.json")
	if code, _, stderr := runMain(t, "run", w, "-o", out, "--quiet"); code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}

	res, err := result.Read(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}

	ran := 0

	for _, ph := range res.Phases {
		if ph.Name != "run" {
			continue
		}

		for _, op := range ph.Operations {
			ran++

			for kind, n := range op.Errors {
				t.Errorf("%s: %d errors of kind %s", op.Name, n, kind)
			}
		}
	}

	if ran != 8 {
		t.Errorf("%d operations in the run phase, want the 8 captured shapes that can run", ran)
	}
}
