package opkind

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// rowRe matches a row of the operations table in docs/workloads.md: kinds,
// required fields, optional fields.
var rowRe = regexp.MustCompile("(?m)^\\| (`[a-zA-Z]+`(?:, `[a-zA-Z]+`)*) \\| (.*) \\| (.*) \\|$")

// codeRe matches a name written as code.
var codeRe = regexp.MustCompile("`([a-z_A-Z]+)`")

// parenRe matches a parenthesised remark in a table cell.
var parenRe = regexp.MustCompile(`\([^)]*\)`)

// TestKindsDocumented checks that the operations table of
// docs/workloads.md documents exactly the kinds of the table here, in the
// same order, each with the same required and optional fields, so that the
// page stays true when a kind or field is added.
func TestKindsDocumented(t *testing.T) {
	t.Parallel()

	data, err := os.ReadFile("../../../docs/workloads.md")
	if err != nil {
		t.Fatal(err)
	}

	// The table starts at its header and ends at the first blank line.
	doc := string(data)

	start := strings.Index(doc, "| op | required | optional |")
	if start < 0 {
		t.Fatal("docs/workloads.md has no operations table (| op | required | optional |)")
	}

	table, _, _ := strings.Cut(doc[start:], "\n\n")

	var documented []string

	for _, row := range rowRe.FindAllStringSubmatch(table, -1) {
		required := names(row[2])
		optional := names(parenRe.ReplaceAllString(row[3], ""))

		for _, name := range names(row[1]) {
			documented = append(documented, name)

			k, ok := Lookup(name)
			if !ok {
				t.Errorf("docs/workloads.md documents %q, which is no operation kind", name)
				continue
			}

			if !slices.Equal(required, k.Required) {
				t.Errorf("%s: docs say required %v, the table %v", name, required, k.Required)
			}

			if !slices.Equal(optional, k.Optional) {
				t.Errorf("%s: docs say optional %v, the table %v", name, optional, k.Optional)
			}
		}
	}

	if !slices.Equal(documented, Names()) {
		t.Errorf("docs/workloads.md documents kinds %v, want %v", documented, Names())
	}
}

// names returns the names written as code in a table cell.
func names(cell string) []string {
	var out []string
	for _, m := range codeRe.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}

	return out
}

// TestReadOrWrite checks that every kind reads or writes (or both), so that
// validation offers it a read preference or a write concern, and that the
// fields agree: a read preference only where the kind reads, a write
// concern only where it writes.
func TestReadOrWrite(t *testing.T) {
	t.Parallel()

	for _, k := range all() {
		if !k.Reads && !k.Writes {
			t.Errorf("%s neither reads nor writes", k.Name)
		}

		if got := slices.Contains(k.Optional, "read_preference"); got != k.Reads {
			t.Errorf("%s: read_preference allowed %v, Reads %v", k.Name, got, k.Reads)
		}

		if got := slices.Contains(k.Optional, "write_concern"); got != k.Writes {
			t.Errorf("%s: write_concern allowed %v, Writes %v", k.Name, got, k.Writes)
		}

		if strings.TrimSpace(k.Name) == "" {
			t.Error("a kind has no name")
		}
	}
}

// TestPropertiesConsistent checks that the properties other packages ask
// the registry for agree with the fields each kind takes, so that a new
// kind cannot claim to store documents it has no field for, or to be sent
// to external clients without a collection.
func TestPropertiesConsistent(t *testing.T) {
	t.Parallel()

	for _, k := range all() {
		if k.Stores != "" && !slices.Contains(k.Required, k.Stores) {
			t.Errorf("%s stores its %q field, which it does not require", k.Name, k.Stores)
		}

		if k.Inserts && (k.Stores == "" || !k.Writes) {
			t.Errorf("%s inserts, so it must write and store a document field", k.Name)
		}

		if k.Batches && (!k.Inserts || !k.Takes("batch_size")) {
			t.Errorf("%s batches documents, so it must insert and take batch_size", k.Name)
		}

		if k.Lists && !k.Reads {
			t.Errorf("%s lists documents, so it must read", k.Name)
		}

		if k.External && !slices.Contains(k.Required, "collection") {
			t.Errorf("%s is sent to external clients, which call collections, but takes no collection", k.Name)
		}

		if Inserts(k.Name) != k.Inserts || Lists(k.Name) != k.Lists || Stored(k.Name) != k.Stores {
			t.Errorf("%s: the lookup functions disagree with the table", k.Name)
		}
	}

	if Inserts("nope") || Lists("nope") || Stored("nope") != "" {
		t.Error("an unknown kind has properties")
	}

	if len(External()) == 0 || len(External()) == len(all()) {
		t.Errorf("External() = %v: want the collection calls only, not none nor all", External())
	}
}
