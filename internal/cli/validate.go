package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/base/units"
	"github.com/mongobench/mongobench/internal/lab/bench"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// slowValidateSize is the workload file size from which validate says that
// it is working: parsing and compiling take about a second per MiB.
const slowValidateSize = 1 << 20

func newValidateCommand(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "validate WORKLOAD.yaml...",
		Short: "Check workload files without touching any server",
		Long: `validate parses each workload file strictly, checks its fields and compiles its
document templates, and prints every problem as file:line:column: field: message.
It exits with code 2 if any file has a problem.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			ctx, stop := interruptContext(st)
			defer stop()

			bad := 0

			for _, path := range args {
				st.setStep("validating %s", path)

				// A large file takes seconds to parse and compile: say so,
				// so that the wait is not silent.
				if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() >= slowValidateSize {
					fmt.Fprintf(st.Stderr, "Validating %s (%s)...\n", path, units.Bytes(fi.Size()))
				}

				if _, errs := readWorkload(ctx, path, nil); len(errs) > 0 {
					if ctx.Err() != nil {
						return failed("interrupted while reading %s", path)
					}

					bad++

					for _, err := range errs {
						fmt.Fprintln(st.Stderr, redact.Text(err.Error()))
					}

					continue
				}

				fmt.Fprintf(st.Stdout, "%s: ok\n", path)
			}

			if bad > 0 {
				return &exitError{code: ExitBadInput, msg: fmt.Sprintf("%d of %d workload files have problems", bad, len(args))}
			}

			return nil
		},
	}
}

// readWorkload reads, validates and compiles a workload file under a
// context, which an interrupt cancels: reading a named pipe then stops at
// once. seed, when not nil, overrides the file's seed; set are --set
// parameter values.
//
// Parsing and compiling a large file takes seconds and does not look at
// ctx, so it runs on a goroutine of its own and an interrupt returns at
// once (with ctx's error); the goroutine's work is then abandoned, and the
// command exits.
func readWorkload(ctx context.Context, path string, seed *int64, set ...string) (*bench.Compiled, []error) {
	type compiled struct {
		c    *bench.Compiled
		errs []error
	}

	ch := make(chan compiled, 1)

	go func() {
		c, errs := compileWorkload(ctx, path, seed, set)
		ch <- compiled{c, errs}
	}()

	select {
	case r := <-ch:
		return r.c, r.errs
	case <-ctx.Done():
		return nil, []error{fmt.Errorf("%s: reading stopped: %w", path, context.Cause(ctx))}
	}
}

// loadWorkload is readWorkload for a command that runs the workload: an
// interrupt while reading fails the command (exit 1), and problems are
// printed, one line each with secrets masked, and refuse it as bad input.
func loadWorkload(ctx context.Context, st *State, path string, seed *int64, set ...string) (*bench.Compiled, error) {
	w, errs := readWorkload(ctx, path, seed, set...)
	if ctx.Err() != nil {
		return nil, failed("interrupted while reading %s", path)
	}

	if len(errs) > 0 {
		for _, err := range errs {
			fmt.Fprintln(st.Stderr, redact.Text(err.Error()))
		}

		return nil, &exitError{code: ExitBadInput, msg: path + ": invalid workload"}
	}

	return w, nil
}

// compileWorkload is readWorkload's work: read, parse, validate, compile.
func compileWorkload(ctx context.Context, path string, seed *int64, set []string) (*bench.Compiled, []error) {
	spec, errs := workload.ReadWith(ctx, path, set)
	if len(errs) > 0 {
		return nil, errs
	}

	if seed != nil {
		spec.Seed = *seed
	}

	return bench.Compile(spec)
}
