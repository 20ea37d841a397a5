package workload

import (
	"strings"
	"testing"
	"time"
)

// TestServerSelectionTimeout checks run.server_selection_timeout: a few
// seconds by default, settable, and refused when not positive.
func TestServerSelectionTimeout(t *testing.T) {
	const base = "name: s\ndatabase: s\nrun:\n  duration: 1s\n%s\noperations:\n  - {name: p, op: runCommand, command: {ping: 1}}\n"

	parse := func(extra string) (*Spec, []error) {
		return Parse("s.yaml", []byte(strings.Replace(base, "%s", extra, 1)))
	}

	s, errs := parse("")
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	if got := s.Run.ServerSelectionTimeout.D(); got != 5*time.Second {
		t.Errorf("default %s, want 5s", got)
	}

	s, errs = parse("  server_selection_timeout: 2s")
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	if got := s.Run.ServerSelectionTimeout.D(); got != 2*time.Second {
		t.Errorf("set to 2s, got %s", got)
	}

	_, errs = parse("  server_selection_timeout: 0s")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "run.server_selection_timeout: must be > 0") {
		t.Errorf("errors %v, want one naming run.server_selection_timeout", errs)
	}
}
