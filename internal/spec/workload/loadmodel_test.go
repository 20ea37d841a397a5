package workload

import (
	"slices"
	"testing"
)

// TestLoadModelChosen checks that each way of writing a phase chooses its
// model from the registry, and that what the rest of the tool asks of the
// model (open loop, workers, stages, sharding, external clients) follows.
func TestLoadModelChosen(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name  string
		phase Phase
		want  string
	}{
		{"plain", Phase{Concurrency: 4}, ModelClosed},
		{"rate", Phase{Rate: 100}, ModelRate},
		{"rate stages", Phase{Stages: []Stage{{Rate: 10}}}, ModelRampingRate},
		{"concurrency stages", Phase{Stages: []Stage{{Concurrency: 8}}}, ModelRampingConcurrency},
		{"blocks", Phase{Blocks: &Blocks{}, Rate: 100}, ModelBlocks},
		{"replay", Phase{Replay: &Replay{}, Rate: 100}, ModelReplay},
	}

	seen := map[string]bool{}

	for _, tt := range tests {
		m := tt.phase.LoadModel()
		if m.Name != tt.want || tt.phase.Model() != tt.want {
			t.Errorf("%s: model %s, want %s", tt.name, m.Name, tt.want)
		}

		if tt.phase.OpenLoop() != m.OpenLoop {
			t.Errorf("%s: OpenLoop() disagrees with the registry", tt.name)
		}

		seen[m.Name] = true
	}

	for _, m := range loadModels() {
		name := m.Name
		if !seen[name] {
			t.Errorf("model %s is chosen by no phase of this test; add one", name)
		}

		if m.Description == "" {
			t.Errorf("model %s has no description", name)
		}

		if m.OpenLoop && (m.Workers || m.External || m.RampsConcurrency) {
			t.Errorf("%s: an open loop has no fixed workers", name)
		}
	}

	if got := LoadModelNames(); !slices.Contains(got, ModelClosed) || got[len(got)-1] != ModelClosed {
		t.Errorf("names %v: the closed loop, which takes any phase, must come last", got)
	}
}
