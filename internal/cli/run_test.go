package cli

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets"
)

// smallOps are the operations of testdata/small.yaml, in file order.
var smallOps = []string{"report_error", "get_error", "find_by_message", "count_project"}

// TestRunEmbedded runs a small workload against the embedded default and
// checks the table, the messages, the results file and the cleanup. The
// measured phase is bounded by a number of operations instead of
// small.yaml's 1.5 s, which a loaded machine can spend on the first few
// operations of an embedded server (a run of 0 operations, failing the
// test for the machine's speed).
func TestRunEmbedded(t *testing.T) {
	out := outPath(t)

	code, stdout, stderr := runMain(t, "run", countedWorkload(t, 200), "--out", out)
	if code != ExitOK {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitOK, stdout, stderr)
	}

	// The table: its header, then one row per operation.
	header := []string{"operation", "count", "ops/s", "mean", "p50", "p90", "p95", "p99", "p99.9", "max", "errors"}
	rows := map[string]bool{}
	sawHeader := false

	for _, l := range strings.Split(stdout, "\n") {
		f := strings.Fields(l)
		if slices.Equal(f, header) {
			sawHeader = true
			continue
		}

		if sawHeader && len(f) == len(header) {
			rows[f[0]] = true
		}
	}

	if !sawHeader {
		t.Errorf("stdout has no table header %q:\n%s", header, stdout)
	}

	for _, name := range smallOps {
		if !rows[name] {
			t.Errorf("the table has no row for operation %q:\n%s", name, stdout)
		}
	}

	// Messages: which server, and that it is not MongoDB.
	for _, want := range []string{"started embedded FerretDB", "not MongoDB", "Results written to " + out} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not contain %q:\n%s", want, stderr)
		}
	}

	if strings.Contains(stdout, "[run]") || strings.Contains(stdout, "No --uri given") {
		t.Errorf("progress or messages went to stdout, which is for the table:\n%s", stdout)
	}

	assertGone(t, embeddedDir(t, stderr))

	res := readResults(t, out)

	if res.Status != result.StatusCompleted {
		t.Errorf("status %q, want %q (reason %q)", res.Status, result.StatusCompleted, res.StatusReason)
	}

	if res.Target.Kind != targets.KindEmbedded {
		t.Errorf("target kind %q, want %q", res.Target.Kind, targets.KindEmbedded)
	}

	if u := res.Target.URI; u == "" || redact.URI(u) != u || strings.Contains(u, "@") {
		t.Errorf("target uri %q is empty or carries credentials", u)
	}

	if res.Concurrency != 2 || res.Seed != 42 || res.Workload.Name != "small" {
		t.Errorf("concurrency %d, seed %d, workload %q; want 2, 42, small", res.Concurrency, res.Seed, res.Workload.Name)
	}

	// Phases: the load, then the measured run.
	var names []string
	for _, p := range res.Phases {
		names = append(names, p.Name)
	}

	if want := []string{"load:errors", result.PhaseRun}; !slices.Equal(names, want) {
		t.Errorf("phases %q, want %q", names, want)
	}

	if load := phase(res, "load:errors"); load != nil {
		var docs int64
		for _, o := range load.Operations {
			docs += o.Docs
		}

		if docs != 200 {
			t.Errorf("load phase inserted %d documents, want 200", docs)
		}

		if ok, bad := totals(load.Operations); ok == 0 || bad != 0 {
			t.Errorf("load phase: %d batches, %d failed; want some batches and no failure", ok, bad)
		}
	}

	run := phase(res, result.PhaseRun)
	if run == nil {
		t.Fatal("no run phase")
	}

	if run.WarmupS != 0.5 {
		t.Errorf("run phase warmup_s %v, want 0.5", run.WarmupS)
	}

	var opNames []string
	for _, o := range res.Operations {
		opNames = append(opNames, o.Name)
	}

	if !slices.Equal(opNames, smallOps) {
		t.Errorf("operations %q, want %q", opNames, smallOps)
	}

	for _, p := range res.Phases {
		if len(p.Intervals) == 0 {
			t.Errorf("phase %s has no intervals", p.Name)
		}

		for i, o := range p.Operations {
			var sum int64

			for _, iv := range p.Intervals {
				sum += iv.Operations[i].Count
			}

			if o.Count != sum {
				t.Errorf("phase %s, operation %s: count %d, but its intervals add up to %d", p.Name, o.Name, o.Count, sum)
			}

			l := o.LatencyUS
			if o.Count > 0 && !(l.P50 <= l.P90 && l.P90 <= l.P95 && l.P95 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
				t.Errorf("phase %s, operation %s: percentiles not monotone: %+v", p.Name, o.Name, l)
			}
		}
	}

	if ok, bad := totals(res.Operations); ok != 200 || bad != 0 {
		t.Errorf("run phase: %d operations, %d failed; want max_operations = 200 and no failure", ok, bad)
	}
}

