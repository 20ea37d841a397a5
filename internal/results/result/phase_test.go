package result

import "testing"

// TestPhaseIsLoad: a phase loads data when its model says so, or, in
// files older than the model field, when its name does ("load", or
// "load:STEP" for one of several load steps); a workload phase whose name
// merely starts with the letters "load" is measured.
func TestPhaseIsLoad(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name, model string
		want        bool
	}{
		{"load:items", PhaseLoad, true},
		{"load:items", "", true},
		{PhaseLoad, "", true},
		{"bulk", PhaseLoad, true},
		{PhaseRun, "closed", false},
		{"loader", "closed", false},
		{"warm", "", false},
	} {
		p := Phase{Name: tc.name, Model: tc.model}
		if got := p.IsLoad(); got != tc.want {
			t.Errorf("Phase{Name: %q, Model: %q}.IsLoad() = %v, want %v", tc.name, tc.model, got, tc.want)
		}
	}
}

// TestMainPhaseSkipsOldLoadPhase: in a file without phase models, a load
// phase named "load" after the measured one is not the main phase.
func TestMainPhaseSkipsOldLoadPhase(t *testing.T) {
	t.Parallel()

	r := &Result{Phases: []Phase{{Name: "warm", Excluded: true}, {Name: "measure"}, {Name: PhaseLoad}}}
	if got := r.MainPhase(); got == nil || got.Name != "measure" {
		t.Errorf("MainPhase = %+v, want the phase named measure", got)
	}
}
