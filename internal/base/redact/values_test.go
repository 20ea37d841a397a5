package redact

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
)

// TestKnownMasksEveryForm masks a value as given, percent-encoded (query
// and path) and escaped inside a JSON string, longer values before their
// substrings; masking again changes nothing.
func TestKnownMasksEveryForm(t *testing.T) {
	t.Parallel()

	const tok = `Tok/en "q"&1`

	k := KnownValues(tok, "ab", "")

	for _, in := range []string{
		"raw " + tok + " end",
		"query appName=" + url.QueryEscape(tok),
		"path /" + url.PathEscape(tok) + "/",
		`json {"note":"Tok/en \"q\"\u00261"}`,
		`json {"note":"Tok/en \"q\"&1"}`,
	} {
		got := k.Mask(in)
		if strings.Contains(got, "Tok") || strings.Contains(got, "en") && strings.Contains(got, "q") {
			t.Errorf("Mask(%q) = %q: the value is still there", in, got)
		}

		if !strings.Contains(got, Mask) {
			t.Errorf("Mask(%q) = %q: nothing masked", in, got)
		}

		if again := k.Mask(got); again != got {
			t.Errorf("masking %q again gave %q", got, again)
		}
	}

	if got := k.Mask("cab stays c" + Mask + "b"); got != "c"+Mask+" stays c"+Mask+"b" {
		t.Errorf("short value: %q", got)
	}

	if !k.Is("ab") || k.Is("a") || k.Is("") {
		t.Error("Is does not match exactly the known values")
	}
}

// TestKnownIgnoresEmptyAndMaskParts keeps texts unchanged for values that
// would make masking not idempotent.
func TestKnownIgnoresEmptyAndMaskParts(t *testing.T) {
	t.Parallel()

	k := KnownValues("", "x", Mask)
	if !k.Empty() {
		t.Errorf("values %q are known", k.Values())
	}

	if in := "xx " + Mask; k.Mask(in) != in {
		t.Errorf("Mask(%q) = %q", in, k.Mask(in))
	}
}

// TestStreamMasksAddedValues passes text through until values are added,
// then masks them in every later write.
func TestStreamMasksAddedValues(t *testing.T) {
	t.Parallel()

	var buf bytes.Buffer

	s := NewStream(&buf)

	if n, err := s.Write([]byte("before hunter22\n")); err != nil || n != 16 {
		t.Fatalf("Write: %d, %v", n, err)
	}

	s.Add(KnownValues("hunter22"))

	if n, err := s.Write([]byte("after hunter22\n")); err != nil || n != 15 {
		t.Fatalf("Write: %d, %v", n, err)
	}

	if want := "before hunter22\nafter " + Mask + "\n"; buf.String() != want {
		t.Errorf("wrote %q, want %q", buf.String(), want)
	}
}