// TestRunMaxOperations checks that run.max_operations (without a duration)
// stops the run after exactly that many measured operations.
func TestRunMaxOperations(t *testing.T) {
	const want = 150 // run.max_operations of testdata/maxops.yaml

	for _, tc := range []struct {
		name        string
		concurrency string
	}{
		{name: "one worker", concurrency: "1"},
		{
			name:        "four workers",
			concurrency: "4",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := outPath(t)

			code, stdout, stderr := runMain(t, "run", "testdata/maxops.yaml", "--out", out, "--concurrency", tc.concurrency)
			if code != ExitOK {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitOK, stdout, stderr)
			}

			res := readResults(t, out)
			if res.Status != result.StatusCompleted {
				t.Errorf("status %q, want %q", res.Status, result.StatusCompleted)
			}

			if ok, bad := totals(res.Operations); ok+bad != want {
				t.Errorf("%d operations succeeded and %d failed, want %d in all", ok, bad, want)
			}
		})
	}
}

// TestRunSequenceVars runs a sequence whose find filters on the iteration
// variable the insert just wrote, so every find must return a document:
// iteration variables work end to end.
func TestRunSequenceVars(t *testing.T) {
	out := outPath(t)

	code, stdout, stderr := runMain(t, "run", "testdata/sequence.yaml", "--out", out)
	if code != ExitOK {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitOK, stdout, stderr)
	}

	res := readResults(t, out)

	var names []string
	for _, o := range res.Operations {
		names = append(names, o.Name)
	}

	if want := []string{"insert", "find-by-var", "iteration"}; !slices.Equal(names, want) {
		t.Fatalf("operations %q, want %q (the sequence's whole iteration last)", names, want)
	}

	ins, find, it := res.Operations[0], res.Operations[1], res.Operations[2]

	// The iteration is measured as a unit of its own, once per pass.
	if it.Unit != result.UnitIteration || !slices.Equal(it.Steps, []string{"insert", "find-by-var"}) ||
		it.Count == 0 || it.Count > ins.Count || it.Count > find.Count {
		t.Errorf("iteration %s %v count %d, want a unit of both with at most their counts %d, %d",
			it.Unit, it.Steps, it.Count, ins.Count, find.Count)
	}

	if ins.Count == 0 || find.Count == 0 {
		t.Fatalf("insert count %d, find count %d; want both > 0", ins.Count, find.Count)
	}

	if _, bad := totals(res.Operations); bad != 0 {
		t.Errorf("%d operations failed, want none", bad)
	}

	if find.Docs < find.Count {
		t.Errorf("%d finds returned %d documents: some find missed the document its iteration inserted", find.Count, find.Docs)
	}

	// A sequence runs the insert before the find in every iteration.
	if find.Count > ins.Count+2 {
		t.Errorf("%d finds but only %d inserts", find.Count, ins.Count)
	}
}

