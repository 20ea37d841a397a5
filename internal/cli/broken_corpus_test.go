package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// brokenDir holds workload files that are each wrong in one way.
var brokenDir = filepath.Join("..", "spec", "workload", "testdata", "broken")

// brokenWant is, per file in brokenDir, a fragment of the message
// `mongobench validate` must print for it.
var brokenWant = map[string]string{
	"alias-bomb.yaml":             "more than the limit of 4194304",
	"alias-cycle.yaml":            "YAML anchor &d is used inside itself",
	"bad-indent.yaml":             ":2:11: invalid YAML: mapping values are not allowed in this context",
	"binary-garbage.yaml":         ":1:5: invalid YAML: control characters are not allowed",
	"capped-without-size.yaml":    "collections[0].size: a capped collection needs size > 0",
	"comments-only.yaml":          ":1: file is empty",
	"concurrency-huge.yaml":       "run.concurrency: must be between 1 and 10000",
	"deep-nesting.yaml":           "nested more than 120 levels deep",
	"document-int-generator.yaml": "operations[0].document: must be a document, but the ^int generator",
	"document-list.yaml":          ":12:15: operations[0].document: must be a document (a mapping such as {a: 1}), not a list",
	"document-marker-only.yaml":   ":1: file is empty",
	"document-too-deep.yaml":      "operations[0].document: nests documents and lists more than 100 levels deep",
	"duplicate-key.yaml":          ":4:1: database: duplicate field",
	"duplicate-op-name.yaml":      `operations[1].name: operation "ins" is defined twice`,
	"duration-bad-unit.yaml":      `run.duration: "5 minutes" is not a duration`,
	"duration-negative.yaml":      "run.duration: must not be negative",
	"duration-without-unit.yaml":  `run.duration: "10" is not a duration`,
	"empty.yaml":                  ":1: file is empty",
	"field-not-used.yaml":         "operations[0].limit: is not used by insertOne",
	"filter-scalar.yaml":          "operations[0].filter: must be a mapping",
	"generator-bad-range.yaml":    "operations[0].document.a: ^int: min must be <= max",
	"generator-missing-arg.yaml":  "^pool: missing argument size",
	"generator-unknown-var.yaml":  `^var: unknown variable "nope"`,
	"generator-unknown.yaml":      "unknown generator ^integer",
	"max-error-rate-inf.yaml":     "run.max_error_rate: must be a finite number, not .inf",
	"name-with-space.yaml":        `name: "my workload": use letters, digits`,
	"pipeline-stage-scalar.yaml":  "operations[0].pipeline[1]: must be a document",
	"rate-bad-unit.yaml":          `run.rate: "5/d": unknown unit "d"`,
	"rate-zero.yaml":              "run.rate: must be > 0; leave rate out for a closed-loop phase",
	"read-preference-typo.yaml":   `unknown read preference "secondry"`,
	"required-field-missing.yaml": "operations[0].update: is required for updateOne",
	"second-document.yaml":        ":13:1: a second YAML document starts here",
	"system-database.yaml":        `database: "admin" is a system database`,
	"tab-indent.yaml":             ":4:1: invalid YAML: found character that cannot start any token",
	"unclosed-bracket.yaml":       ":3:13: invalid YAML: did not find expected ',' or ']'",
	"unclosed-quote.yaml":         ":2:11: invalid YAML: found unexpected end of stream while scanning a quoted scalar",
	"undeclared-collection.yaml":  `collection "nope" is not declared in collections`,
	"unknown-op-field.yaml":       `operations[0].filtr: unknown field "filtr" (did you mean "filter"?)`,
	"unknown-op-kind.yaml":        `operations[0].op: unknown operation "insertEverything"`,
	"unknown-top-field.yaml":      `operation: unknown field "operation" (did you mean "operations"?)`,
	"weight-nan.yaml":             "operations[0].weight: must be a finite number, not .nan",
	"weight-negative.yaml":        "operations[0].weight: must be > 0",
	"wrong-type-concurrency.yaml": `run.concurrency: must be an integer, not the string "eight"`,
	"wrong-type-name.yaml":        "name: must be a string, not a list",
	"wrong-type-operations.yaml":  `operations: must be a list, not the string "insertOne"`,
}

// positioned matches a message that names file and line.
var positioned = regexp.MustCompile(`^(.+\.yaml):(\d+):`)

// TestBrokenWorkloads runs `mongobench validate` on every file of the
// broken corpus: each must exit with code 2, with one-line messages that
// name file and line, including the expected one, and no stack trace.
func TestBrokenWorkloads(t *testing.T) {
	t.Parallel()

	files, err := filepath.Glob(filepath.Join(brokenDir, "*.yaml"))
	if err != nil || len(files) < 30 {
		t.Fatalf("want at least 30 broken workloads in %s, found %d (%v)", brokenDir, len(files), err)
	}

	seen := map[string]bool{}

	for _, path := range files {
		name := filepath.Base(path)
		seen[name] = true

		t.Run(name, func(t *testing.T) {
			t.Parallel()

			want, ok := brokenWant[name]
			if !ok {
				t.Fatalf("no expected message for %s: add it to brokenWant", name)
			}

			code, stdout, stderr := runMain(t, "validate", path)
			if code != ExitBadInput {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitBadInput, stdout, stderr)
			}

			if !strings.Contains(stderr, path+":") || !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}

			for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if strings.HasPrefix(line, "Error: ") {
					continue
				}

				if m := positioned.FindStringSubmatch(line); m == nil || m[1] != path {
					t.Errorf("message does not name %s and a line: %q", path, line)
				}
			}

			assertNoStackTrace(t, stdout+stderr)
		})
	}

	for name := range brokenWant {
		if !seen[name] {
			t.Errorf("brokenWant lists %s, which is not in %s", name, brokenDir)
		}
	}
}

// TestBrokenWorkloadsHaveAComment checks that each hand-written broken file
// says what is wrong with it, so the corpus stays readable.
func TestBrokenWorkloadsHaveAComment(t *testing.T) {
	t.Parallel()

	exempt := map[string]bool{ // files whose point is their raw content
		"empty.yaml": true, "binary-garbage.yaml": true, "document-marker-only.yaml": true,
		"unclosed-bracket.yaml": true, "unclosed-quote.yaml": true, "tab-indent.yaml": true, "bad-indent.yaml": true,
	}

	for name := range brokenWant {
		if exempt[name] {
			continue
		}

		data, err := os.ReadFile(filepath.Join(brokenDir, name))
		if err != nil {
			t.Fatal(err)
		}

		if !strings.HasPrefix(string(data), "# ") {
			t.Errorf("%s does not start with a comment saying what is wrong", name)
		}
	}
}
