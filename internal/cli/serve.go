package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/targets"
)

// serveFlags are the options of `mongobench serve`.
type serveFlags struct {
	target   string
	lifetime time.Duration
	dataDir  string
}

func newServeCommand(st *State) *cobra.Command {
	var f serveFlags

	c := &cobra.Command{
		Use:   "serve",
		Short: "Start a server mongobench can launch (embedded FerretDB by default) and print its connection string",
		Long: `serve starts one of the servers mongobench launches for its runs — embedded
FerretDB on SQLite by default — on a free port of 127.0.0.1, prints its
connection string on standard output and keeps it running until Ctrl-C,
SIGTERM or --for elapses. Its data lives in a temporary directory removed
when it stops.

It is for poking at what a workload will run against (with mongosh or a
driver) and for the tests of client adapters, which need a real server
without a MongoDB installation.

With --data-dir (embedded kinds only) the server keeps its files in that
existing directory and leaves them there when it stops, so that a server
that was killed can be started again on the same data: the durability
phase of a run (docs/workloads.md#durability) does exactly that.`,
		Example: `  mongobench serve --for 10m
  mongobench serve --target ferretdb-postgres:shared_buffers=256MB`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runServe(st, &f)
		},
	}

	fl := c.Flags()
	fl.StringVar(&f.target, "target", targets.KindEmbedded, "the server to start: a target kind mongobench launches, with settings (see run --target)")
	fl.DurationVar(&f.lifetime, "for", 0, "stop after this long (default: until Ctrl-C)")
	fl.StringVar(&f.dataDir, "data-dir", "", "keep the data in this existing directory, left in place at the stop (embedded kinds only)")

	return c
}

func runServe(st *State, f *serveFlags) error {
	spec, err := targets.ParseTargetFlag(f.target)
	if err != nil {
		return badInput("--target: %v", err)
	}

	if kind, _ := targets.LookupKind(spec.Kind); !kind.Launched {
		return badInput("--target: %s names a deployment that exists already; serve starts one of: %s", spec.Kind, launchedKinds())
	}

	if f.lifetime < 0 {
		return badInput("--for must not be negative")
	}

	if f.dataDir != "" && spec.Kind != targets.KindEmbedded && spec.Kind != targets.KindEmbeddedMemory {
		return badInput("--data-dir: only the %s and %s kinds keep their data in a directory of one's own, not %s", targets.KindEmbedded, targets.KindEmbeddedMemory, spec.Kind)
	}

	sweepLeftovers(st)

	// Starting PostgreSQL takes seconds; a signal meanwhile cancels it.
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	signalled := make(chan bool, 1)

	go func() {
		select {
		case <-st.Signals:
			cancel()
			signalled <- true
		case <-started:
			signalled <- false
		}
	}()

	l, err := targets.Launch(ctx, spec, targets.LaunchOptions{DataDir: f.dataDir})

	close(started)

	stopNow := <-signalled

	cancel()

	if err != nil {
		return failed("starting %s: %v", spec.Kind, err)
	}

	if stopNow {
		// The signal came as the server became ready.
		if err := l.Stop(); err != nil {
			return failed("stopping %s: %v", spec.Kind, err)
		}

		return nil
	}

	unhook := st.onHardExit(func() { _ = l.Stop() })

	defer unhook()

	fmt.Fprintln(st.Stdout, l.URI)
	fmt.Fprintf(st.Stderr, "Serving %s; Ctrl-C stops it and removes its data.\n", l.Description)

	var timeout <-chan time.Time
	if f.lifetime > 0 {
		timeout = time.After(f.lifetime)
	}

	select {
	case <-st.Signals:
	case <-timeout:
	}

	if err := l.Stop(); err != nil {
		return failed("stopping %s: %v", spec.Kind, err)
	}

	return nil
}

// launchedKinds lists the target kinds mongobench starts itself.
func launchedKinds() string {
	var s string

	for _, k := range targets.Kinds() {
		if !k.Launched {
			continue
		}

		if s != "" {
			s += ", "
		}

		s += k.Name
	}

	return s
}
