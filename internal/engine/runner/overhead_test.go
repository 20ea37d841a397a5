//go:build unix

package runner_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/engine/client/clienttest"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// serveEnv makes the test binary a wiretest server instead of running
// tests: BenchmarkOverhead starts itself with it set, so that the server's
// CPU is spent in another process and getrusage(RUSAGE_SELF) counts the
// client's only.
const serveEnv = "MONGOBENCH_WIRETEST_SERVE"

func TestMain(m *testing.M) {
	clienttest.MaybeRun() // the client protocol's peer, for external_test.go

	if addr, ok := os.LookupEnv(serveEnv); ok {
		os.Exit(serveWiretest(addr))
	}

	os.Exit(m.Run())
}

// serveWiretest runs a null server on addr, prints its URI on stdout and
// serves until stdin is closed (or the parent dies).
func serveWiretest(addr string) int {
	srv, err := wiretest.Start(wiretest.Config{Addr: addr, Latency: wiretest.Fixed(0), FindDocs: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	fmt.Println(srv.URI())

	_, _ = io.Copy(io.Discard, os.Stdin)

	if err := srv.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	return 0
}

// startServerProcess starts the null server in a child process and returns
// its URI. The child is stopped when the benchmark ends.
func startServerProcess(tb testing.TB) string {
	tb.Helper()

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"=127.0.0.1:0")
	cmd.Stderr = os.Stderr

	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}

	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}

	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}

	exited := make(chan error, 1)

	tb.Cleanup(func() {
		_ = stdin.Close()

		go func() { exited <- cmd.Wait() }()

		select {
		case err := <-exited:
			if err != nil {
				tb.Errorf("wiretest server process: %v", err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			tb.Errorf("wiretest server process did not stop within 10s; killed (%v)", <-exited)
		}
	})

	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		tb.Fatalf("reading the wiretest server's URI: %v", err)
	}

	return strings.TrimSpace(line)
}

// overheadDB and overheadColl are where both loops send their findOne.
const (
	overheadDB   = "mongobench_overhead"
	overheadColl = "items"
)

// overheadWorkload is the engine's side: one findOne, closed-loop, ending
// after max_operations; concurrency, max_operations and the _id of the
// filter (a static "x", or a key distribution) are filled in per run.
const overheadWorkload = `
name: overhead
database: ` + overheadDB + `
collections:
  - name: ` + overheadColl + `
run:
  concurrency: %d
  max_operations: %d
  interval: 1s
operations:
  - name: find_one
    op: findOne
    collection: ` + overheadColl + `
    filter: {_id: %s}
`

// connect returns a client with a pool large enough for every concurrency
// measured, with at least warm connections open.
func connect(tb testing.TB, uri string, warm int) *mongo.Client {
	tb.Helper()

	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetMaxPoolSize(128))
	if err != nil {
		tb.Fatal(err)
	}

	tb.Cleanup(func() { _ = client.Disconnect(context.Background()) })

	coll := client.Database(overheadDB).Collection(overheadColl)
	if err := driverLoop(coll, warm, 10*warm); err != nil {
		tb.Fatalf("warming the pool: %v", err)
	}

	return client
}

