package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// testServerFlags are the options of `mongobench testserver`.
type testServerFlags struct {
	addr        string
	delay       time.Duration
	jitter      string
	perInFlight time.Duration
	stallAfter  time.Duration
	stallFor    time.Duration
	findDocs    int
	lifetime    time.Duration
}

func newTestServerCommand(st *State) *cobra.Command {
	var f testServerFlags

	c := &cobra.Command{
		Use:   "testserver",
		Short: "Serve the MongoDB wire protocol with programmable latency (a null server for calibration)",
		Long: `testserver answers the MongoDB wire protocol (hello, ping, buildInfo, and
success replies for CRUD commands) without storing anything, holding each
reply for a programmable time. It measures mongobench's own overhead (a null
server) and shows how the load models behave when a server stalls.

The delay runs from each request's arrival to its reply's write. On Linux it
is timed with a kernel timer, not rounded up to whole milliseconds as Go's own
timers are there; a busy machine still adds its scheduling delay (see
docs/load-models.md for how to measure it).

It prints its connection string and runs until Ctrl-C or --for elapses. It
listens on the loopback interface unless --addr says otherwise.`,
		Example: `  mongobench testserver --delay 1ms --stall-after 10s --stall-for 2s &
  mongobench run workloads/examples/fixed-rate.yaml --uri mongodb://127.0.0.1:27099/?directConnection=true`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runTestServer(st, &f)
		},
	}

	fl := c.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:27099", "listen address")
	fl.DurationVar(&f.delay, "delay", 0, "reply delay (the mean with --jitter exp, the maximum with --jitter uniform)")
	fl.StringVar(&f.jitter, "jitter", "", "vary the delay: uniform (0..delay) or exp (exponential with mean delay)")
	fl.DurationVar(&f.perInFlight, "per-in-flight", 0, "extra delay per other request in flight (a server that slows with load)")
	fl.DurationVar(&f.stallAfter, "stall-after", 0, "start a stall this long after the server starts")
	fl.DurationVar(&f.stallFor, "stall-for", 0, "hold every reply received during the stall until it ends")
	fl.IntVar(&f.findDocs, "find-docs", 1, "documents returned by find and aggregate (template records: ObjectId _id, strings, an int, dates, a nested document, an array)")
	fl.DurationVar(&f.lifetime, "for", 0, "stop after this long (default: until Ctrl-C)")

	return c
}

func runTestServer(st *State, f *testServerFlags) error {
	var lat wiretest.Latency

	switch f.jitter {
	case "":
		lat = wiretest.Fixed(f.delay)
	case "uniform":
		lat = wiretest.Uniform(0, f.delay, 1)
	case "exp":
		lat = wiretest.Exponential(f.delay, 1)
	default:
		return badInput("--jitter must be uniform or exp, not %q", f.jitter)
	}

	if f.perInFlight > 0 {
		lat = wiretest.LoadDependent{Base: f.delay, PerInFlight: f.perInFlight}
	}

	if f.stallFor > 0 {
		lat = wiretest.Stall{After: f.stallAfter, For: f.stallFor, Base: lat}
	}

	srv, err := wiretest.Start(wiretest.Config{Addr: f.addr, Latency: lat, FindDocs: f.findDocs})
	if err != nil {
		return failed("starting the test server: %v", err)
	}

	defer func() { _ = srv.Close() }()

	fmt.Fprintln(st.Stdout, srv.URI())
	fmt.Fprintln(st.Stderr, "Test server running (it stores nothing); Ctrl-C stops it.")

	var timeout <-chan time.Time
	if f.lifetime > 0 {
		timeout = time.After(f.lifetime)
	}

	select {
	case <-st.Signals:
	case <-timeout:
	}

	stats := srv.Stats()
	fmt.Fprintf(st.Stderr, "Served %d replies (%d unacknowledged requests), at most %d in flight.\n",
		stats.Replies, stats.MoreToCome, stats.MaxInFlight)

	return nil
}
