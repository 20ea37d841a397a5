package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mongobench/mongobench/clients"
	"github.com/mongobench/mongobench/internal/engine/client"
)

// newClientsCommand is `mongobench clients`: the client stacks, their
// runtimes and install state, and `clients install`.
func newClientsCommand(st *State) *cobra.Command {
	c := &cobra.Command{
		Use:   "clients",
		Short: "List the client stacks a workload can run through, and their install state",
		Long: `clients lists the client stacks that run.client, a variant's run.client or
--client can name: go (mongobench's own engine, always ready) and the external
stacks, whose adapters run the workload's operations through the Node.js driver,
Mongoose, PyMongo or MongoEngine so that the latency includes what the
application pays (model instances, casting, hydration). For each it shows the
runtime's version and whether its adapter is installed: ready, not installed
(run mongobench clients install STACK) or runtime missing.

Adapters are installed into the user's cache ($XDG_CACHE_HOME/mongobench/clients,
else the system's user cache directory), never into the system. See
docs/clients.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listClients(cmd.Context(), st)
		},
	}

	c.AddCommand(&cobra.Command{
		Use:   "install [STACK...]",
		Short: "Install the adapters of client stacks (all when none is named)",
		Long: `install extracts the adapters embedded in mongobench into the user's cache, in a
directory named by their content's hash, and installs their pinned dependencies
there: npm ci --omit=dev for Node.js stacks, a virtual environment and
pip install -r requirements.txt for Python stacks. The commands' output is shown.
Network access to the npm and PyPI registries is needed. Installing is done once
per mongobench version; an installed family is left as it is.`,
		Example: `  mongobench clients install
  mongobench clients install node-mongoose python-pymongo`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return installClients(cmd.Context(), st, args)
		},
	})

	return c
}

// newInstaller returns the installer of the embedded adapters.
func newInstaller(st *State) (*client.Installer, error) {
	cache, err := client.CacheDir(st.Getenv)
	if err != nil {
		return nil, failed("%v", err)
	}

	return &client.Installer{Sources: clients.Sources(), Cache: cache, Output: st.Stderr}, nil
}

// listClients prints the stacks' table.
func listClients(ctx context.Context, st *State) error {
	in, err := newInstaller(st)
	if err != nil {
		return err
	}

	if ctx == nil {
		ctx = context.Background()
	}

	tw := tabwriter.NewWriter(st.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STACK\tRUNTIME\tSTATE\tWHAT")
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", client.Go, "built in", "ready", "mongobench's own engine (Go driver); the default")

	for _, s := range client.Stacks() {
		state, err := in.State(ctx, s.Family)
		if err != nil {
			return failed("%v", err)
		}

		runtime := state.Runtime
		if runtime == "" {
			runtime = s.Family.Runtime + " not found"
		}

		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, runtime, state.Status(), s.Describe)
	}

	if err := tw.Flush(); err != nil {
		return failed("%v", err)
	}

	fmt.Fprintf(st.Stdout, "\nAdapters are installed under %s (mongobench clients install STACK).\n", in.Cache)

	return nil
}

// installClients installs the families of the named stacks.
func installClients(ctx context.Context, st *State, names []string) error {
	fams, err := client.FamiliesOf(names)
	if err != nil {
		return badInput("%v", err)
	}

	in, err := newInstaller(st)
	if err != nil {
		return err
	}

	if ctx == nil {
		ctx = context.Background()
	}

	for _, f := range fams {
		st.setStep("installing the %s adapter", f.Name)

		if err := in.Install(ctx, f); err != nil {
			return failed("%v", err)
		}
	}

	return nil
}

// addClientFlags adds run's client flags.
func addClientFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&f.client, "client", "",
		"the client stack that runs the measured phases, overriding run.client: "+strings.Join(client.Names(), ", ")+
			" (see mongobench clients)")
	fl.StringVar(&f.clientProfile, "client-profile", "",
		"with an external --client, have its adapter write a CPU profile with this path prefix (PREFIX.cpuprofile or "+
			"PREFIX.pstats, and PREFIX.top.json, whose top frames the results and the report show); "+
			"without a value, next to the results file (results/NAME-TIME.client)")
	fl.Lookup("client-profile").NoOptDefVal = autoProfile
}

// autoProfile is --client-profile without a value: the prefix is the
// results file's path without its extension, plus ".client".
const autoProfile = "auto"

// checkClientFlags rejects an unknown --client and an empty
// --client-profile before anything starts.
func checkClientFlags(changed func(string) bool, f *runFlags) error {
	if changed("client") {
		if err := client.CheckName(f.client); err != nil || f.client == "" {
			return badInput("--client: unknown client %q (known: %s)", f.client, strings.Join(client.Names(), ", "))
		}
	}

	if changed("client-profile") && strings.TrimSpace(f.clientProfile) == "" {
		return badInput("--client-profile is empty: give a path prefix, or no value for one next to the results file")
	}

	return nil
}

// profilePrefix resolves --client-profile to an absolute path prefix: the
// value given, or next to the results file (--out, else the default
// results/NAME-TIME.json, whose time is the run's start and so may differ
// from this one by the set-up's seconds).
func profilePrefix(st *State, name string, f *runFlags) (string, error) {
	p := f.clientProfile
	if p == autoProfile {
		out := f.out
		if out == "" || out == stdoutPath {
			out = resultsPath("", name, st.Now())
		}

		p = strings.TrimSuffix(out, filepath.Ext(out)) + ".client"
	}

	abs, err := filepath.Abs(p)
	if err != nil {
		return "", badInput("--client-profile: %v", err)
	}

	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return "", failed("--client-profile: %v", err)
	}

	return abs, nil
}
