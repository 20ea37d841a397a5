package targets

import "testing"

func TestEmbeddedKindsTakeNothing(t *testing.T) {
	for _, kind := range []string{KindEmbedded, KindEmbeddedMemory} {
		if err := Validate(TargetSpec{Kind: kind}); err != nil {
			t.Errorf("%s: Validate() = %v", kind, err)
		}

		for _, bad := range []TargetSpec{
			{Kind: kind, URI: "mongodb://h/"},
			{Kind: kind, Settings: map[string]string{"fsync": "off"}},
			{Kind: kind, Mongod: &MongodSpec{}},
		} {
			if err := Validate(bad); err == nil {
				t.Errorf("Validate(%+v) = nil, want an error", bad)
			}
		}

		if _, err := ParseTargetFlag(kind + ":fsync=off"); err == nil {
			t.Errorf("%s:fsync=off was accepted", kind)
		}
	}
}
