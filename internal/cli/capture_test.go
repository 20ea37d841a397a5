package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

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
		{[]string{"capture", captureFixture, "-o", filepath.Join(dir, "w.yaml"), "--fidelity-shapes", notShapes}, "--fidelity-shapes goes with --fidelity RESULTS.json"},
		{[]string{"capture"}, "at least one log file"},
		{[]string{"capture", captureFixture, "--profile", "mongodb://127.0.0.1:1/x", "-o", filepath.Join(dir, "w.yaml")}, "give no log file with it"},
		{[]string{"capture", captureFixture, "--db", "shop", "-o", filepath.Join(dir, "w.yaml")}, "--db and --profile-collection apply to --profile only"},
		{[]string{"capture", captureFixture, "-o", filepath.Join(dir, "w.yaml"), "--speed", "2"}, "--speed applies to --replay only"},
		{[]string{"capture", captureFixture, "-o", filepath.Join(dir, "w.yaml"), "--replay", "--speed", "0"}, "--speed must be > 0"},
		{[]string{"capture", captureFixture, "-o", filepath.Join(dir, "w.yaml"), "--replay", "--closed-loop"}, "--closed-loop, --open-loop and --duration do not apply"},
		{[]string{"capture", captureFixture, "-o", filepath.Join(dir, "w.yaml"), "--closed-loop", "--open-loop"}, "--closed-loop and --open-loop: choose one"},
	}

	for _, tc := range cases {
		code, stdout, stderr := runMain(t, tc.args...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, ExitBadInput, tc.want)
		}

		assertNoStackTrace(t, stdout+stderr)
	}
}

// TestCaptureProfile reads profiler documents from the embedded server
// (which has no profiler: they are written into a collection read with
// --profile-collection, the documented way to read a copy of a profile),
// and checks the refusal for system.profile itself, which FerretDB does
// not have: exit code 2 and one line saying why.
func TestCaptureProfile(t *testing.T) {
	t.Parallel()

	srv := startServer(t)
	client := connectClient(t, srv.URI())
	coll := client.Database("shop").Collection("profile_copy")

	// Documents in the profiler's documented form, without query operators
	// (FerretDB stores no field name starting with $).
	for i := range 6 {
		doc := bson.D{
			{Key: "op", Value: "query"},
			{Key: "ns", Value: "shop.customers"},
			{Key: "command", Value: bson.D{{Key: "find", Value: "customers"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: 100 + i}}}, {Key: "limit", Value: 1}}},
			{Key: "millis", Value: 2},
			{Key: "ts", Value: time.Date(2024, 5, 6, 10, 0, i, 0, time.UTC)},
			{Key: "client", Value: "127.0.0.1:52011"},
			{Key: "appName", Value: "shop"},
		}
		if _, err := coll.InsertOne(t.Context(), doc); err != nil {
			t.Fatal(err)
		}
	}

	out := filepath.Join(t.TempDir(), "prof.yaml")

	code, stdout, stderr := runMain(t, "capture", "--profile", srv.URI(), "--db", "shop", "--profile-collection", "profile_copy", "-o", out)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}

	if !strings.Contains(stdout, "findOne customers filter {_id: ?}") || !strings.Contains(stderr, "Read 6 profiler documents") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}

	if code, _, stderr := runMain(t, "validate", out); code != ExitOK {
		t.Errorf("the workload does not validate:\n%s", stderr)
	}

	code, stdout, stderr = runMain(t, "capture", "--profile", srv.URI(), "--db", "shop", "-o", filepath.Join(t.TempDir(), "w.yaml"))
	if code != ExitBadInput || !strings.Contains(stderr, "database shop has no system.profile collection: the profiler is off") {
		t.Errorf("system.profile on FerretDB: exit %d\n%s", code, stderr)
	}

	assertNoStackTrace(t, stdout+stderr)

	code, _, stderr = runMain(t, "capture", "--profile", srv.URI(), "-o", filepath.Join(t.TempDir(), "w.yaml"))
	if code != ExitBadInput || !strings.Contains(stderr, "no database") {
		t.Errorf("no database: exit %d\n%s", code, stderr)
	}
}
