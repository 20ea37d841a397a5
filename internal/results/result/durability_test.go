package result

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDurabilityAnswer(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		d    Durability
		want string
	}{
		{Durability{Acknowledged: 12000, Lost: 37}, "37 of 12,000 acknowledged documents lost after a crash"},
		{Durability{Acknowledged: 1234567, Lost: 0}, "0 of 1,234,567 acknowledged documents lost after a crash"},
		{Durability{Acknowledged: 999, Lost: 999}, "999 of 999 acknowledged documents lost after a crash"},
		{Durability{Acknowledged: 5, Error: "a uri target is not crashed"}, "not checked: a uri target is not crashed"},
	} {
		if got := tc.d.Answer(); got != tc.want {
			t.Errorf("Answer() = %q, want %q", got, tc.want)
		}
	}
}

// TestDurabilityIsOptional checks that a result without a durability phase
// writes no durability field, so that older readers and files agree, and
// that one with it reads back whole.
func TestDurabilityIsOptional(t *testing.T) {
	t.Parallel()

	b, err := json.Marshal(&Result{})
	if err != nil {
		t.Fatal(err)
	}

	if strings.Contains(string(b), "durability") {
		t.Errorf("a result without a durability phase writes it: %s", b)
	}

	in := Result{Durability: []Durability{{Target: "pg", Kind: "ferretdb-postgres", WriteConcern: "w:1", Acknowledged: 10, Lost: 2, Present: 8}}}

	if b, err = json.Marshal(&in); err != nil {
		t.Fatal(err)
	}

	var out Result
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}

	if len(out.Durability) != 1 || out.Durability[0] != in.Durability[0] {
		t.Errorf("read back %+v, want %+v", out.Durability, in.Durability)
	}
}
