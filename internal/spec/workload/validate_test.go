package workload

import (
	"strconv"
	"strings"
	"testing"
)

// base is a minimal valid workload that the table below breaks one field at
// a time. Line numbers in expectations refer to the broken text.
const base = `name: t
database: bench
collections:
  - name: c
    indexes:
      - keys: {a: 1}
run:
  duration: 1s
operations:
  - name: ins
    op: insertOne
    collection: c
    document: {a: 1}
`

func TestParseValid(t *testing.T) {
	t.Parallel()

	s, errs := Parse("w.yaml", []byte(base))
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}

	if s.Run.Concurrency != DefaultConcurrency || s.Run.Timeout.D() != DefaultTimeout || s.Seed != DefaultSeed {
		t.Errorf("defaults not applied: %+v seed %d", s.Run, s.Seed)
	}

	if got := s.Operations[0].Timeout.D(); got != DefaultTimeout {
		t.Errorf("operation timeout = %s, want the run's %s", got, DefaultTimeout)
	}

	if s.Operations[0].WeightOf() != 1 {
		t.Errorf("default weight = %v, want 1", s.Operations[0].WeightOf())
	}
}

func TestValidationMessages(t *testing.T) {
	t.Parallel()

	for name, tc := range map[string]struct {
		yaml string
		want []string // every message must appear, in order
	}{
		"weight must be positive": {
			yaml: base + "    weight: 0\n",
			want: []string{"w.yaml:14:13: operations[0].weight: must be > 0"},
		},
		"unknown field with suggestion": {
			yaml: strings.Replace(base, "  duration: 1s", "  duraton: 1s", 1),
			want: []string{`w.yaml:8:3: run.duraton: unknown field "duraton" (did you mean "duration"?)`},
		},
		"unknown top-level field lists known ones": {
			yaml: base + "zzz: 1\n",
			want: []string{`w.yaml:14:1: zzz: unknown field "zzz" (known fields: capacity, collections, database,`},
		},
		"wrong scalar type": {
			yaml: strings.Replace(base, "duration: 1s", "duration: soon", 1),
			want: []string{`w.yaml:8:13: run.duration: "soon" is not a duration`},
		},
		"integer expected": {
			yaml: base + "    batch_size: many\n",
			want: []string{`w.yaml:14:17: operations[0].batch_size: must be an integer or a generator such as {^int: {min: 1, max: 100}}, not the string "many"`},
		},
		"unknown op lists kinds": {
			yaml: strings.Replace(base, "op: insertOne", "op: insert", 1),
			want: []string{`w.yaml:11:9: operations[0].op: unknown operation "insert" (one of insertOne, insertMany,`},
		},
		"field not used by kind": {
			yaml: base + "    limit: 3\n",
			want: []string{"w.yaml:14:12: operations[0].limit: is not used by insertOne"},
		},
		"missing required field positions at parent": {
			yaml: strings.Replace(base, "    document: {a: 1}\n", "", 1),
			want: []string{"w.yaml:10:5: operations[0].document: is required for insertOne"},
		},
		"undeclared collection": {
			yaml: strings.Replace(base, "collection: c", "collection: d", 1),
			want: []string{`w.yaml:12:17: operations[0].collection: collection "d" is not declared in collections`},
		},
		"system database refused": {
			yaml: strings.Replace(base, "database: bench", "database: admin", 1),
			want: []string{`w.yaml:2:11: database: "admin" is a system database`},
		},
		"bad index direction": {
			yaml: strings.Replace(base, "keys: {a: 1}", "keys: {a: 2}", 1),
			want: []string{"w.yaml:6:19: collections[0].indexes[0].keys.a: must be 1, -1 or an index type"},
		},
		"capped needs size": {
			yaml: strings.Replace(base, "  - name: c\n", "  - name: c\n    capped: true\n", 1),
			want: []string{"w.yaml:4:5: collections[0].size: a capped collection needs size > 0"},
		},
		"duplicate operation and unknown sequence entry": {
			yaml: strings.Replace(base, "run:\n", "run:\n  sequence: [ins, nope]\n", 1) +
				"  - name: ins\n    op: drop\n    collection: c\n",
			want: []string{
				`w.yaml:8:19: run.sequence[1]: operation "nope" is not defined in operations`,
				`w.yaml:15:11: operations[1].name: operation "ins" is defined twice`,
			},
		},
		"several problems reported at once, top to bottom": {
			yaml: strings.NewReplacer("name: t", "name: ''", "duration: 1s", "concurrency: -1").Replace(base),
			want: []string{
				"w.yaml:1:7: name: is required",
				"w.yaml:8:16: run.concurrency: must be between 1 and 10000",
			},
		},
		"duplicate key": {
			yaml: strings.Replace(base, "database: bench\n", "database: bench\ndatabase: other\n", 1),
			want: []string{"w.yaml:3:1: database: duplicate field"},
		},
		"syntax error has a line": {
			yaml: "name: [unclosed\n",
			want: []string{"w.yaml:1:7: invalid YAML:"},
		},
		// The unclosed "[" is on line 3; the parser notices only at the end
		// of the file, and the message points at the bracket.
		"unclosed flow sequence points at its start": {
			yaml: "name: x\ndatabase: d\noperations: [\n  {op: find}\n",
			want: []string{"w.yaml:3:13: invalid YAML: did not find expected ',' or ']'", "gave up at line 5, column 1"},
		},
		"unclosed quote points at its start": {
			yaml: "name: x\ndatabase: \"d\n",
			want: []string{"w.yaml:2:11: invalid YAML:", "quoted scalar"},
		},
		"second document": {
			yaml: base + "---\nname: other\n",
			want: []string{"w.yaml:" + strconv.Itoa(strings.Count(base, "\n")+1) + ":1: a second YAML document starts here"},
		},
		"only a document marker": {
			yaml: "---\n",
			want: []string{"w.yaml:1: file is empty"},
		},
		"empty file": {
			yaml: "",
			want: []string{"w.yaml:1: file is empty"},
		},
		"j needs acknowledged writes": {
			yaml: base + "    write_concern: {w: 0, j: true}\n",
			want: []string{"w.yaml:14:30: operations[0].write_concern.j: j: true needs an acknowledged write"},
		},
		"read preference": {
			yaml: strings.Replace(base, "op: insertOne\n    collection: c\n    document: {a: 1}",
				"op: find\n    collection: c\n    read_preference: secondry", 1),
			want: []string{`w.yaml:13:22: operations[0].read_preference: unknown read preference "secondry"`},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			wantParseErrors(t, tc.yaml, tc.want)
		})
	}
}

// errorText is errs' messages, one a line: what the tests of the
// workload's checks look for a message in.
func errorText(errs []error) string {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}

	return strings.Join(msgs, "\n")
}

// wantParseErrors parses yaml as w.yaml and wants it refused with errors
// that hold each of want, in order; it returns the errors.
func wantParseErrors(t *testing.T, yaml string, want []string) []error {
	t.Helper()

	s, errs := Parse("w.yaml", []byte(yaml))
	if s != nil || len(errs) == 0 {
		t.Fatalf("no error for:\n%s", yaml)
	}

	joined := errorText(errs)
	pos := 0

	for _, w := range want {
		i := strings.Index(joined[pos:], w)
		if i < 0 {
			t.Fatalf("missing (or out of order) %q in:\n%s", w, joined)
		}

		pos += i + len(w)
	}

	return errs
}
