package cli

import (
	"fmt"
	"io"

	"github.com/mongobench/mongobench/internal/analysis"
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

// thresholdsVerdict is the exit of a run that otherwise succeeded: code 99
// when a threshold failed.
func thresholdsVerdict(outcomes []result.ThresholdOutcome) error {
	n := analysis.ThresholdsFailed(outcomes)
	if n == 0 {
		return nil
	}

	return &exitError{code: ExitThresholds, msg: fmt.Sprintf("%d of %d thresholds failed", n, len(outcomes))}
}

// warnMatrixThresholds says that a comparison run does not gate on
// thresholds: its trials are short and its question is the comparison.
func warnMatrixThresholds(st *State, spec *workload.Spec) {
	if len(spec.Thresholds.Rules) > 0 {
		fmt.Fprintln(st.Stderr, "Note: thresholds are checked on single runs; this comparison run does not check them")
	}
}
