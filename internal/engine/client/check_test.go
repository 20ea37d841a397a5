package client

import (
	"strings"
	"testing"
)

// TestCheck checks the positioned errors of what an external stack cannot
// run, and that go and a plain closed loop pass.
func TestCheck(t *testing.T) {
	t.Parallel()

	const ops = `operations:
  - name: get
    op: findOne
    collection: c
    filter: {n: 1}
`

	for name, tc := range map[string]struct {
		yaml string
		want []string
	}{
		"go default":  {yaml: "run:\n  duration: 1s\n" + ops},
		"closed loop": {yaml: "run:\n  duration: 1s\n  client: node-mongoose\n" + ops},
		"unknown": {
			yaml: "run:\n  duration: 1s\n  client: node-prisma\n" + ops,
			want: []string{`w.yaml:7:11: run.client: unknown client "node-prisma" (known: go, node-driver, node-mongoose, node-mongoose-lean, python-pymongo, python-mongoengine)`},
		},
		"varying field type on an ODM": {
			yaml: "run:\n  duration: 1s\n  client: python-mongoengine\n" +
				"load:\n  - collection: c\n    documents: 10\n    document: {v: {^choice: {values: [1, one]}}}\n" + ops,
			want: []string{`w.yaml:11:15: load[0].document: collection "c": field "v" is`},
		},
		"varying field type on a driver": {
			yaml: "run:\n  duration: 1s\n  client: python-pymongo\n" +
				"load:\n  - collection: c\n    documents: 10\n    document: {v: {^choice: {values: [1, one]}}}\n" + ops,
		},
		"replace on MongoEngine": {
			yaml: "run:\n  duration: 1s\n  client: python-mongoengine\n" + `operations:
  - name: put
    op: replaceOne
    collection: c
    filter: {n: 1}
    replacement: {n: 1}
`,
			want: []string{`w.yaml:10:9: operations[0].op: operation "put": client python-mongoengine has no call for kind replaceOne (MongoEngine has no replace of a whole document)`},
		},
		"replace on PyMongo": {
			yaml: "run:\n  duration: 1s\n  client: python-pymongo\n" + `operations:
  - name: put
    op: replaceOne
    collection: c
    filter: {n: 1}
    replacement: {n: 1}
`,
		},
		"think time": {
			yaml: "run:\n  duration: 1s\n  think_time: 1ms\n  client: python-pymongo\n" + ops,
			want: []string{"w.yaml:7:15: run.think_time: client python-pymongo sends each operation when the last returned; think_time runs with client go only"},
		},
		"open loop": {
			yaml: "run:\n  duration: 1s\n  rate: 100\n  client: python-pymongo\n" + ops,
			want: []string{"w.yaml:6:3: run: client python-pymongo runs closed-loop phases only; this phase's load model is rate"},
		},
		"administration, composite and decode": {
			yaml: "run:\n  duration: 1s\n  client: node-mongoose-lean\n" + ops + `    decode: struct
  - name: wipe
    op: drop
    collection: c
    timeout: 1s
  - name: rmw
    steps:
      - {name: r, op: findOne, collection: c}
`,
			want: []string{
				`w.yaml:13:13: operations[0].decode: operation "get": decode is how the Go engine maps documents; client node-mongoose-lean`,
				`w.yaml:15:9: operations[1].op: operation "wipe": client node-mongoose-lean has no call for kind drop`,
				`w.yaml:17:14: operations[1].timeout: operation "wipe": client node-mongoose-lean bounds every operation by run.timeout`,
				`w.yaml:20:7: operations[2].steps: operation "rmw": client node-mongoose-lean runs single operations`,
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			spec := parseSpec(t, "name: t\ndatabase: d\ncollections:\n  - name: c\n"+tc.yaml)
			errs := Check(spec)

			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors %v, want %d", len(errs), errs, len(tc.want))
			}

			for i, want := range tc.want {
				if !strings.HasPrefix(errs[i].Error(), want) {
					t.Errorf("error %d:\n got %s\nwant %s…", i, errs[i], want)
				}
			}
		})
	}
}