// TestRunUnreachable points mongobench at a closed port with a password in
// the URI: one error line naming the address, no password anywhere.
func TestRunUnreachable(t *testing.T) {
	t.Parallel()

	port := closedPort(t)
	uri := "mongodb://user:s3cretPW@127.0.0.1:" + port + "/"

	r := newCLIRun("run", "testdata/small.yaml", "--uri", uri, "--out", outPath(t))
	code := r.wait(t, r.start(), 20*time.Second)
	stdout, stderr := r.stdout.String(), r.stderr.String()

	if code != ExitFailed {
		t.Errorf("exit code %d, want %d\nstderr:\n%s", code, ExitFailed, stderr)
	}

	lines := errorLines(stderr)
	if len(lines) != 1 {
		t.Errorf("want exactly one Error: line, got %d:\n%s", len(lines), stderr)
	} else if !strings.Contains(lines[0], "127.0.0.1:"+port) {
		t.Errorf("the error does not name the address 127.0.0.1:%s: %s", port, lines[0])
	}

	if strings.Contains(stdout+stderr, "s3cretPW") {
		t.Errorf("the password leaked:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}

	assertNoStackTrace(t, stderr)
}

// TestRunBadInput checks the usage errors that exit with code 2 before any
// server is involved.
func TestRunBadInput(t *testing.T) {
	t.Parallel()

	// A host name with a space is accepted by the driver's parser;
	// mongobench must reject it at once rather than after the connect
	// timeout.

	for _, tc := range []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"bad uri", []string{"run", "testdata/small.yaml", "--uri", "mongodb://bad uri"}, "invalid MongoDB URI"},
		{"bad uri with password", []string{"run", "testdata/small.yaml", "--uri", "mongodb://u:s3cretPW@bad host/"}, "invalid MongoDB URI"},
		{"uri with wrong scheme", []string{"run", "testdata/small.yaml", "--uri", "http://localhost/"}, "invalid MongoDB URI"},
		{"uri with bad port and password", []string{"run", "testdata/small.yaml", "--uri", "mongodb://u:s3cretPW@localhost:99999/"}, "invalid MongoDB URI"},
		{"uri with bad option", []string{"run", "testdata/small.yaml", "--uri", "mongodb://localhost/?maxPoolSize=abc"}, "maxPoolSize"},
		{"unknown flag", []string{"run", "testdata/small.yaml", "--no-such-flag"}, "--no-such-flag"},
		{"zero concurrency", []string{"run", "testdata/small.yaml", "--concurrency", "0"}, "--concurrency"},
		{"negative duration", []string{"run", "testdata/small.yaml", "--duration", "-1s"}, "--duration"},
		{"missing file", []string{"run", "testdata/no-such-workload.yaml"}, "testdata/no-such-workload.yaml"},
		{"no workload", []string{"run"}, "Error:"},
		{"two workloads", []string{"run", "testdata/small.yaml", "testdata/maxops.yaml"}, "Error:"},
		{"invalid workload", []string{"run", "testdata/broken_weight.yaml"}, "operations[0].weight: must be > 0"},
		{"unknown command", []string{"frobnicate"}, "frobnicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			code, stdout, stderr := runMain(t, append(tc.args, "--out", outPath(t))...)
			if code != ExitBadInput {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitBadInput, stdout, stderr)
			}

			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr does not contain %q:\n%s", tc.want, stderr)
			}

			if strings.Contains(stderr, "started embedded FerretDB") {
				t.Errorf("a server was started for bad input:\n%s", stderr)
			}

			if strings.Contains(stdout+stderr, "s3cretPW") {
				t.Errorf("the password leaked:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}

			assertNoStackTrace(t, stdout+stderr)
		})
	}
}

// TestRunRefusesForeignDatabase checks that mongobench refuses a database it
// did not create, uses it only with --allow-existing-db, and never drops it.
func TestRunRefusesForeignDatabase(t *testing.T) {
	const db = "mongobench_cli_small" // testdata/small.yaml's database

	e := startServer(t)
	client := connectClient(t, e.URI())
	users := client.Database(db).Collection("users")
	userDoc := bson.D{{Key: "_id", Value: "alice"}, {Key: "role", Value: "admin"}}

	if _, err := users.InsertOne(t.Context(), userDoc); err != nil {
		t.Fatalf("inserting the user's document: %v", err)
	}

	assertUserData := func(when string) {
		t.Helper()

		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()

		var got bson.D
		if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: "alice"}}).Decode(&got); err != nil {
			t.Fatalf("%s: the user's document is gone: %v", when, err)
		}

		if n, err := users.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
			t.Errorf("%s: the user's collection holds %d documents (err %v), want 1", when, n, err)
		}

		names, err := client.Database(db).ListCollectionNames(ctx, bson.D{})
		if err != nil {
			t.Fatalf("%s: listing collections: %v", when, err)
		}

		if slices.Contains(names, targets.MarkerCollection) {
			t.Errorf("%s: mongobench marked the user's database as its own (collections %q)", when, names)
		}
	}

	// Without the flag: refused, nothing written.
	out := outPath(t)

	code, _, stderr := runMain(t, "run", "testdata/small.yaml", "--uri", e.URI(), "--out", out)
	if code != ExitBadInput {
		t.Errorf("exit code %d, want %d\nstderr:\n%s", code, ExitBadInput, stderr)
	}

	if !strings.Contains(stderr, "--allow-existing-db") {
		t.Errorf("the refusal does not mention --allow-existing-db:\n%s", stderr)
	}

	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run wrote a results file %s (stat: %v)", out, err)
	}

	assertUserData("after the refused run")

	// With the flag: the run works and the database survives it.
	out = outPath(t)

	code, stdout, stderr := runMain(t, "run", "testdata/small.yaml", "--uri", e.URI(), "--allow-existing-db", "--out", out)
	if code != ExitOK {
		t.Fatalf("exit code %d with --allow-existing-db, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitOK, stdout, stderr)
	}

	res := readResults(t, out)
	if res.Status != result.StatusCompleted || res.Target.Kind != targets.KindURI {
		t.Errorf("status %q, target kind %q; want %q, %q", res.Status, res.Target.Kind, result.StatusCompleted, targets.KindURI)
	}

	dbs, err := client.ListDatabaseNames(t.Context(), bson.D{})
	if err != nil {
		t.Fatalf("listing databases: %v", err)
	}

	if !slices.Contains(dbs, db) {
		t.Fatalf("database %q was dropped by a run allowed to use it (databases: %q)", db, dbs)
	}

	assertUserData("after the run with --allow-existing-db")

	// Using the database once does not make it mongobench's.
	code, _, stderr = runMain(t, "run", "testdata/small.yaml", "--uri", e.URI(), "--out", outPath(t))
	if code != ExitBadInput {
		t.Errorf("second run without the flag: exit code %d, want %d\nstderr:\n%s", code, ExitBadInput, stderr)
	}

	assertUserData("after the second refused run")
}

