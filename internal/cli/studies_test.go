package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// studiesDir holds the study library's workloads (docs/studies describes
// them).
const studiesDir = "../../workloads/studies"

// wantStudies are the studies the library promises; each has a doc under
// docs/studies.
var wantStudies = []string{"cleanup", "document-load", "error-tracker", "query-tweaks", "write-durability"}

// studyFiles returns the study workload files, failing if one is missing.
func studyFiles(t *testing.T) []string {
	t.Helper()

	files, err := filepath.Glob(filepath.Join(studiesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	have := map[string]bool{}
	for _, f := range files {
		have[strings.TrimSuffix(filepath.Base(f), ".yaml")] = true
	}

	for _, name := range wantStudies {
		if !have[name] {
			t.Errorf("study %s: %s/%s.yaml is missing", name, studiesDir, name)
		}

		if _, err := os.Stat(filepath.Join("../../docs/studies", name+".md")); err != nil {
			t.Errorf("study %s has no doc: %v", name, err)
		}
	}

	return files
}

func TestStudiesValidate(t *testing.T) {
	t.Parallel()

	// Variants of studies that need a real mongod (w: 0, replica sets) live
	// under mongod/: validated here, not run by the smoke test.
	mongodOnly, err := filepath.Glob(filepath.Join(studiesDir, "mongod", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	for _, f := range append(studyFiles(t), mongodOnly...) {
		name, err := filepath.Rel(studiesDir, f)
		if err != nil {
			t.Fatal(err)
		}

		t.Run(name, func(t *testing.T) {
			t.Parallel()

			if _, errs := loadWorkload(f, nil); len(errs) > 0 {
				t.Fatalf("%s does not validate: %v", f, errs)
			}
		})
	}
}

// sizeLineRe matches a line whose integer value is marked as the study's
// size: `  max_operations: 600  # size: ...`.
var sizeLineRe = regexp.MustCompile(`(?m)^(\s*[a-z_]+: )(\d+)(\s+# size.*)$`)

// roundsRe matches the number of trial rounds.
var roundsRe = regexp.MustCompile(`(?m)^(\s*rounds: )\d+(.*)$`)

// smallestSize rewrites a study at its smallest size: every value marked
// `# size` divided by 10 (at least 1) and one trial round.
func smallestSize(t *testing.T, text string) string {
	t.Helper()

	text = sizeLineRe.ReplaceAllStringFunc(text, func(line string) string {
		m := sizeLineRe.FindStringSubmatch(line)

		n, err := strconv.Atoi(m[2])
		if err != nil {
			t.Fatalf("size line %q: %v", line, err)
		}

		return m[1] + strconv.Itoa(max(1, n/10)) + m[3]
	})

	return roundsRe.ReplaceAllString(text, "${1}1${2}")
}

// hasTimedPhase reports whether a phase of the workload at path is timed by
// a duration, so that --duration applies to it.
func hasTimedPhase(t *testing.T, path string) bool {
	t.Helper()

	spec, errs := workload.ReadFile(path)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", path, errs)
	}

	phases, _ := spec.PhaseList()
	for _, p := range phases {
		if p.Duration > 0 {
			return true
		}
	}

	return false
}

// requireStudyStacks skips the study at path when a client stack that one
// of its variants (or the workload) runs through is not installed: the
// stacks studies need `mongobench clients install`, which .ci/run does.
func requireStudyStacks(t *testing.T, path string) {
	t.Helper()

	spec, errs := workload.ReadFile(path)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", path, errs)
	}

	specs, errs := spec.VariantSpecs()
	if len(errs) > 0 {
		t.Fatalf("%s: %v", path, errs)
	}

	for _, vs := range specs {
		if client.External(vs.Run.Client) {
			requireStack(t, vs.Run.Client)
		}
	}
}
