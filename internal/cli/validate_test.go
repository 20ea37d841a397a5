package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// problemRe is one validate message: file:line:col: path: message.
var problemRe = regexp.MustCompile(`^(\S+):(\d+):(\d+): ([A-Za-z0-9_.\[\]]+): (.+)$`)

// problems returns the file:line:col: path: message lines of output, by file.
func problems(output string) map[string][]string {
	out := map[string][]string{}

	for _, l := range strings.Split(output, "\n") {
		if m := problemRe.FindStringSubmatch(l); m != nil {
			out[m[1]] = append(out[m[1]], l)
		}
	}

	return out
}

// goodWorkloads are the test workloads that must validate.
var goodWorkloads = []string{"testdata/small.yaml", "testdata/maxops.yaml", "testdata/sequence.yaml", "testdata/abort.yaml"}

func TestValidateGood(t *testing.T) {
	t.Parallel()

	code, stdout, stderr := runMain(t, append([]string{"validate"}, goodWorkloads...)...)
	if code != ExitOK {
		t.Fatalf("exit code %d, want %d\nstderr:\n%s", code, ExitOK, stderr)
	}

	for _, f := range goodWorkloads {
		if !strings.Contains(stdout, f+": ok\n") {
			t.Errorf("stdout does not say %q:\n%s", f+": ok", stdout)
		}
	}

	if stderr != "" {
		t.Errorf("stderr is not empty:\n%s", stderr)
	}
}

func TestValidateBroken(t *testing.T) {
	t.Parallel()

	const file = "testdata/broken_weight.yaml"

	code, stdout, stderr := runMain(t, "validate", file)
	if code != ExitBadInput {
		t.Errorf("exit code %d, want %d", code, ExitBadInput)
	}

	// The exact place of the negative weight, as an editor would jump to it.
	if want := file + ":16:13: operations[0].weight: must be > 0"; !strings.Contains(stderr, want+"\n") {
		t.Errorf("stderr does not contain the line %q:\n%s", want, stderr)
	}

	if got := problems(stderr)[file]; len(got) < 2 {
		t.Errorf("want both problems of %s (weight and op) reported, got %q", file, got)
	}

	if !strings.Contains(stderr, `operations[1].op: unknown operation "findEverything"`) {
		t.Errorf("the unknown operation kind is not reported:\n%s", stderr)
	}

	if strings.Contains(stdout, "ok") {
		t.Errorf("stdout says ok for a broken file:\n%s", stdout)
	}

	assertNoStackTrace(t, stdout+stderr)
}

func TestValidateSeveral(t *testing.T) {
	t.Parallel()

	broken := []string{"testdata/broken_weight.yaml", "testdata/broken_collection.yaml", "testdata/broken_syntax.yaml"}
	args := append([]string{"validate"}, broken[0], "testdata/small.yaml", broken[1], broken[2])

	code, stdout, stderr := runMain(t, args...)
	if code != ExitBadInput {
		t.Errorf("exit code %d, want %d", code, ExitBadInput)
	}

	// Every broken file is reported, each with a positioned message.
	for _, f := range broken {
		found := false

		for _, l := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(l, f+":") && regexp.MustCompile(`^\S+:\d+:`).MatchString(l) {
				found = true
			}
		}

		if !found {
			t.Errorf("no positioned problem reported for %s:\n%s", f, stderr)
		}
	}

	if got := problems(stderr)["testdata/broken_collection.yaml"]; len(got) != 1 ||
		!strings.Contains(got[0], `operations[0].collection: collection "nope" is not declared`) {
		t.Errorf("broken_collection.yaml: got %q", got)
	}

	if !strings.Contains(stdout, "testdata/small.yaml: ok") {
		t.Errorf("the good file among broken ones is not reported ok:\n%s", stdout)
	}

	if !strings.Contains(stderr, "3 of 4 workload files have problems") {
		t.Errorf("stderr does not sum up 3 of 4 files:\n%s", stderr)
	}

	if lines := errorLines(stderr); len(lines) != 1 {
		t.Errorf("want one Error: summary line, got %q", lines)
	}

	assertNoStackTrace(t, stdout+stderr)
}

func TestValidateMissingFile(t *testing.T) {
	t.Parallel()

	const file = "testdata/no-such-workload.yaml"

	code, _, stderr := runMain(t, "validate", file)
	if code != ExitBadInput {
		t.Errorf("exit code %d, want %d", code, ExitBadInput)
	}

	if !strings.Contains(stderr, file) {
		t.Errorf("stderr does not name %s:\n%s", file, stderr)
	}

	assertNoStackTrace(t, stderr)
}

// TestValidateBundledWorkloads keeps the bundled workload library valid.
func TestValidateBundledWorkloads(t *testing.T) {
	t.Parallel()

	files, err := filepath.Glob(filepath.Join("..", "..", "workloads", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	if len(files) == 0 {
		t.Fatal("no workload in ../../workloads; did the library move?")
	}

	code, stdout, stderr := runMain(t, append([]string{"validate"}, files...)...)
	if code != ExitOK {
		t.Fatalf("exit code %d, want %d\nstderr:\n%s", code, ExitOK, stderr)
	}

	for _, f := range files {
		if !strings.Contains(stdout, f+": ok\n") {
			t.Errorf("%s is not reported ok:\n%s", f, stdout)
		}
	}
}
