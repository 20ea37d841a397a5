package workload

import (
	"errors"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/spec/targetspec"
)

// targetsWorkload is a minimal workload followed by the given targets.
func targetsWorkload(targets string) string {
	return `name: t
database: bench
collections: [{name: c}]
run: {max_operations: 1}
operations:
  - {name: ins, op: insertOne, collection: c, document: {a: 1}}
targets:
` + targets
}

// TestTargetsFileRules checks the rules the workload file itself makes
// about targets, without any registry of kinds: no program named in a
// file, and no label twice. (The registry's checks, with file and line,
// are tested in package targets.)
func TestTargetsFileRules(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		targets string
		want    string // the one error expected; "" for none
	}{
		{"any kinds", "  - {kind: a}\n  - {kind: b, name: prod, uri: 'mongodb+srv://u:p@h/'}\n", ""},
		{
			"mongod binary", "  - kind: x\n    mongod:\n      binary: ../../evil.sh\n      args: [--quiet]\n",
			`w.yaml:10:15: targets[0].mongod.binary: a workload file cannot name a program to run; give the mongod binary on the command line with --mongod-binary (or the environment variable MONGOBENCH_MONGOD), or put mongod on PATH`,
		},
		{
			"same label twice", "  - {kind: x}\n  - {kind: x}\n",
			`w.yaml:9:5: targets[1].name: target "x" is named twice; give each a name`,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := Parse("w.yaml", []byte(targetsWorkload(tt.targets)))

			switch {
			case tt.want == "" && len(errs) > 0:
				t.Fatalf("errors %v, want none", errs)
			case tt.want == "":
				return
			case len(errs) != 1:
				t.Fatalf("errors %v, want one: %s", errs, tt.want)
			case errs[0].Error() != tt.want:
				t.Errorf("error\n got %s\nwant %s", errs[0], tt.want)
			}
		})
	}
}

// TestCheckTargetsPositions checks that CheckTargets hands each target to
// the validator it is given, without the workload's mongod binary, and
// positions a *FieldError at its field's line, any other error at the
// target's kind.
func TestCheckTargetsPositions(t *testing.T) {
	t.Parallel()

	spec, errs := Parse("w.yaml", []byte(targetsWorkload(
		"  - kind: good\n  - kind: bad-field\n    settings: {x: y}\n  - kind: bad-plain\n")))
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	var seen []string

	validate := func(s targetspec.Spec) error {
		seen = append(seen, s.Kind)

		switch s.Kind {
		case "bad-field":
			return &targetspec.FieldError{Field: "settings.x", Err: errors.New("x is not a setting")}
		case "bad-plain":
			return errors.New("no such kind")
		}

		return nil
	}

	errs = spec.CheckTargets(validate)

	got := make([]string, len(errs))
	for i, e := range errs {
		got[i] = e.Error()
	}

	want := []string{
		"w.yaml:10:19: targets[1].settings.x: x is not a setting",
		"w.yaml:11:11: targets[2].kind: no such kind",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	if strings.Join(seen, ",") != "good,bad-field,bad-plain" {
		t.Errorf("validated %v, want every target once, in order", seen)
	}
}
