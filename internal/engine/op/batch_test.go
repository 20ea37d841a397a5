package op

import (
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// TestBatchCap checks the cap on what one insertMany generates, for load
// steps and insertMany operations, at the edge and above it.
func TestBatchCap(t *testing.T) {
	t.Parallel()

	const head = "name: t\ndatabase: d\ncollections:\n  - name: c\nrun:\n  duration: 1s\n"

	for name, tc := range map[string]struct {
		yaml string
		want string // "" means it compiles
	}{
		"largest batch of small documents": {
			yaml: head + "operations:\n  - name: b\n    op: insertMany\n    collection: c\n    batch_size: 100000\n    document: {a: 1}\n",
		},
		"operation with large documents": {
			yaml: head + "operations:\n  - name: b\n    op: insertMany\n    collection: c\n    batch_size: 100\n" +
				"    document: {blob: {^string: {length: 1000000}}}\n",
			want: "w.yaml:11:17: operations[0].batch_size: 100 documents of up to 6.25e+04 values each may generate " +
				"6.25e+06 values per insertMany, above the cap of 4194304",
		},
		"load step with large arrays": {
			yaml: head + "load:\n  - collection: c\n    documents: 10\n    batch_size: 50000\n" +
				"    document: {tags: {^array: {length: 1000, of: 1}}}\n" +
				"operations:\n  - name: f\n    op: findOne\n    collection: c\n",
			want: "w.yaml:10:17: load[0].batch_size: 50000 documents of up to 1e+03 values each",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			spec, errs := workload.Parse("w.yaml", []byte(tc.yaml))
			if len(errs) > 0 {
				t.Fatalf("parse: %v", errs)
			}

			env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
			if len(errs) > 0 {
				t.Fatalf("env: %v", errs)
			}

			_, opErrs := Compile(spec, env)
			_, loadErrs := CompileLoad(spec, env)

			var msgs []string
			for _, e := range append(opErrs, loadErrs...) {
				msgs = append(msgs, e.Error())
			}

			got := strings.Join(msgs, "\n")

			switch {
			case tc.want == "" && got != "":
				t.Errorf("unexpected errors:\n%s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("errors:\n%s\nwant one containing:\n%s", got, tc.want)
			}
		})
	}
}
