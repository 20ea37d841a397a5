package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/base/freeport"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestRecordThroughTheProxy runs `mongobench record` in front of the test
// server, sends commands through it, stops it with a signal, and checks the
// recording (each command once, with at least the server's programmed
// delay), the summary line, that the upstream URI's password appears
// nowhere, and that capture turns the recording into a workload.
func TestRecordThroughTheProxy(t *testing.T) {
	const delay = 5 * time.Millisecond

	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(delay), FindDocs: 1})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	port, err := freeport.Loopback()
	if err != nil {
		t.Fatal(err)
	}

	const password = "canary-record-Pw5"

	upstream := strings.Replace(srv.URI(), "mongodb://", "mongodb://app:"+password+"@", 1)
	out := filepath.Join(t.TempDir(), "app.log")
	listen := "127.0.0.1:" + strconv.Itoa(port)

	r := newCLIRun("record", "--listen", listen, "--upstream", upstream, "-o", out)
	done := r.start()

	waitFor(t, time.Minute, "the proxy's connection string", func() bool { return strings.Contains(r.stdout.String(), listen) })

	if _, err := os.Stat(out); err == nil {
		t.Error("the recording exists before the recording ended: it is written atomically at the end")
	}

	client, err := mongo.Connect(options.Client().ApplyURI(strings.TrimSpace(r.stdout.String())).SetTimeout(30 * time.Second))
	if err != nil {
		t.Fatal(err)
	}

	ctx := t.Context()
	coll := client.Database("shop").Collection("orders")

	if _, err := coll.InsertOne(ctx, bson.D{{Key: "status", Value: "A"}, {Key: "note", Value: password}}); err != nil {
		t.Fatal(err)
	}

	if err := coll.FindOne(ctx, bson.D{{Key: "status", Value: "A"}}).Err(); err != nil {
		t.Fatal(err)
	}

	if err := client.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}

	r.signals <- syscall.SIGINT

	if code := r.wait(t, done, mainTimeout); code != ExitOK {
		t.Fatalf("record exited %d\n%s", code, r.stderr)
	}

	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}

	for what, s := range map[string]string{"recording": string(data), "stdout": r.stdout.String(), "stderr": r.stderr.String()} {
		if strings.Contains(s, password) {
			t.Errorf("the %s contains the upstream URI's password", what)
		}
	}

	seen := map[string]int{}

	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var e struct {
			Msg  string `json:"msg"`
			Attr struct {
				NS             string          `json:"ns"`
				DurationMicros int64           `json:"durationMicros"`
				Command        json.RawMessage `json:"command"`
			} `json:"attr"`
		}

		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, line)
		}

		if e.Msg != "Slow query" || e.Attr.NS != "shop.orders" {
			continue
		}

		var d bson.D
		if err := bson.UnmarshalExtJSON(e.Attr.Command, false, &d); err != nil || len(d) == 0 {
			t.Fatalf("command %s: %v", e.Attr.Command, err)
		}

		seen[d[0].Key]++

		// The test server holds every reply for delay: the proxy's time
		// cannot be shorter.
		if e.Attr.DurationMicros < delay.Microseconds() {
			t.Errorf("%s: durationMicros %d, below the server's delay of %s", d[0].Key, e.Attr.DurationMicros, delay)
		}
	}

	if seen["insert"] != 1 || seen["find"] != 1 {
		t.Errorf("commands on shop.orders: %v, want one insert and one find", seen)
	}

	if !strings.Contains(r.stderr.String(), "recorded ") || !strings.Contains(r.stderr.String(), "mongobench capture "+out+" -o workload.yaml") {
		t.Errorf("no summary in stderr:\n%s", r.stderr)
	}

	// The recording is a log capture reads.
	workload := filepath.Join(t.TempDir(), "w.yaml")
	if code, _, stderr := runMain(t, "capture", out, "-o", workload); code != ExitOK {
		t.Fatalf("capture of the recording exited %d:\n%s", code, stderr)
	}

	if code, _, stderr := runMain(t, "validate", workload); code != ExitOK {
		t.Fatalf("the workload captured from the recording does not validate (%d):\n%s", code, stderr)
	}
}

