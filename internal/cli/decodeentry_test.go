package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestDecodeEntriesBesideReads runs reads that decode (find into structs,
// findOne into a map) and one that does not against the wire-protocol
// test server: each decoding read has a decode-time entry right after it,
// a decode unit whose one step is the read, recorded once per read with
// the read's documents, in the phase and in every interval; the read that
// decodes nothing has none; and the results file passes its checks.
func TestDecodeEntriesBesideReads(t *testing.T) {
	srv, err := wiretest.Start(wiretest.Config{FindDocs: 50})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	path := filepath.Join(t.TempDir(), "decode.yaml")
	if err := os.WriteFile(path, []byte(`name: decode-entries
database: mongobench_cli_decode_entries
collections: [{name: people}]
load:
  - collection: people
    documents: 1
    document: {_id: {^objectId: {}}, name: {^name: {}}, address: {city: x}, tags: [a, b]}
run: {concurrency: 2, max_operations: 90, sequence: [all, s, one]}
operations:
  - {name: all, op: find, collection: people, decode: none}
  - {name: s, op: find, collection: people, decode: struct}
  - {name: one, op: findOne, collection: people, decode: map}
`), 0o600); err != nil {
		t.Fatal(err)
	}

	out := outPath(t)

	code, stdout, stderr := runMain(t, "run", path, "--uri", srv.URI(), "--out", out, "--quiet", "--no-explain", "--server-stats-interval", "0")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	res, err := result.Read(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}

	p := res.Phases[len(res.Phases)-1]

	var names []string
	for _, o := range p.Operations {
		names = append(names, o.Name)
	}

	want := []string{"all", "s", "s:decode", "one", "one:decode", "iteration"}
	if len(names) != len(want) {
		t.Fatalf("entries %v, want %v", names, want)
	}

	for i, n := range want {
		if names[i] != n {
			t.Fatalf("entries %v, want %v", names, want)
		}
	}

	for _, i := range []int{2, 4} {
		d, read := p.Operations[i], p.Operations[i-1]
		if d.Unit != result.UnitDecode || len(d.Steps) != 1 || d.Steps[0] != read.Name {
			t.Errorf("%s: unit %q steps %v", d.Name, d.Unit, d.Steps)
		}

		if d.Count != read.Count || d.Docs != read.Docs || read.Count == 0 || len(read.Errors) > 0 {
			t.Errorf("%s: %d times, %d documents; its read %d times, %d documents, errors %v", d.Name, d.Count, d.Docs, read.Count, read.Docs, read.Errors)
		}

		var inIntervals int64
		for _, iv := range p.Intervals {
			inIntervals += iv.Operations[i].Count
		}

		if inIntervals != d.Count {
			t.Errorf("%s: %d in the intervals, %d in the phase", d.Name, inIntervals, d.Count)
		}
	}

	if p.Operations[1].Docs != 50*p.Operations[1].Count || p.Operations[3].Docs != p.Operations[3].Count {
		t.Errorf("documents: find %d for %d reads, findOne %d for %d", p.Operations[1].Docs, p.Operations[1].Count, p.Operations[3].Docs, p.Operations[3].Count)
	}
}
