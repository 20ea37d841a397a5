package workload

import (
	"strings"
	"testing"
)

// TestTrialRounds checks where the number of trial rounds comes from: the
// --rounds flag, else run.rounds, else trials.rounds, else the default of
// a comparison, or one round for a single run.
func TestTrialRounds(t *testing.T) {
	t.Parallel()

	withRounds := func(run, trials string) *Spec {
		t.Helper()

		text := strings.Replace(base, "  duration: 1s\n", "  duration: 1s\n"+run, 1) + trials

		s, errs := Parse("w.yaml", []byte(text))
		if len(errs) > 0 {
			t.Fatal(errs)
		}

		return s
	}

	tests := []struct {
		name        string
		run, trials string
		override    int
		comparison  bool
		want        int
	}{
		{"run.rounds wins over trials.rounds", "  rounds: 7\n", "trials:\n  rounds: 9\n", 0, true, 7},
		{"--rounds wins over the workload", "  rounds: 7\n", "trials:\n  rounds: 9\n", 4, true, 4},
		{"trials.rounds alone", "", "trials:\n  rounds: 9\n", 0, false, 9},
		{"a comparison's default", "", "", 0, true, DefaultRounds},
		{"a single run", "", "", 0, false, 1},
	}

	for _, tt := range tests {
		if got := withRounds(tt.run, tt.trials).TrialRounds(tt.override, tt.comparison); got != tt.want {
			t.Errorf("%s: %d rounds, want %d", tt.name, got, tt.want)
		}
	}
}

// TestRoundsRange checks that run.rounds and trials.rounds out of range are
// refused at their line and column.
func TestRoundsRange(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"run.rounds 0", strings.Replace(base, "  duration: 1s\n", "  duration: 1s\n  rounds: 0\n", 1), "w.yaml:9:11: run.rounds: must be between 1 and 1000"},
		{"trials.rounds 0", base + "trials:\n  rounds: 0\n", "w.yaml:15:11: trials.rounds: must be between 1 and 1000"},
		{"run.rounds 1001", strings.Replace(base, "  duration: 1s\n", "  duration: 1s\n  rounds: 1001\n", 1), "w.yaml:9:11: run.rounds: must be between 1 and 1000"},
	}

	for _, tt := range tests {
		_, errs := Parse("w.yaml", []byte(tt.yaml))
		if len(errs) != 1 || errs[0].Error() != tt.want {
			t.Errorf("%s: %v, want %q", tt.name, errs, tt.want)
		}
	}
}
