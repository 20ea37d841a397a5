package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/base/atomicfile"
	"github.com/mongobench/mongobench/internal/targets/wireproxy"
)

// recordFlags are the options of `mongobench record`.
type recordFlags struct {
	listen, upstream, out string
	lifetime              time.Duration
}

// defaultRecordListen is where the proxy listens unless told: loopback, so
// that a recording never opens a port to the network by default.
const defaultRecordListen = "127.0.0.1:27100"

func newRecordCommand(st *State) *cobra.Command {
	var f recordFlags

	c := &cobra.Command{
		Use:   "record --upstream URI -o RECORDING.log",
		Short: "Record an application's commands through a wire-protocol proxy, as a mongod log",
		Long: `record is a recording proxy: it listens on --listen (127.0.0.1:27100 by
default), the application connects to it instead of its server (the printed
connection string, with directConnection=true), and it forwards every byte to
the server of --upstream (any server: mongod, FerretDB, the embedded one of
mongobench serve) and back.

Every command passing through is written to the recording with the time the
server took to answer it, as a line of mongod's JSON log ("Slow query",
logv2), so that capture reads a recording as it reads a server log that had
slowms 0: mongobench capture RECORDING.log -o workload.yaml.

Credentials are never recorded: authentication commands keep only their name
and mechanism, and fields named like secrets (password, pwd, token, ...) are
left out at any depth; the upstream URI's password is masked wherever it
appears. The proxy strips the compressors of the application's hello, so that
the traffic stays uncompressed and readable. It speaks neither TLS nor
mongodb+srv, and stands in front of one server.

It runs until Ctrl-C or --for elapses, then writes the recording atomically
(the file appears complete, or not at all). See docs/capture.md, "Capturing
from the wire".`,
		Example: `  mongobench serve &          # or any server
  mongobench record --upstream mongodb://127.0.0.1:27017 -o app.log --for 10m
  python3 app.py --uri 'mongodb://127.0.0.1:27100/?directConnection=true'
  mongobench capture app.log -o workload.yaml`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runRecord(st, &f)
		},
	}

	fl := c.Flags()
	fl.StringVar(&f.listen, "listen", defaultRecordListen, "address the proxy listens on (the application connects here)")
	fl.StringVar(&f.upstream, "upstream", "", "connection string of the server to forward to (required; one server, no TLS)")
	fl.StringVarP(&f.out, "out", "o", "", "recording to write, a mongod JSON log (required)")
	fl.DurationVar(&f.lifetime, "for", 0, "stop after this long (default: until Ctrl-C)")

	return c
}

// runRecord is `mongobench record`; `capture --listen` is the same.
func runRecord(st *State, f *recordFlags) error {
	switch {
	case strings.TrimSpace(f.out) == "" || f.out == stdoutPath:
		return badInput("--out is required: give the file to write the recording to")
	case strings.TrimSpace(f.upstream) == "":
		return badInput("--upstream is required: give the connection string of the server to record in front of")
	case f.lifetime < 0:
		return badInput("--for must not be negative")
	}

	if _, _, err := net.SplitHostPort(f.listen); err != nil {
		return badInput("--listen %q: give HOST:PORT, such as %s", f.listen, defaultRecordListen)
	}

	addr, err := wireproxy.UpstreamAddr(f.upstream)
	if err != nil {
		return badInput("--upstream: %v", err)
	}

	outs := newOutputs(st)
	defer outs.release()

	if err := outs.add("--out", f.out); err != nil {
		return err
	}

	var stats wireproxy.Stats

	werr := atomicfile.Write(f.out, func(w io.Writer) error {
		p, err := wireproxy.Start(wireproxy.Config{
			Listen: f.listen, Upstream: addr, Out: w, Secrets: wireproxy.URISecrets(f.upstream),
		})
		if err != nil {
			return &exitError{code: ExitFailed, msg: fmt.Sprintf("--listen: %v", err)}
		}

		unhook := st.onHardExit(func() { _ = p.Close() })
		defer unhook()

		fmt.Fprintln(st.Stdout, p.URI())
		fmt.Fprintf(st.Stderr, "Recording the commands sent to %s through %s into %s; point the application at the connection string above. Ctrl-C stops.\n",
			addr, p.Addr(), f.out)

		st.setStep("recording into %s", f.out)
		waitRecording(st, p, f.lifetime)
		st.setStep("writing %s", f.out)

		err = p.Close()
		stats = p.Stats()

		return err
	})
	if werr != nil {
		var ee *exitError
		if errors.As(werr, &ee) {
			return ee
		}

		return failed("%v", werr)
	}

	fmt.Fprintf(st.Stderr, "recorded %d commands on %d connections; turn it into a workload with: mongobench capture %s -o workload.yaml\n",
		stats.Commands, stats.Connections, f.out)

	for _, w := range recordWarnings(stats) {
		fmt.Fprintln(st.Stderr, "Warning: "+w)
	}

	return nil
}

// waitRecording waits for a signal or the end of --for, showing the counts
// on a terminal.
func waitRecording(st *State, p *wireproxy.Proxy, lifetime time.Duration) {
	var timeout <-chan time.Time
	if lifetime > 0 {
		timeout = time.After(lifetime)
	}

	var tick <-chan time.Time

	live := st.StderrIsTerminal && st.Getenv("CI") == ""
	if live {
		t := time.NewTicker(time.Second)
		defer t.Stop()

		tick = t.C
	}

	for {
		select {
		case <-st.Signals:
		case <-timeout:
		case <-tick:
			s := p.Stats()
			fmt.Fprintf(st.Stderr, "\rrecording: %d commands on %d connections ", s.Commands, s.Connections)

			continue
		}

		if live {
			fmt.Fprintln(st.Stderr)
		}

		return
	}
}

// recordWarnings says what the recording may lack.
func recordWarnings(s wireproxy.Stats) []string {
	var out []string

	if s.Compressed > 0 {
		out = append(out, fmt.Sprintf("%d compressed messages passed through unread (the client compressed without negotiating); their commands are not in the recording", s.Compressed))
	}

	if s.Unreadable > 0 {
		out = append(out, fmt.Sprintf("%d messages could not be read and passed through unrecorded", s.Unreadable))
	}

	if s.Unanswered > 0 {
		out = append(out, fmt.Sprintf("%d requests had no reply when their connection closed, and are not in the recording", s.Unanswered))
	}

	if s.DialErrors > 0 {
		out = append(out, fmt.Sprintf("%d connections were refused because the upstream server could not be reached", s.DialErrors))
	}

	return out
}

// captureFromTheWire is `capture --upstream URI`: record through the proxy
// until Ctrl-C or --for, keep the recording beside the workload, then
// capture it as a log. The recording is kept rather than made temporary so
// that the same traffic can be captured again with other options.
func captureFromTheWire(ctx context.Context, st *State, f *captureFlags, changed func(string) bool) error {
	if strings.TrimSpace(f.out) == "" || f.out == stdoutPath {
		return badInput("capture --upstream needs -o WORKLOAD.yaml: the recording is kept beside it")
	}

	rec := f.record
	if rec.out == "" {
		rec.out = strings.TrimSuffix(strings.TrimSuffix(f.out, ".yaml"), ".yml") + ".recording.log"
	}

	if err := runRecord(st, &rec); err != nil {
		return err
	}

	return runCapture(ctx, st, []string{rec.out}, f, changed)
}