// TestRunInterrupt sends one interrupt during the measured phase: the run
// stops early (its status interrupted, not completed: it was to measure for
// 10 minutes), writes its results so far and exits with code 1.
func TestRunInterrupt(t *testing.T) {
	out := outPath(t)
	r := newCLIRun("run", "testdata/small.yaml", "--duration", "10m", "--out", out)
	done := r.start()

	// Interrupt once an interval has measured something: on a busy machine
	// the first interval may hold no completed operation.
	waitFor(t, setupLimit, "a measured interval with operations", func() bool {
		return busyIntervalRe.MatchString(r.stderr.String())
	})
	r.signals <- os.Interrupt

	code := r.wait(t, done, mainTimeout)
	stderr := r.stderr.String()

	if code != ExitFailed {
		t.Errorf("exit code %d, want %d\nstderr:\n%s", code, ExitFailed, stderr)
	}

	if codes := r.exitCodes(); len(codes) > 0 {
		t.Errorf("State.Exit called with %v after a single interrupt", codes)
	}

	if !strings.Contains(stderr, "Interrupted") {
		t.Errorf("stderr does not report the interrupt:\n%s", stderr)
	}

	assertGone(t, embeddedDir(t, stderr))

	res := readResults(t, out)
	if res.Status != result.StatusInterrupted {
		t.Errorf("status %q, want %q", res.Status, result.StatusInterrupted)
	}

	if ok, _ := totals(res.Operations); ok == 0 {
		t.Errorf("no measured operation in the results of the interrupted run")
	}
}

