package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/spec/capture"
)

const captureFixture = "../spec/capture/testdata/shop.log"

// TestCaptureValidates captures the hand-written log fixture, prints the
// shape table, and validates the workload it writes.
func TestCaptureValidates(t *testing.T) {
	t.Parallel()

	out := filepath.Join(t.TempDir(), "shop.yaml")

	code, stdout, stderr := runMain(t, "capture", captureFixture, "-o", out)
	if code != ExitOK {
		t.Fatalf("exit code %d\n%s", code, stderr)
	}

	if !strings.Contains(stdout, "findOne customers filter {_id: ?}") || !strings.Contains(stdout, "33 operations in 9 shapes") {
		t.Errorf("no shape table on stdout:\n%s", stdout)
	}

	if !strings.Contains(stderr, "no value of the logs is copied") {
		t.Errorf("stderr does not say that no value is copied:\n%s", stderr)
	}

	code, _, stderr = runMain(t, "validate", out)
	if code != ExitOK {
		t.Fatalf("the captured workload does not validate:\n%s", stderr)
	}

	shapes := strings.TrimSuffix(out, ".yaml") + ".shapes.json"

	data, err := os.ReadFile(shapes)
	if err != nil {
		t.Fatalf("no shape file beside the workload: %v", err)
	}

	if sf, err := capture.ParseShapeFile(shapes, data); err != nil || len(sf.Shapes) != 9 {
		t.Errorf("shape file: %v, want the 9 shapes of the table", err)
	}
}

// TestCaptureRefusals checks the bad-input paths: a file that is not a log
// (file and line named), an output that is an input, and a missing -o, all
// exit code 2 without a stack trace.
func TestCaptureRefusals(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	text := filepath.Join(dir, "legacy.log")

	if err := os.WriteFile(text, []byte("2019-01-01T00:00:00.000+0000 I COMMAND [conn1] command shop.orders\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	in := filepath.Join(dir, "copy.log")

	data, err := os.ReadFile(captureFixture)
	if err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(in, data, 0o600); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		args []string
		want string
	}{
		{[]string{"capture", text, "-o", filepath.Join(dir, "w.yaml")}, text + ":1: not a MongoDB JSON log"},
		{[]string{"capture", in, "-o", in}, "is also an input"},
		{[]string{"capture", in}, "--out is required"},
		{[]string{"capture", filepath.Join(dir, "missing.log"), "-o", filepath.Join(dir, "w.yaml")}, "missing.log: no such file"},
	}

	for _, tc := range cases {
		code, stdout, stderr := runMain(t, tc.args...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, ExitBadInput, tc.want)
		}

		assertNoStackTrace(t, stdout+stderr)
	}

	after, err := os.ReadFile(in)
	if err != nil || string(after) != string(data) {
		t.Errorf("the input was changed (%v)", err)
	}
}

// TestCaptureFidelityRefusals checks the bad-input paths of --fidelity: a
// results file that is missing or not results, a shape file that is not
// one, too many arguments, a tolerance <= 0; all exit code 2, naming the
// file or flag.
func TestCaptureFidelityRefusals(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	notShapes := filepath.Join(dir, "w.shapes.json")

	if err := os.WriteFile(notShapes, []byte(`{"format": "something else"}`), 0o600); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		args []string
		want string
	}{
		{[]string{"capture", "--fidelity", filepath.Join(dir, "missing.json")}, "missing.json"},
		{[]string{"capture", "--fidelity", notShapes}, "--fidelity " + notShapes},
		{[]string{"capture", "--fidelity", "r.json", "a", "b"}, "at most one argument"},
		{[]string{"capture", "--fidelity", "r.json", "--p50-tolerance", "0"}, "--p50-tolerance must be > 0"},
		{[]string{"capture"}, "at least one log file"},
		{[]string{"capture", captureFixture, "-o", filepath.Join(dir, "w.yaml"), "--speed", "2"}, "--speed applies to --replay only"},
		{[]string{"capture", captureFixture, "-o", filepath.Join(dir, "w.yaml"), "--replay", "--speed", "0"}, "--speed must be > 0"},
		{[]string{"capture", captureFixture, "-o", filepath.Join(dir, "w.yaml"), "--replay", "--closed-loop"}, "--closed-loop and --duration do not apply"},
	}

	for _, tc := range cases {
		code, stdout, stderr := runMain(t, tc.args...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, ExitBadInput, tc.want)
		}

		assertNoStackTrace(t, stdout+stderr)
	}
}