// driverLoop is the bare loop: c goroutines share n findOne calls on one
// client, split evenly.
func driverLoop(coll *mongo.Collection, c, n int) error {
	var (
		wg       sync.WaitGroup
		firstErr atomic.Pointer[error]
	)

	ctx := context.Background()
	filter := bson.D{{Key: "_id", Value: "x"}}

	for g := range c {
		share := n / c
		if g < n%c {
			share++
		}

		wg.Go(func() {
			for range share {
				if err := coll.FindOne(ctx, filter).Err(); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}

	wg.Wait()

	if p := firstErr.Load(); p != nil {
		return *p
	}

	return nil
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime(tb testing.TB) time.Duration {
	tb.Helper()

	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}

	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs the b.N operations of run and reports throughput and client
// CPU per operation. Setup before it is excluded.
func measure(b *testing.B, run func()) {
	b.Helper()
	b.ReportAllocs()

	runtime.GC()

	cpu0 := cpuTime(b)
	start := time.Now()

	b.ResetTimer()
	run()
	b.StopTimer()

	elapsed := time.Since(start)
	cpu := cpuTime(b) - cpu0

	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
}

// BenchmarkOverhead compares the client CPU of one findOne done by a bare
// loop over the driver with the same findOne done by the engine (closed
// loop, max_operations = b.N), against a null server in another process.
// See docs/overhead.md.
func BenchmarkOverhead(b *testing.B) {
	uri := startServerProcess(b)
	client := connect(b, uri, 64)
	coll := client.Database(overheadDB).Collection(overheadColl)

	for _, c := range []int{1, 8, 64} {
		// Each run starts the same way: the same warm-up of the driver loop
		// at the same concurrency.
		warm := func(b *testing.B) {
			b.Helper()

			if err := driverLoop(coll, c, max(1000, 50*c)); err != nil {
				b.Fatal(err)
			}
		}

		b.Run(fmt.Sprintf("driver/c=%d", c), func(b *testing.B) {
			warm(b)

			var err error

			measure(b, func() { err = driverLoop(coll, c, b.N) })

			if err != nil {
				b.Fatal(err)
			}
		})

		b.Run(fmt.Sprintf("engine/c=%d", c), func(b *testing.B) {
			eng, plan := compileOverhead(b, client, c, b.N)

			warm(b)

			var res *runner.PhaseResult

			measure(b, func() { res = eng.RunPhase(context.Background(), plan) })

			checkPhase(b, res, int64(b.N))
		})
	}
}

// compileOverhead does what `mongobench run` does before RunPhase.
func compileOverhead(tb testing.TB, client *mongo.Client, c, n int) (*runner.Engine, runner.PhasePlan) {
	tb.Helper()

	return compileWorkload(tb, client, fmt.Sprintf(overheadWorkload, c, n, `"x"`))
}

func compileWorkload(tb testing.TB, client *mongo.Client, src string) (*runner.Engine, runner.PhasePlan) {
	tb.Helper()

	spec, errs := workload.Parse("overhead.yaml", []byte(src))
	if len(errs) > 0 {
		tb.Fatal(errs)
	}

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		tb.Fatal(errs)
	}

	ops, errs := op.Compile(spec, env)
	if len(errs) > 0 {
		tb.Fatal(errs)
	}

	phases, _ := spec.PhaseList()
	if len(phases) != 1 {
		tb.Fatalf("%d phases, want 1", len(phases))
	}

	eng := &runner.Engine{
		DB:         client.Database(spec.Database),
		Env:        env,
		Interval:   spec.Run.Interval.D(),
		AbortAfter: spec.Run.AbortAfter.D(),
		Timeout:    spec.Run.Timeout.D(),
	}

	return eng, runner.PhasePlan{Spec: phases[0], Mix: spec.MixOperations(phases[0]), Ops: ops}
}

// checkPhase fails unless the phase completed with n successful operations.
func checkPhase(tb testing.TB, res *runner.PhaseResult, n int64) {
	tb.Helper()

	if res.Status != runner.StatusCompleted {
		tb.Fatalf("phase %s: %s (first error: %v)", res.Status, res.Reason, res.FirstError)
	}

	var ok, bad int64

	for _, t := range res.Registry.Totals() {
		ok += t.Count
		for _, e := range t.Errors {
			bad += e
		}
	}

	if ok != n || bad != 0 {
		tb.Fatalf("%d operations succeeded and %d failed, want %d and 0 (first error: %v)", ok, bad, n, res.FirstError)
	}
}

// saturationWorkload asks for far more than any client can do against a
// null server: the engine must say so instead of reporting the latency of
// the operations it managed to send as if the schedule had been kept. The
// small backlog makes the overflow certain even on a client as slow as a
// -race build on a busy machine, where the scheduler itself falls behind.
const saturationWorkload = `
name: saturation
database: ` + overheadDB + `
collections:
  - name: ` + overheadColl + `
run:
  rate: 1000000/s
  max_in_flight: 64
  max_backlog: 1000
  duration: 1s
  interval: 500ms
operations:
  - name: find_one
    op: findOne
    collection: ` + overheadColl + `
    filter: {_id: "x"}
`

func TestSaturationIsReported(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an overloaded open-loop phase for 1s")
	}

	srv, err := wiretest.Start(wiretest.Config{FindDocs: 1})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()))
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })

	eng, plan := compileWorkload(t, client, saturationWorkload)
	res := eng.RunPhase(context.Background(), plan)

	if res.Status != runner.StatusCompleted {
		t.Fatalf("phase %s: %s (first error: %v)", res.Status, res.Reason, res.FirstError)
	}

	st := res.Schedule
	if st == nil {
		t.Fatal("an open-loop phase has no schedule stats")
	}

	var done int64

	var maxLatency time.Duration

	for _, o := range res.Registry.Totals() {
		done += o.Count
		maxLatency = max(maxLatency, time.Duration(metrics.Summarize(o.Hist).Max)*time.Microsecond)
	}

	t.Logf("scheduled %d, done %d, late %d, dropped %d, pending %d, max wait %s, max scheduler lag %s, max latency %s",
		st.Scheduled, done, st.Late, st.Dropped, st.Pending, st.MaxWait, st.MaxSchedulerLag, maxLatency)
	t.Logf("warning: %s", st.Warning)

	if st.Warning == "" {
		t.Error("the schedule was not kept, but ScheduleStats.Warning is empty")
	}

	if st.Late+st.Dropped == 0 {
		t.Error("no operation counted as late or dropped")
	}

	// Late operations' waits are in their latency, counted from the due
	// time: a saturated client must not report null-server latencies.
	if st.Late > 0 && maxLatency < runner.LateThreshold {
		t.Errorf("%d operations started late, but the slowest latency recorded is %s", st.Late, maxLatency)
	}
}