// TestRecordBadInput refuses, with exit code 2 and one line naming the
// flag, what cannot be recorded, and writes nothing.
func TestRecordBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.log")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "--upstream", "mongodb://127.0.0.1:1"}, "--out is required"},
		{[]string{"record", "-o", out}, "--upstream is required"},
		{[]string{"record", "-o", out, "--upstream", "mongodb+srv://u:hunter2@c.example/"}, "--upstream: a mongodb+srv"},
		{[]string{"record", "-o", out, "--upstream", "mongodb://a:1,b:2/"}, "--upstream: the URI names 2 servers"},
		{[]string{"record", "-o", out, "--upstream", "mongodb://a:1/", "--listen", "nope"}, "--listen \"nope\""},
		{[]string{"record", "-o", dir, "--upstream", "mongodb://a:1/"}, "is a directory"},
		{[]string{"record", "-o", out, "--upstream", "mongodb://a:1/", "--for", "-1s"}, "--for must not be negative"},
		{[]string{"capture", "--upstream", "mongodb://a:1/", out}, "give no log file with it"},
		{[]string{"capture", "--upstream", "mongodb://a:1/"}, "capture --upstream needs -o WORKLOAD.yaml"},
		{[]string{"capture", "--upstream", "mongodb://a:1/", "-o", "-"}, "capture --upstream needs -o WORKLOAD.yaml"},
	} {
		code, _, stderr := runMain(t, tc.args...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || strings.Contains(stderr, "hunter2") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line saying %q", tc.args, code, stderr, tc.want)
		}
	}

	if _, err := os.Stat(out); err == nil {
		t.Error("a refused recording wrote its file")
	}
}

// TestRecordForStopsByItself ends a recording when --for elapses, and
// writes it even when nothing passed through.
func TestRecordForStopsByItself(t *testing.T) {
	port, err := freeport.Loopback()
	if err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "idle.log")

	code, stdout, stderr := runMain(t, "record", "--listen", "127.0.0.1:"+strconv.Itoa(port), "--upstream", "mongodb://127.0.0.1:1", "-o", out, "--for", "100ms")
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}

	if !strings.HasPrefix(stdout, "mongodb://127.0.0.1:"+strconv.Itoa(port)+"/") {
		t.Errorf("stdout %q: want the proxy's connection string", stdout)
	}

	if !strings.Contains(stderr, "recorded 0 commands on 0 connections") {
		t.Errorf("stderr:\n%s", stderr)
	}

	if fi, err := os.Stat(out); err != nil || fi.Size() != 0 {
		t.Errorf("the empty recording: %v, %v", fi, err)
	}
}

// TestCaptureFromTheWire runs `capture --upstream` in front of the test
// server: commands sent through its proxy until Ctrl-C become a workload
// that validates, the recording is kept beside it, and the upstream URI's
// password and the values sent are in none of the files or the output.
func TestCaptureFromTheWire(t *testing.T) {
	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(time.Millisecond), FindDocs: 1})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	port, err := freeport.Loopback()
	if err != nil {
		t.Fatal(err)
	}

	const password, value = "canary-wire-Pw7", "canary-wire-value-9"

	upstream := strings.Replace(srv.URI(), "mongodb://", "mongodb://app:"+password+"@", 1)
	dir := t.TempDir()
	out := filepath.Join(dir, "app.yaml")
	listen := "127.0.0.1:" + strconv.Itoa(port)

	r := newCLIRun("capture", "--listen", listen, "--upstream", upstream, "-o", out)
	done := r.start()

	waitFor(t, time.Minute, "the proxy's connection string", func() bool { return strings.Contains(r.stdout.String(), listen) })

	uri := strings.TrimSpace(strings.SplitN(r.stdout.String(), "\n", 2)[0])

	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetTimeout(30 * time.Second))
	if err != nil {
		t.Fatal(err)
	}

	ctx := t.Context()
	coll := client.Database("shop").Collection("orders")

	for i := range 5 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "status", Value: "A"}, {Key: "n", Value: i}, {Key: "note", Value: value}}); err != nil {
			t.Fatal(err)
		}

		if err := coll.FindOne(ctx, bson.D{{Key: "status", Value: value}}).Err(); err != nil {
			t.Fatal(err)
		}
	}

	if err := client.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}

	r.signals <- syscall.SIGINT

	if code := r.wait(t, done, mainTimeout); code != ExitOK {
		t.Fatalf("capture --upstream exited %d\n%s", code, r.stderr)
	}

	recording := filepath.Join(dir, "app.recording.log")

	for _, path := range []string{out, recording} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}

		if strings.Contains(string(data), password) {
			t.Errorf("%s holds the upstream URI's password", path)
		}

		if path == out && strings.Contains(string(data), value) {
			t.Errorf("the workload copied a value sent by the application (no --keep-values)")
		}
	}

	for what, s := range map[string]string{"stdout": r.stdout.String(), "stderr": r.stderr.String()} {
		if strings.Contains(s, password) {
			t.Errorf("the %s holds the upstream URI's password", what)
		}
	}

	spec, errs := readWorkload(context.Background(), out, nil)
	if len(errs) > 0 {
		t.Fatalf("the captured workload does not validate: %v", errs)
	}

	if len(spec.Spec.Operations) < 2 {
		t.Errorf("operations %+v, want the insert and the find captured", spec.Spec.Operations)
	}
}
