package targets

import (
	"errors"
	"testing"
)

// TestKindRegistry checks that every registered kind is complete and that
// lookups, names and the message list agree with the registry.
func TestKindRegistry(t *testing.T) {
	seen := map[string]bool{}

	for _, k := range Kinds() {
		if k.Name == "" || k.Description == "" || k.validate == nil || k.launch == nil {
			t.Errorf("kind %+v is incomplete (name, description, validate and launch are required)", k.Name)
		}

		if seen[k.Name] {
			t.Errorf("kind %q is registered twice", k.Name)
		}

		seen[k.Name] = true

		got, ok := LookupKind(k.Name)
		if !ok || got.Name != k.Name {
			t.Errorf("LookupKind(%q) = %q, %v", k.Name, got.Name, ok)
		}
	}

	want := []string{KindEmbedded, KindEmbeddedMemory, KindFerretDBPostgres, KindMongod, KindURI}
	if got := KindNames(); len(got) != len(want) {
		t.Fatalf("KindNames() = %v, want %v", got, want)
	} else {
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("KindNames()[%d] = %q, want %q", i, got[i], want[i])
			}
		}
	}

	if got, want := KindList(), "embedded, embedded-memory, ferretdb-postgres, mongod or uri"; got != want {
		t.Errorf("KindList() = %q, want %q", got, want)
	}

	if _, ok := LookupKind("sqlite"); ok {
		t.Error(`LookupKind("sqlite") found a kind`)
	}

	if k, _ := LookupKind(KindURI); k.Launched {
		t.Error("uri targets are not launched")
	}
}

// TestValidateFieldError checks that Validate names the offending field,
// which workload validation turns into a file:line position.
func TestValidateFieldError(t *testing.T) {
	tests := []struct {
		spec  TargetSpec
		field string
	}{
		{TargetSpec{Kind: "sqlite"}, "kind"},
		{TargetSpec{Kind: KindEmbedded, URI: "mongodb://h/"}, "uri"},
		{TargetSpec{Kind: KindURI, URI: "http://h/"}, "uri"},
		{TargetSpec{Kind: KindEmbeddedMemory, Settings: map[string]string{"fsync": "off"}}, "settings"},
		{TargetSpec{Kind: KindFerretDBPostgres, Settings: map[string]string{"fsync": "off", "archive_command": "x"}}, "settings.archive_command"},
		{TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{Args: []string{"--quiet", "--logpath=/tmp/x"}}}, "mongod.args[1]"},
		{TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{ReplicaSet: -1}}, "mongod.replica_set"},
	}

	for _, tt := range tests {
		err := Validate(tt.spec)

		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("Validate(%+v) = %v, want a *FieldError", tt.spec, err)
			continue
		}

		if fe.Field != tt.field {
			t.Errorf("Validate(%+v) field = %q, want %q (%v)", tt.spec, fe.Field, tt.field, err)
		}
	}
}

// TestDefaultAndExisting checks that exactly one kind is the default and
// exactly one names an existing deployment, that the latter is not
// launched, and that the specs built from them are valid targets.
func TestDefaultAndExisting(t *testing.T) {
	defaults, existing := 0, 0

	for _, k := range Kinds() {
		if k.Default {
			defaults++
		}

		if k.Existing {
			existing++

			if k.Launched {
				t.Errorf("kind %s names an existing deployment but is launched", k.Name)
			}
		}
	}

	if defaults != 1 || existing != 1 {
		t.Fatalf("%d default kinds and %d existing-deployment kinds, want one of each", defaults, existing)
	}

	d := DefaultSpec("")
	if k, _ := LookupKind(d.Kind); !k.Default || d.Name != d.Kind || Validate(d) != nil {
		t.Errorf("DefaultSpec(\"\") = %+v, want a valid spec of the default kind named after it", d)
	}

	e := DefaultSpec("mongodb://h/")
	if k, _ := LookupKind(e.Kind); !k.Existing || e.URI != "mongodb://h/" || e.Name != e.Kind || Validate(e) != nil {
		t.Errorf("DefaultSpec(uri) = %+v, want a valid spec of the existing-deployment kind", e)
	}

	if n := Existing("prod", "mongodb://h/"); n.Name != "prod" || n.Kind != e.Kind {
		t.Errorf("Existing(prod) = %+v", n)
	}
}
