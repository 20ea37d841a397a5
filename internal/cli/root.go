package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/base/redact"
)

// Exit codes, as documented in the README.
const (
	// ExitOK means success.
	ExitOK = 0

	// ExitFailed means the run failed, was interrupted or aborted, or had
	// more errors than the workload allows.
	ExitFailed = 1

	// ExitBadInput means bad usage, workload file or URI.
	ExitBadInput = 2

	// ExitThresholds means the run completed but at least one of the
	// workload's thresholds failed. It is 99, as in k6, so that CI tells a
	// performance regression from a broken run; a run that failed (1) or
	// bad input (2) takes precedence.
	ExitThresholds = 99

	// ExitForced is used when a second interrupt, or a stop longer than
	// its bound, ends the process at once.
	ExitForced = 130
)

// exitError carries an exit code through cobra's error return. Its message
// has already been printed when msg is empty.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// badInput returns an error that exits with code 2 after printing msg.
func badInput(format string, args ...any) error {
	return &exitError{code: ExitBadInput, msg: fmt.Sprintf(format, args...)}
}

// failed returns an error that exits with code 1 after printing msg.
func failed(format string, args ...any) error {
	return &exitError{code: ExitFailed, msg: fmt.Sprintf(format, args...)}
}

// Main runs the command line in st and returns the process exit code.
func Main(st *State) int {
	defer func() {
		if st.StopSignals != nil {
			st.StopSignals()
		}
	}()

	st.maskStreams()

	root := newRootCommand(st)
	root.SetArgs(st.Args)

	err := root.Execute()
	if err == nil {
		return ExitOK
	}

	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			// A last line of defence: messages are scrubbed where they
			// are made, but any connection string left in one is masked.
			fmt.Fprintln(st.Stderr, "Error:", redact.Text(ee.msg))
		}

		return ee.code
	}

	// Anything else comes from cobra itself: unknown command or flag.
	fmt.Fprintln(st.Stderr, "Error:", redact.Text(err.Error()))
	fmt.Fprintln(st.Stderr, "Run 'mongobench --help' for usage.")

	return ExitBadInput
}

func newRootCommand(st *State) *cobra.Command {
	root := &cobra.Command{
		Use:   "mongobench",
		Short: "A performance lab for MongoDB and servers that speak its wire protocol",
		Long: `mongobench runs declarative workload files against MongoDB-compatible servers
(MongoDB, FerretDB, DocumentDB, Cosmos DB for MongoDB) and reports latency
percentiles from HdrHistograms, throughput and errors by kind.

Without --uri it starts an embedded FerretDB (SQLite backend) so that a first
result needs no server; numbers from it describe FerretDB on SQLite, not MongoDB.

Exit codes: 0 success; 1 run failed, was interrupted, or had more errors than
the workload allows; 2 bad input (usage, workload file, URI); 99 the run
completed but a workload threshold failed; 3 history --fail-on-regression
found a regression; 130 a second signal ended the
process at once. SIGINT (Ctrl-C), SIGTERM and SIGHUP stop any
command gracefully.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       Version(),
	}

	root.SetOut(st.Stdout)
	root.SetErr(st.Stderr)
	root.SetVersionTemplate(currentBuild().String())
	root.SetFlagErrorFunc(flagError)

	root.AddCommand(
		newRunCommand(st),
		newValidateCommand(st),
		newVersionCommand(st),
		newTestServerCommand(st),
		newServeCommand(st),
		newReportCommand(st),
		newCompareCommand(st),
		newClientsCommand(st),
		newMergeCommand(st),
		newKubeCommand(st),
		newFinishCommand(st),
		newCalibrateCommand(st),
		newHistoryCommand(st),
		newCaptureCommand(st),
		newCapacityCommand(st),
		newRecordCommand(st),
	)

	return root
}

// Version is mongobench's version as results files record it: the module
// version when built from a tagged module, "devel" plus the VCS revision (and
// "-dirty") when known.
func Version() string { return currentBuild().Short() }
