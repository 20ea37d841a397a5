package plan

import (
	"context"
	"errors"

	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/lab/bench"
)

// clientInstaller returns the installer when a variant runs an external
// stack, after checking every variant against its stack (an override
// changes what the workload file said) and that the stacks are installed,
// so that a missing one is refused now, not after the server started and
// the data was loaded; nil when every variant runs on go.
func clientInstaller(ctx context.Context, r *Request, variants []*bench.Compiled) (*client.Installer, error) {
	external := false

	for _, v := range variants {
		if errs := client.Check(v.Spec); len(errs) > 0 {
			return nil, &InputError{Msg: "the workload cannot run with client " + v.Spec.Run.Client, Details: errs}
		}

		external = external || client.External(v.Spec.Run.Client)
	}

	if r.ClientProfile && !external {
		return nil, badInput("--client-profile profiles an external client's adapter; this run uses client go (use MONGOBENCH_CPUPROFILE for mongobench itself)")
	}

	if !external {
		return nil, nil
	}

	if r.Installer == nil {
		return nil, badInput("this run uses client %s, and no client stack can be installed here", variants[0].Spec.Run.Client)
	}

	in, err := r.Installer()
	if err != nil {
		return nil, err
	}

	for _, v := range variants {
		s, ok := client.Lookup(v.Spec.Run.Client)
		if !ok {
			continue
		}

		if _, err := in.Command(ctx, s); err != nil {
			var ni *client.NotInstalledError
			if errors.As(err, &ni) {
				return nil, badInput("%v", err)
			}

			return nil, err
		}
	}

	return in, nil
}
