package client

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/engine/client/clienttest"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// benchWorkload is the operation the Go engine's overhead is quoted for (a
// findOne by _id, docs/overhead.md) and an insertOne of a small document.
const benchWorkload = `name: b
database: d
collections:
  - name: c
operations:
  - name: get
    op: findOne
    collection: c
    filter: {_id: {^format: {pattern: "u%05d", args: [{^int: {min: 1, max: 1000}}]}}}
  - name: put
    op: insertOne
    collection: c
    document: {_id: {^objectId: {}}, name: {^name: {}}, age: {^int: {min: 18, max: 90}}, at: {^now: {}}, score: {^float: {min: 0, max: 1}}}
run:
  duration: 1s
`

// BenchmarkGoSide measures what driving an adapter costs mongobench's own
// process per operation: encoding the operation into an ops line, writing
// it, reading the done line that reports it and decoding its record. The
// adapter is the protocol peer in echo mode (another process, answering
// each ops line at once), so its CPU is not counted in go-cpu-ns/op, this
// process's CPU (user + system) per operation; ns/op is wall time, which
// includes waiting for the peer. Arguments are generated before the timer
// starts: generating them is the Go engine's work too, not the protocol's.
func BenchmarkGoSide(b *testing.B) {
	for _, name := range []string{"get", "put"} {
		b.Run(name, func(b *testing.B) { benchGoSide(b, name) })
	}
}

func benchGoSide(b *testing.B, name string) {
	spec, errs := workload.Parse("b.yaml", []byte(benchWorkload))
	if len(errs) > 0 {
		b.Fatal(errs)
	}

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		b.Fatal(errs)
	}

	ops, errs := op.Compile(spec, env)
	if len(errs) > 0 {
		b.Fatal(errs)
	}

	cmd, penv := clienttest.Command("echo")
	s, _ := Lookup("node-driver")

	a, err := Start(context.Background(), Config{
		Stack: s, Command: cmd, Env: []string{penv}, URI: "mongodb://127.0.0.1:1/", Database: "d",
		Spec: spec, Ops: ops, LogDir: b.TempDir(), Handshake: 20 * time.Second,
	})
	if err != nil {
		b.Fatal(err)
	}

	defer a.Close(10 * time.Second)

	id, _ := a.OpID(name)
	o := ops[id]
	scope := env.NewScope(0)
	args := make([]op.Args, 1024)

	for i := range args {
		scope.NextIteration()

		if args[i], err = o.Args(scope); err != nil {
			b.Fatal(err)
		}
	}

	if err := a.Phase("run", 1); err != nil {
		b.Fatal(err)
	}

	const batch, ahead = 128, 512

	var (
		line      OpsLine
		sent, got int
		latency   int64
	)

	b.ReportAllocs()

	cpu0 := cpuTime(b)

	b.ResetTimer()

	for got < b.N {
		for sent < b.N && sent-got < ahead {
			line.Begin(0)

			for k := 0; k < batch && sent < b.N; k++ {
				if err := line.Add(id, &args[sent%len(args)]); err != nil {
					b.Fatal(err)
				}
				sent++
			}

			if err := a.SendOps(&line); err != nil {
				b.Fatal(err)
			}
		}

		r, ok, err := a.Next()
		if err != nil {
			b.Fatal(err)
		}

		if !ok {
			<-a.Wake()
			continue
		}

		for _, rec := range r.Records {
			if rec.Op != id || rec.Err != nil {
				b.Fatalf("record %+v, want operation %d without error", rec, id)
			}

			latency += rec.Latency
		}

		got += len(r.Records)
	}

	b.StopTimer()

	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N), "go-cpu-ns/op")

	if latency != int64(b.N)*250000 {
		b.Fatalf("latencies add up to %d, want %d", latency, int64(b.N)*250000)
	}
}

// cpuTime is the CPU time (user + system) this process has used, its
// children (the peer) excluded.
func cpuTime(tb testing.TB) time.Duration {
	tb.Helper()

	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}

	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
