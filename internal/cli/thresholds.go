package cli

import (
	"fmt"
	"io"

	"github.com/mongobench/mongobench/internal/analysis/finish"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// printThresholds prints one pass/fail line per threshold, with the
// measured value, after the summary table and on its stream.
func printThresholds(w io.Writer, outcomes []result.ThresholdOutcome) {
	if len(outcomes) == 0 {
		return
	}

	fmt.Fprintln(w, "\nThresholds:")

	for _, o := range outcomes {
		fmt.Fprintln(w, "  "+o.Text)
	}
}

// finishedExit is the one place where how a finished result ends
// (finish.Finish) becomes the exit code, for run, finish and merge alike:
// 0 for OK, ExitFailed for a run that failed, ExitThresholds when a
// threshold failed. The outcome's notes go to standard error first.
func finishedExit(st *State, o finish.Outcome) error {
	for _, n := range o.Notes {
		fmt.Fprintln(st.Stderr, n)
	}

	switch o.Status {
	case finish.OK:
		return nil
	case finish.ThresholdsFailed:
		return &exitError{code: ExitThresholds, msg: o.Reason}
	default:
		return failed("%s", o.Reason)
	}
}

// warnMatrixThresholds says that a comparison run does not gate on
// thresholds: its trials are short and its question is the comparison.
func warnMatrixThresholds(st *State, spec *workload.Spec) {
	if len(spec.Thresholds.Rules) > 0 {
		fmt.Fprintln(st.Stderr, "Note: thresholds are checked on single runs; this comparison run does not check them")
	}
}
