package targetspec

import (
	"errors"
	"fmt"
	"slices"
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

// TestMongodSettings checks the --target syntax of every mongod option, in
// its fixed order, and that the defaults write nothing.
func TestMongodSettings(t *testing.T) {
	t.Parallel()

	on, off := true, false
	tests := []struct {
		name string
		m    Mongod
		want []string
	}{
		{"defaults", Mongod{}, nil},
		{"journal on is written", Mongod{Journal: &on}, []string{"journal=true"}},
		{"journal off", Mongod{Journal: &off}, []string{"journal=false"}},
		{"no cache size below zero", Mongod{CacheSizeGB: -1}, nil},
		{"cache size", Mongod{CacheSizeGB: 0.25}, []string{"cache_size_gb=0.25"}},
		{"whole cache size", Mongod{CacheSizeGB: 2}, []string{"cache_size_gb=2"}},
		{
			"all, in order",
			Mongod{Args: []string{"--quiet", "--nounixsocket"}, Binary: "/opt/mongod", ReplicaSet: 3, CacheSizeGB: 1.5, Journal: &off, StorageEngine: "inMemory"},
			[]string{"storage_engine=inMemory", "journal=false", "cache_size_gb=1.5", "replica_set=3", "binary=/opt/mongod", "arg=--quiet", "arg=--nounixsocket"},
		},
	}

	for _, tt := range tests {
		if got := tt.m.Settings(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Settings() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestFormatGB checks sizes as mongod's --wiredTigerCacheSizeGB takes
// them: no exponent, no trailing zeros.
func TestFormatGB(t *testing.T) {
	t.Parallel()

	for in, want := range map[float64]string{0.25: "0.25", 1: "1", 10000: "10000", 0.1: "0.1", 1e-3: "0.001"} {
		if got := FormatGB(in); got != want {
			t.Errorf("FormatGB(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestClone checks that a clone shares no map, slice or pointer with its
// original: changing the caller's spec after a launch must not change the
// launched target's.
func TestClone(t *testing.T) {
	t.Parallel()

	journal := true
	orig := Spec{
		Name: "n", Kind: "k", URI: "mongodb://h/",
		Settings: map[string]string{"fsync": "off"},
		Mongod:   &Mongod{Journal: &journal, Args: []string{"--quiet"}, ReplicaSet: 1},
	}

	c := orig.Clone()

	orig.Settings["fsync"] = "on"
	orig.Mongod.Args[0] = "--verbose"
	*orig.Mongod.Journal = false
	orig.Mongod.ReplicaSet = 5

	if c.Settings["fsync"] != "off" || c.Mongod.Args[0] != "--quiet" || !*c.Mongod.Journal || c.Mongod.ReplicaSet != 1 {
		t.Errorf("the clone changed with its original: %+v, mongod %+v", c, *c.Mongod)
	}

	if c.Name != "n" || c.Kind != "k" || c.URI != "mongodb://h/" {
		t.Errorf("the clone lost fields: %+v", c)
	}

	// A spec without maps, slices or mongod clones to the same.
	if plain := (Spec{Kind: "k"}).Clone(); plain.Settings != nil || plain.Mongod != nil {
		t.Errorf("plain clone %+v", plain)
	}
}

// TestTargetKeepsEveryOption checks that Target keeps every field but the
// binary, and leaves a spec without mongod options without them.
func TestTargetKeepsEveryOption(t *testing.T) {
	t.Parallel()

	off := false
	in := Spec{
		Name: "n", Kind: "k", URI: "mongodb://h/", Settings: map[string]string{"a": "1"},
		Mongod: &Mongod{Binary: "b", StorageEngine: "inMemory", Journal: &off, CacheSizeGB: 0.5, ReplicaSet: 3, Args: []string{"--quiet"}},
	}

	out := in.Target()
	want := *in.Mongod
	want.Binary = ""

	if out.Name != "n" || out.Kind != "k" || out.URI != in.URI || out.Settings["a"] != "1" ||
		!slices.Equal(out.Mongod.Settings(), want.Settings()) {
		t.Errorf("Target() = %+v, mongod %+v; want %+v", out, *out.Mongod, want)
	}

	if in.Mongod.Binary != "b" {
		t.Error("Target changed its receiver's binary")
	}

	if (Spec{Kind: "k"}).Target().Mongod != nil {
		t.Error("Target invented mongod options")
	}
}

// TestFieldError checks that a field error reads as its cause and unwraps
// to it, so that errors.Is sees through it.
func TestFieldError(t *testing.T) {
	t.Parallel()

	cause := errors.New("bad value")

	var err error = &FieldError{Field: "settings.fsync", Err: cause}
	if err.Error() != "bad value" || !errors.Is(err, cause) {
		t.Errorf("FieldError = %q, Is(cause) = %v", err, errors.Is(err, cause))
	}

	var fe *FieldError
	if wrapped := fmt.Errorf("target 1: %w", err); !errors.As(wrapped, &fe) || fe.Field != "settings.fsync" {
		t.Errorf("As through a wrap: %+v", fe)
	}
}
