package workload

import (
	"strings"
	"testing"
)

// TestValidationRules covers, one rule at a time, the rules of the
// collections, load steps, operations and phases that
// TestValidationMessages does not: each broken file must give the rule's
// message at the broken field's line and column (worked out from the text
// below: line 1 is base's "name: t"), or, for a field that is missing, at
// its parent's.
func TestValidationRules(t *testing.T) {
	t.Parallel()

	// Each case edits base with a replacement (old → new) or appends to it.
	const (
		addCollection = "run:\n"
		stagesRun     = "run:\n  duration: 1s\n"
	)

	find := func(extra string) string {
		return base + "  - name: f\n    op: find\n    collection: c\n" + extra
	}

	for name, tc := range map[string]struct {
		yaml string
		want []string
	}{
		// Collections.
		"collection name with $": {
			strings.Replace(base, addCollection, "  - name: a$b\nrun:\n", 1),
			[]string{`w.yaml:7:11: collections[1].name: "a$b" is not a valid collection name`},
		},
		"system collection": {
			strings.Replace(base, addCollection, "  - name: system.users\nrun:\n", 1),
			[]string{`w.yaml:7:11: collections[1].name: "system.users" is not a valid collection name`},
		},
		"collection declared twice": {
			strings.Replace(base, addCollection, "  - name: c\nrun:\n", 1),
			[]string{`w.yaml:7:11: collections[1].name: collection "c" is declared twice`},
		},
		"max without capped points at the collection": {
			strings.Replace(base, "  - name: c\n", "  - name: c\n    max: 5\n", 1),
			[]string{"w.yaml:4:5: collections[0].capped: size and max apply to capped collections only; add capped: true"},
		},
		"negative max": {
			strings.Replace(base, "  - name: c\n", "  - name: c\n    capped: true\n    size: 4096\n    max: -1\n", 1),
			[]string{"w.yaml:7:10: collections[0].max: must be >= 0"},
		},
		"TTL index on two keys": {
			strings.Replace(base, "      - keys: {a: 1}\n", "      - keys: {a: 1, b: 1}\n        expire_after: 1h\n", 1),
			[]string{"w.yaml:7:23: collections[0].indexes[0].expire_after: a TTL index must have exactly one key"},
		},
		"index declared twice": {
			strings.Replace(base, "      - keys: {a: 1}\n", "      - keys: {a: 1}\n      - keys: {a: 1}\n", 1),
			[]string{`w.yaml:7:9: collections[0].indexes[1]: index "a_1" is declared twice`},
		},
		"index on an operator": {
			strings.Replace(base, "keys: {a: 1}", "keys: {$a: 1}", 1),
			[]string{`w.yaml:6:16: collections[0].indexes[0].keys.$a: invalid field name "$a"`},
		},
		"index without keys": {
			strings.Replace(base, "keys: {a: 1}", "keys: {}", 1),
			[]string{"w.yaml:6:15: collections[0].indexes[0].keys: must be a non-empty mapping of field to 1, -1 or an index type"},
		},

		// Load steps: each field at its place, the missing template at
		// the step.
		"load step": {
			base + "load:\n  - collection: c\n    documents: 0\n    batch_size: -1\n    concurrency: -1\n",
			[]string{
				"w.yaml:15:5: load[0].document: is required: the template of the documents to insert",
				"w.yaml:16:16: load[0].documents: must be > 0",
				"w.yaml:17:17: load[0].batch_size: must be between 1 and ",
				"w.yaml:18:18: load[0].concurrency: must be between 1 and ",
			},
		},
		"load into an undeclared collection": {
			base + "load:\n  - collection: d\n    documents: 10\n    document: {a: 1}\n",
			[]string{`w.yaml:15:17: load[0].collection: collection "d" is not declared in collections`},
		},

		// Operations.
		"operation name with a space": {
			strings.Replace(base, "  - name: ins\n", "  - name: in s\n", 1),
			[]string{`w.yaml:10:11: operations[0].name: "in s": use letters, digits, '_', '.' and '-' only`},
		},
		"operation named like the iteration": {
			strings.Replace(base, "  - name: ins\n", "  - name: "+IterationUnit+"\n", 1),
			[]string{`w.yaml:10:11: operations[0].name: "` + IterationUnit + `" is reserved for a sequence's whole iteration`},
		},
		"operation without op points at the operation": {
			strings.Replace(base, "    op: insertOne\n", "", 1),
			[]string{"w.yaml:10:5: operations[0].op: is required (one of "},
		},
		"zero timeout": {
			base + "    timeout: 0s\n",
			[]string{"w.yaml:14:14: operations[0].timeout: must be > 0"},
		},
		"negative limit": {
			find("    limit: -1\n"),
			[]string{"w.yaml:17:12: operations[1].limit: must be >= 0"},
		},
		"negative skip": {
			find("    skip: -1\n"),
			[]string{"w.yaml:17:11: operations[1].skip: must be >= 0"},
		},
		"unknown decode mode": {
			find("    decode: weird\n"),
			[]string{`w.yaml:17:13: operations[1].decode: unknown decode mode "weird" (one of `},
		},
		"pipeline that is no list": {
			base + "  - name: a\n    op: aggregate\n    collection: c\n    pipeline: {a: 1}\n",
			[]string{"w.yaml:17:15: operations[1].pipeline: must be a list of stages"},
		},
		"update that is no document": {
			base + "  - name: u\n    op: updateOne\n    collection: c\n    filter: {a: 1}\n    update: 5\n",
			[]string{"w.yaml:18:13: operations[1].update: must be an update document or an update pipeline (a list)"},
		},
		"createIndexes on a collection without indexes": {
			strings.Replace(base, addCollection, "  - name: d\nrun:\n", 1) + "  - name: ci\n    op: createIndexes\n    collection: d\n",
			[]string{`w.yaml:17:17: operations[1].collection: collection "d" declares no indexes to create`},
		},
		"createIndexes of an undeclared index": {
			base + "  - name: ci\n    op: createIndexes\n    collection: c\n    indexes: [a_1, nope]\n",
			[]string{`w.yaml:17:20: operations[1].indexes[1]: index "nope" is not declared for collection "c"`},
		},

		// The run's phase.
		"interval too short": {
			strings.Replace(base, stagesRun, "run:\n  duration: 1s\n  interval: 1ms\n", 1),
			[]string{"w.yaml:9:13: run.interval: must be at least "},
		},
		"error rate above 1": {
			strings.Replace(base, stagesRun, "run:\n  duration: 1s\n  max_error_rate: 2\n", 1),
			[]string{"w.yaml:9:19: run.max_error_rate: must be between 0 and 1"},
		},
		"in-flight bound of a closed loop": {
			strings.Replace(base, stagesRun, "run:\n  duration: 1s\n  max_in_flight: 4\n", 1),
			[]string{"w.yaml:9:18: run.max_in_flight: applies to open-loop phases only (set rate or rate stages)"},
		},
		"stage of rate and concurrency": {
			strings.Replace(base, stagesRun, "run:\n  stages:\n    - {duration: 1s, rate: 10, concurrency: 2}\n", 1),
			[]string{"w.yaml:9:7: run.stages[0]: a stage sets rate or concurrency, not both"},
		},
		"unknown stage shape": {
			strings.Replace(base, stagesRun, "run:\n  stages:\n    - {duration: 1s, rate: 10, shape: wave}\n", 1),
			[]string{`w.yaml:9:39: run.stages[0].shape: unknown shape "wave" (linear or step)`},
		},
		"stages of different kinds": {
			strings.Replace(base, stagesRun, "run:\n  stages:\n    - {duration: 1s, rate: 10}\n    - {duration: 1s, concurrency: 2}\n", 1),
			[]string{"w.yaml:10:35: run.stages[1].concurrency: all stages of a phase ramp the same thing; the first ramps the rate"},
		},
		"warm-up of a ramp": {
			strings.Replace(base, stagesRun, "run:\n  warmup: 1s\n  stages:\n    - {duration: 1s, rate: 10}\n", 1),
			[]string{"w.yaml:8:11: run.warmup: a phase with stages has no warm-up: make the first stage a ramp instead"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			for _, err := range wantParseErrors(t, tc.yaml, tc.want) {
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("a message spans several lines:\n%v", err)
				}
			}
		})
	}
}
