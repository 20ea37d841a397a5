//go:build e2e

package cli

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestDocumentLoadStudyAnswers runs the document-load study, small,
// against the wire-protocol test server (200 template documents per find,
// a server that costs nearly nothing, as docs/studies/document-load.md
// documents): every mode reads without error (struct decodes the ObjectId
// documents), each decoding read has its decode-time entry beside it in
// the results, and the output's last line answers the study's question
// with each mode's decode time per document and its cost over raw.
func TestDocumentLoadStudyAnswers(t *testing.T) {
	srv, err := wiretest.Start(wiretest.Config{FindDocs: 200})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	out := filepath.Join(t.TempDir(), "document-load.json")

	code, stdout, stderr := runMain(t, "run", filepath.Join(studiesDir, "document-load.yaml"), "--uri", srv.URI(),
		"--set", "length=4s", "--out", out, "--no-explain", "--server-stats-interval", "0")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	last := lines[len(lines)-1]

	num := `[0-9.]+(ns|µs|ms)/doc`
	answer := regexp.MustCompile(`^  Answer: decode time per document \(p50\): raw ` + num + `, (map|struct) ` + num + `, (map|struct) ` + num +
		`; (map|struct) decoding (costs [+−]?` + num + ` \(95% CI .*\) (more|less) than raw|: no significant difference from raw .*|against raw: .*)`)
	if !answer.MatchString(last) {
		t.Errorf("last line %q does not answer the question\nstdout:\n%s", last, stdout)
	}

	res, err := result.Read(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}

	ops := map[string]result.Operation{}
	for _, o := range res.Phases[len(res.Phases)-1].Operations {
		ops[o.Name] = o
	}

	if _, ok := ops["none:decode"]; ok {
		t.Error("the read that decodes nothing has a decode time")
	}

	for _, mode := range []string{"none", "raw", "map", "struct"} {
		o := ops[mode]
		if o.Count == 0 || len(o.Errors) > 0 || o.Docs != 200*o.Count {
			t.Errorf("%s: %d reads, %d documents, errors %v", mode, o.Count, o.Docs, o.Errors)
		}

		if mode == "none" {
			continue
		}

		d, ok := ops[mode+":decode"]
		if !ok || d.Unit != result.UnitDecode || len(d.Steps) != 1 || d.Steps[0] != mode || d.Count != o.Count || d.Docs != o.Docs {
			t.Errorf("%s: decode entry %+v (present %v), want one per read of %s", mode, d, ok, mode)
		}

		if d.LatencyUS.P50 > o.LatencyUS.P50 {
			t.Errorf("%s: the decode time's p50 %.0fµs is above its read's %.0fµs", mode, d.LatencyUS.P50, o.LatencyUS.P50)
		}
	}
}
