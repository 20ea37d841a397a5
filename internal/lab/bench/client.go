package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/results/result"
)

// clientCloseBound is how long an adapter has to write its profile and exit
// after the trial before it is killed.
const clientCloseBound = 10 * time.Second

// trialClient is a trial's external client stack, started before its load
// and ended after its last phase.
type trialClient struct {
	adapter *client.Adapter
	profile string
	unhook  func()
}

// startClient starts the adapter of the trial's external client stack (the
// workload's run.client), after the database is ready: it connects to the
// target as the application would, and mongobench's own client keeps
// loading the data. It prints the stack and its versions with the server's
// description, since they say what the numbers describe.
func (r *run) startClient(ctx context.Context, tgt *openedTarget, w *Compiled) (*trialClient, error) {
	name := w.Spec.Run.Client

	s, ok := client.Lookup(name)
	if !ok {
		return nil, badInput("unknown client %q", name) // Check refused it already
	}

	if r.opts.Clients == nil {
		return nil, failed("client %s: this build cannot run external client stacks", name)
	}

	cmd, err := r.opts.Clients.Command(ctx, s)
	if client.IsNotInstalled(err) {
		return nil, badInput("%v", err)
	}

	if err != nil {
		return nil, failed("%v", err)
	}

	profile := ""
	if r.opts.ClientProfile != "" {
		profile = r.opts.ClientProfile
		if n := r.clientTrials.Add(1); r.plan.Matrix() {
			profile = fmt.Sprintf("%s-%d", profile, n)
		}
	}

	r.msg.Step("starting the %s adapter", name)

	a, err := client.Start(ctx, client.Config{
		Stack: s, Command: cmd, URI: tgt.uri, Database: w.Spec.Database, Spec: w.Spec, Ops: w.Ops,
		Profile: profile, LogDir: client.DefaultLogDir(r.opts.Clients.Cache),
	})
	if err != nil {
		var fe *client.FatalError
		if errors.As(err, &fe) {
			return nil, failed("%s", fe.Error())
		}

		return nil, failed("%v", err)
	}

	r.msg.Printf("Client: %s; %s\n", s, versionList(a.Versions))

	return &trialClient{adapter: a, profile: profile, unhook: r.hooks.OnHardExit(a.Kill)}, nil
}

// versionList formats the adapter's versions in a stable order.
func versionList(v map[string]string) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}

	slices.Sort(keys)

	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+" "+v[k])
	}

	if len(parts) == 0 {
		return "no versions reported"
	}

	return strings.Join(parts, ", ")
}

// finish ends the adapter (it writes its profile first) and returns what
// the results record of it: stack, versions, starved waits, profile.
func (c *trialClient) finish(starved int64) *result.Client {
	c.adapter.Close(clientCloseBound)
	c.unhook()

	out := &result.Client{Stack: c.adapter.Stack().Name, Versions: c.adapter.Versions, Starved: starved}

	if c.profile != "" {
		out.Profile = &result.ClientProfile{Prefix: c.profile}

		if data, err := os.ReadFile(c.profile + ".top.json"); err == nil {
			var top struct {
				Frames []result.ProfileFrame `json:"frames"`
			}

			if json.Unmarshal(data, &top) == nil {
				out.Profile.Frames = top.Frames
			}
		}
	}

	return out
}
