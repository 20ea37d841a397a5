package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

// TestReportMasksSecrets gives the HTML and CSV writers a result with a
// password in its source text, spec, target, notes, status, explain answer
// and a matrix target, as a caller that forgot result.Sanitize would, and
// finds none of it in what they write.
func TestReportMasksSecrets(t *testing.T) {
	const canary = "Canary-S3cr3t-xyzzy"

	uri := "mongodb://bob:" + canary + "@h:27017/"

	r := fullResult(t)
	r.Workload.Source = "name: x\ntargets:\n  - kind: uri\n    uri: " + uri + "\n# password: " + canary + "\n"
	r.Workload.Spec = map[string]any{"name": "x", "vars": map[string]any{"db_password": canary}}
	r.Target.URI = uri
	r.Target.ServerVersion = "7.0 at " + uri // a column of the CSV files
	r.Target.Notes = append(r.Target.Notes, "via "+uri)
	r.StatusReason = "aborted at " + uri
	r.Findings = append(r.Findings, result.Finding{Severity: "info", Text: "seen " + uri})

	if len(r.Explain) > 0 {
		r.Explain[0].Raw = `{"filter": {"password": "` + canary + `"}}`
	}

	r.Matrix = &result.Matrix{Targets: []result.MatrixTarget{{Name: "a", Kind: "uri", URI: uri, Error: "at " + uri}}}

	dir := t.TempDir()
	html := filepath.Join(dir, "r.html")

	if err := (Options{}).WriteFile(html, []*result.Result{r}); err != nil {
		t.Fatal(err)
	}

	written, err := (Options{}).WriteCSV(filepath.Join(dir, "csv"), []*result.Result{r})
	if err != nil {
		t.Fatal(err)
	}

	for _, p := range append(written, html) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}

		if i := bytes.Index(data, []byte("S3cr3t")); i >= 0 {
			t.Errorf("%s holds the password: …%s…", p, data[max(0, i-80):min(len(data), i+80)])
		}
	}

	if r.Target.URI != uri {
		t.Error("the writers modified the caller's result")
	}
}
