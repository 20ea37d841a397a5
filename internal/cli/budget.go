package cli

import (
	"errors"
	"fmt"

	"github.com/mongobench/mongobench/internal/spec/workload"
)

// checkBudget re-checks the workload's memory caps once the command line's
// overrides are applied: --concurrency can multiply the workers of every
// phase past what the file was validated with.
func checkBudget(s *workload.Spec, f *runFlags) error {
	errs := s.CheckBudget()
	if len(errs) == 0 {
		return nil
	}

	return &exitError{code: ExitBadInput, msg: fmt.Sprintf("with --concurrency %d: %v", f.concurrency, errors.Join(errs...))}
}
