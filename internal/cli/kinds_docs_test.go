package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/targets"
)

// kindRowRe matches a row of the target kinds table in docs/results.md.
var kindRowRe = regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| (yes|no) \\| (.+) \\|$")

// TestTargetKindsDocumented checks that docs/results.md lists exactly the
// registry's target kinds, with whether each is launched and its
// description, so that the page stays true when a kind is added.
func TestTargetKindsDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/results.md")
	if err != nil {
		t.Fatal(err)
	}

	rows := kindRowRe.FindAllStringSubmatch(string(data), -1)
	kinds := targets.Kinds()

	if len(rows) != len(kinds) {
		t.Fatalf("docs/results.md lists %d target kinds, the registry has %d", len(rows), len(kinds))
	}

	for i, k := range kinds {
		launched := map[bool]string{true: "yes", false: "no"}[k.Launched]
		row := rows[i]

		// The docs write names of flags and variables as code.
		desc := strings.ReplaceAll(row[3], "`", "")

		if row[1] != k.Name || row[2] != launched || desc != k.Description {
			t.Errorf("docs/results.md row %d: %q, %s, %q; registry: %q, %s, %q", i+1, row[1], row[2], desc, k.Name, launched, k.Description)
		}
	}
}
