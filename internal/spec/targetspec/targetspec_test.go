package targetspec

import (
	"testing"
)

// TestTargetHasNoBinary checks that the conversion to a launchable target
// never carries a binary from the workload, and keeps the other options.
func TestTargetHasNoBinary(t *testing.T) {
	t.Parallel()

	spec := Spec{Kind: "k", Mongod: &Mongod{Binary: "/tmp/evil", ReplicaSet: 1, Args: []string{"--quiet"}}}.Target()
	if spec.Mongod == nil || spec.Mongod.Binary != "" || spec.Mongod.ReplicaSet != 1 || len(spec.Mongod.Args) != 1 {
		t.Errorf("Target() = %+v, want the options without the binary", spec.Mongod)
	}
}

// TestLabel checks the label derived from the fields a kind's validation
// let through, without naming any kind: the name wins, a connection
// string is shown with its password masked, settings are sorted.
func TestLabel(t *testing.T) {
	t.Parallel()

	off := false
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{Name: "n", Kind: "k", Settings: map[string]string{"a": "1"}}, "n"},
		{Spec{Kind: "k"}, "k"},
		{Spec{Kind: "k", URI: "mongodb://u:secret@h/"}, "k:mongodb://u:xxxxx@h/"},
		{Spec{Kind: "k", Settings: map[string]string{"b": "2", "a": "1"}}, "k:a=1,b=2"},
		{Spec{Kind: "k", Mongod: &Mongod{Journal: &off, CacheSizeGB: 0.5, ReplicaSet: 3, Args: []string{"--quiet"}}}, "k:journal=false,cache_size_gb=0.5,replica_set=3,arg=--quiet"},
	}

	for _, tt := range tests {
		if got := tt.spec.Label(); got != tt.want {
			t.Errorf("Label(%+v) = %q, want %q", tt.spec, got, tt.want)
		}
	}
}
