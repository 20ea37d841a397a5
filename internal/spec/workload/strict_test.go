package workload

import (
	"strings"
	"testing"
)

// TestStrictRules checks the rules that refuse input the engine would
// misread or fail on only at run time; each message names file, line,
// column and field.
func TestStrictRules(t *testing.T) {
	t.Parallel()

	const doc = "document: {a: 1}"

	for name, tc := range map[string]struct {
		from, to string // replaced once in base
		want     string
	}{
		"document is a list":           {doc, "document: [1, 2, 3]", "w.yaml:13:15: operations[0].document: must be a document (a mapping such as {a: 1}), not a list"},
		"document is a scalar":         {doc, "document: 5", "operations[0].document: must be a document (a mapping such as {a: 1}), not int 5"},
		"document is an int generator": {doc, "document: {^int: {min: 1, max: 2}}", "operations[0].document: must be a document, but the ^int generator produces a value that is not one"},
		"choice of a non-document":     {doc, "document: {^choice: {values: [{a: 1}, x]}}", `operations[0].document.^choice.values[1]: must be a document (a mapping such as {a: 1}), not the string "x"`},
		"pool of a non-document":       {doc, "document: {^pool: {size: 3, of: [1]}}", "operations[0].document.^pool.of: must be a document"},
		"filter is a generator":        {"op: insertOne\n    collection: c\n    " + doc, "op: find\n    collection: c\n    filter: {^string: 5}", "operations[0].filter: must be a document, but the ^string generator"},
		"pipeline stage is a number":   {"op: insertOne\n    collection: c\n    " + doc, "op: aggregate\n    collection: c\n    pipeline: [{$match: {}}, 3]", "operations[0].pipeline[1]: must be a document (a mapping such as {a: 1}), not int 3"},
		"update pipeline stage":        {"op: insertOne\n    collection: c\n    " + doc, "op: updateOne\n    collection: c\n    filter: {}\n    update: [[1]]", "operations[0].update[0]: must be a document"},
		"load document is a list":      {"run:\n", "load:\n  - collection: c\n    documents: 10\n    document: [a]\nrun:\n", "load[0].document: must be a document"},
		"nan weight":                   {doc, doc + "\n    weight: .nan", "operations[0].weight: must be a finite number, not .nan"},
		"inf max_error_rate":           {"run:\n", "run:\n  max_error_rate: .inf\n", "run.max_error_rate: must be a finite number, not .inf"},
		"zero rate":                    {"run:\n", "run:\n  rate: 0/s\n", "run.rate: must be > 0; leave rate out for a closed-loop phase"},
		"zero plain rate":              {"run:\n", "run:\n  rate: 0\n", "run.rate: must be > 0"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			src := strings.Replace(base, tc.from, tc.to, 1)
			if src == base {
				t.Fatalf("%q is not in base", tc.from)
			}

			s, errs := Parse("w.yaml", []byte(src))
			if s != nil {
				t.Fatalf("accepted:\n%s", src)
			}

			var got []string
			for _, err := range errs {
				got = append(got, err.Error())
			}

			joined := strings.Join(got, "\n")
			if !strings.Contains(joined, tc.want) {
				t.Errorf("missing %q in:\n%s", tc.want, joined)
			}

			for _, line := range got {
				if !strings.HasPrefix(line, "w.yaml:") || strings.HasPrefix(line, "w.yaml: ") {
					t.Errorf("message without a line: %q", line)
				}
			}
		})
	}
}

// TestStrictRulesAccept checks that the rules do not refuse what is valid:
// generators that produce documents, and ramp stages down to rate 0.
func TestStrictRulesAccept(t *testing.T) {
	t.Parallel()

	for name, src := range map[string]string{
		"choice of documents": strings.Replace(base, "document: {a: 1}", "document: {^choice: {values: [{a: 1}, {b: 2}]}}", 1),
		"pool of documents":   strings.Replace(base, "document: {a: 1}", "document: {^pool: {size: 2, of: {a: {^int: {min: 1, max: 9}}}}}", 1),
		"positive rate":       strings.Replace(base, "run:\n", "run:\n  rate: 5/s\n", 1),
	} {
		if _, errs := Parse("w.yaml", []byte(src)); len(errs) > 0 {
			t.Errorf("%s: refused: %v", name, errs)
		}
	}
}