// TestRunSecondInterrupt sends two interrupts: the second calls Exit(130)
// at once, after removing the embedded server's directory. (The window in
// which signals count as one is shrunk to a nanosecond here;
// TestRunSignalBurst covers it.)
func TestRunSecondInterrupt(t *testing.T) {
	r := newCLIRun("run", "testdata/small.yaml", "--duration", "10m", "--out", outPath(t))
	r.st.steps.burst = time.Nanosecond

	dirAtExit := make(chan bool, 1)
	r.onExit = func(int) {
		_, err := os.Stat(embeddedDir(t, r.stderr.String()))
		dirAtExit <- !os.IsNotExist(err)
	}

	done := r.start()

	waitFor(t, setupLimit, "a measured interval", func() bool { return measuredIntervalRe.MatchString(r.stderr.String()) })
	r.signals <- os.Interrupt
	r.signals <- os.Interrupt

	select {
	case exists := <-dirAtExit:
		if exists {
			t.Errorf("the embedded server's directory still existed when Exit was called")
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("Exit was not called after a second interrupt\nstderr:\n%s", r.stderr)
	}

	if codes := r.exitCodes(); !slices.Equal(codes, []int{ExitForced}) {
		t.Errorf("Exit called with %v, want [%d]", codes, ExitForced)
	}

	// In a real process Exit does not return; here Main goes on and must
	// still end, cleanly.
	if code := r.waitAllowPanic(t, done, mainTimeout); code == panicCode {
		p := r.panicValue()
		if strings.Contains(p, "index out of range") && strings.Contains(p, "onHardExit") {
			t.Fatalf("panic after a second interrupt: %s", p)
		}

		t.Fatalf("Main panicked after the second interrupt: %s", p)
	}
}

// TestRunSignalBurst sends SIGINT and SIGTERM together, as a terminal and
// GNU timeout do: they are one request, so the run stops gracefully, writes
// its results and never exits at once.
func TestRunSignalBurst(t *testing.T) {
	out := outPath(t)
	r := newCLIRun("run", "testdata/small.yaml", "--duration", "10m", "--out", out)
	done := r.start()

	waitFor(t, setupLimit, "a measured interval with operations", func() bool {
		return busyIntervalRe.MatchString(r.stderr.String())
	})
	r.signals <- os.Interrupt
	r.signals <- syscall.SIGTERM

	code := r.wait(t, done, mainTimeout)
	stderr := r.stderr.String()

	if code != ExitFailed {
		t.Errorf("exit code %d, want %d\nstderr:\n%s", code, ExitFailed, stderr)
	}

	if codes := r.exitCodes(); len(codes) > 0 {
		t.Errorf("State.Exit called with %v after two signals sent together\nstderr:\n%s", codes, stderr)
	}

	if !strings.Contains(stderr, "Interrupted (SIGINT)") || !strings.Contains(stderr, "Stopping: stopping the embedded server") {
		t.Errorf("stderr does not say what the stop waits for:\n%s", stderr)
	}

	if res := readResults(t, out); res.Status != result.StatusInterrupted {
		t.Errorf("status %q, want %q", res.Status, result.StatusInterrupted)
	}

	assertGone(t, embeddedDir(t, stderr))
}

// TestRunServerDies stops the server in the middle of a run: the run aborts
// after run.abort_after instead of running its 30 s, and says why.
func TestRunServerDies(t *testing.T) {
	t.Parallel() // mostly waits: for the server to stop, then for the abort

	e := startServer(t)
	out := outPath(t)

	r := newCLIRun("run", "testdata/abort.yaml", "--uri", e.URI(), "--out", out)
	done := r.start()

	waitFor(t, setupLimit, "a measured interval", func() bool { return measuredIntervalRe.MatchString(r.stderr.String()) })

	if err := e.Close(); err != nil {
		t.Logf("closing the server: %v", err)
	}

	code := r.wait(t, done, mainTimeout)
	stderr := r.stderr.String()

	if code != ExitFailed {
		t.Errorf("exit code %d, want %d\nstderr:\n%s", code, ExitFailed, stderr)
	}

	if !strings.Contains(stderr, "run aborted") {
		t.Errorf("stderr does not report the abort:\n%s", stderr)
	}

	if lines := errorLines(stderr); len(lines) != 1 {
		t.Errorf("want one Error: line, got %q", lines)
	}

	assertNoStackTrace(t, stderr)

	res := readResults(t, out)
	if res.Status != result.StatusAborted {
		t.Errorf("status %q, want %q", res.Status, result.StatusAborted)
	}

	// Measured for less than its 30 s: the abort, not the duration, ended
	// it (the results' clock, not the test's, which a loaded machine's
	// set-up would stretch).
	if p := phase(res, result.PhaseRun); p == nil {
		t.Error("no run phase in the results")
	} else if p.DurationS >= 30 {
		t.Errorf("the run phase measured for %.1f s, as if the server had not died", p.DurationS)
	}

	if !strings.Contains(res.StatusReason, "no operation succeeded") {
		t.Errorf("status reason %q does not say that nothing succeeded", res.StatusReason)
	}

	if ok, _ := totals(res.Operations); ok == 0 {
		t.Errorf("no measured operation in the results, though the server was up for a while")
	}
}

// TestVersion checks both spellings of the version request.
func TestVersion(t *testing.T) {
	t.Parallel()

	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, stderr := runMain(t, args...)
		if code != ExitOK {
			t.Errorf("%q: exit code %d, want %d\nstderr:\n%s", args, code, ExitOK, stderr)
		}

		if !strings.HasPrefix(stdout, "mongobench ") || !strings.Contains(stdout, "\ngo:       "+runtime.Version()+" ") ||
			!strings.Contains(stdout, "\ncommit:   ") || !strings.Contains(stdout, "\nferretdb: v1.") {
			t.Errorf("%q: stdout %q, want the mongobench, commit, go and ferretdb lines", args, stdout)
		}
	}
}
