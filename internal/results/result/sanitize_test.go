package result

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Canary passwords planted in every kind of field; none may survive.
const (
	canaryPlain = "Canary-S3cr3t-xyzzy"
	canaryAt    = "Canary@S3cr3t-plugh"
)

// canaryFragments are the byte strings whose presence means a leak: the
// canaries, their encoded forms and the parts of the one with '@'.
var canaryFragments = []string{
	canaryPlain, canaryAt, url.QueryEscape(canaryAt), url.PathEscape(canaryPlain), "S3cr3t", "xyzzy", "plugh",
}

func assertNoCanary(t *testing.T, what string, data []byte) {
	t.Helper()

	for _, f := range canaryFragments {
		if i := bytes.Index(data, []byte(f)); i >= 0 {
			lo, hi := max(0, i-80), min(len(data), i+len(f)+80)
			t.Errorf("%s holds %q: …%s…", what, f, data[lo:hi])
		}
	}
}

// leakyResult is a result with a canary in every place a secret has been
// seen to reach: the spec (nested keys), the source text, the target URI and
// notes, the status reason, explain command and raw answer, findings,
// server notes, and a matrix whose targets and trials hold them again.
func leakyResult(t *testing.T) *Result {
	t.Helper()

	r := buildResult(t)
	uri := "mongodb://bob:" + canaryPlain + "@h:27017/?authMechanism=PLAIN"
	atURI := "mongodb://bob:" + url.QueryEscape(canaryAt) + "@h:27017/"
	rawAtURI := "mongodb://bob:" + canaryAt + "/x@h:27017/"

	r.Workload.Spec = map[string]any{
		"name": "leaky",
		"vars": map[string]any{"api_token": canaryPlain, "n": 3.0},
		"operations": []any{map[string]any{
			"name":   "login",
			"filter": map[string]any{"password": canaryPlain, "user": "bob"},
			"credentials": map[string]any{
				"user": "bob", "pin": 1234567.0, "list": []any{canaryAt, map[string]any{"x": canaryPlain}},
			},
		}},
		"targets": []any{map[string]any{"kind": "uri", "name": "t", "comment": "was " + uri}},
	}
	r.Workload.Source = "name: leaky\n# old: " + rawAtURI + "\ntargets:\n  - kind: uri\n    uri: " + uri +
		"\nvars:\n  api_token: " + canaryPlain + "\n  secret:\n    user: bob\n    pass: " + canaryAt + "\n"
	r.Target.URI = uri
	r.Target.Notes = append(r.Target.Notes, "connected through "+atURI)
	r.StatusReason = "aborted: cannot reach " + rawAtURI + " within 5s"
	r.Explain = []Explain{{
		Operation: "login", Collection: "users",
		Command: `{"find": "users", "filter": {"password": "` + canaryPlain + `"}}`,
		Raw:     `{"queryPlanner": {"parsedQuery": {"password": {"$eq": "` + canaryPlain + `"}}}, "command": {"filter": {"password": "` + canaryPlain + `"}}}`,
		Error:   "explain via " + uri,
	}}
	r.Findings = []Finding{{Severity: "warning", Text: "token=" + canaryPlain + " seen"}}
	// A collection named like a secret keys typed numbers: they stay.
	r.Server = &Server{
		Supported: map[string]bool{"top": false}, Notes: []string{"top: refused for " + atURI},
		Samples: []ServerSample{{Collections: map[string]map[string]int64{"user_tokens": {"count": 7}}}},
	}

	trial := buildResult(t)
	trial.Workload = r.Workload
	trial.Target.URI = atURI
	r.ResultKind, r.Target.Kind = KindMatrix, ""
	r.Matrix = &Matrix{
		Targets:  []MatrixTarget{{Name: "a", Kind: "uri", URI: uri, Error: "target a: " + rawAtURI, Notes: []string{uri}}},
		Variants: []string{"v"},
		Rounds:   1,
		Trials:   []Trial{{Target: "a", Variant: "v", Round: 1, Result: trial}},
	}

	return r
}

func TestSanitizeMasksEverySecret(t *testing.T) {
	r := leakyResult(t)
	before, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}

	clean, err := Sanitize(r)
	if err != nil {
		t.Fatal(err)
	}

	data, err := json.Marshal(clean)
	if err != nil {
		t.Fatal(err)
	}

	assertNoCanary(t, "sanitized result", data)

	// The caller's result is untouched.
	after, _ := json.Marshal(r)
	if !bytes.Equal(before, after) {
		t.Error("Sanitize modified its argument")
	}

	// What is not secret survives: measurements, names, user names,
	// hosts, the structure of the spec.
	if !reflect.DeepEqual(clean.Phases, r.Phases) || clean.Seed != r.Seed || clean.StartedAt != r.StartedAt {
		t.Error("measurements changed")
	}

	for _, want := range []string{
		`"name":"leaky"`, `"user":"bob"`, `"n":3`, `"api_token":"xxxxx"`, `"password":"xxxxx"`, `"pin":"xxxxx"`,
		`mongodb://bob:xxxxx@h:27017/?authMechanism=PLAIN`, `"kind":"uri"`, `uri: mongodb://bob:xxxxx@h:27017`,
	} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("sanitized result lacks %s", want)
		}
	}

	if got := clean.Server.Samples[0].Collections["user_tokens"]["count"]; got != 7 {
		t.Errorf("statistics of collection user_tokens: count %d, want 7", got)
	}

	if errs := clean.Check(); len(errs) > 0 {
		t.Errorf("sanitized result fails Check: %v", errs)
	}

	// Idempotent.
	again, err := Sanitize(clean)
	if err != nil {
		t.Fatal(err)
	}

	data2, _ := json.Marshal(again)
	if !bytes.Equal(data, data2) {
		t.Error("sanitizing twice changes the result")
	}
}

func TestWriteFileSanitizes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := WriteFile(path, leakyResult(t)); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	assertNoCanary(t, path, data)

	back, err := Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}

	if errs := back.Check(); len(errs) > 0 {
		t.Errorf("written file fails Check: %v", errs)
	}
}

// TestReadFileSanitizesOldFiles reads a file written without masking (as an
// older mongobench did) and finds nothing secret in what it returns.
func TestReadFileSanitizesOldFiles(t *testing.T) {
	data, err := json.MarshalIndent(leakyResult(t), "", "  ")
	if err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(t.TempDir(), "old.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}

	r, err := Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}

	back, _ := json.Marshal(r)
	assertNoCanary(t, "result read from an unmasked file", back)
}

// TestSanitizeKeepsSpecOrder checks that the sanitized spec keeps the order
// of its keys, which the report shows as written.
func TestSanitizeKeepsSpecOrder(t *testing.T) {
	type spec struct {
		Name     string `json:"name"`
		Database string `json:"database"`
		Seed     int    `json:"seed"`
	}

	r := buildResult(t)
	r.Workload.Spec = &spec{Name: "z", Database: "a", Seed: 1}

	clean, err := Sanitize(r)
	if err != nil {
		t.Fatal(err)
	}

	got, _ := json.Marshal(clean.Workload.Spec)
	if want := `{"name":"z","database":"a","seed":1}`; string(got) != want {
		t.Errorf("spec %s, want %s", got, want)
	}

	if !strings.Contains(string(got), `"seed":1`) {
		t.Error("numbers changed")
	}
}

// TestSanitizeMasksSecretParams masks the value and default of parameters
// declared secret or named like one wherever they were substituted (a
// target's connection string, a filter, explain's command, the status
// reason, an error key), and a numeric one in the spec, while a short
// value leaves the results' timestamps intact and other parameters stay.
func TestSanitizeMasksSecretParams(t *testing.T) {
	const token, tenant, pin = "Tok-Param-quux", "Tenant-Param-corge", "15"

	r := buildResult(t)
	r.Workload.Spec = map[string]any{
		"params": []any{
			map[string]any{"name": "api_token", "type": "string", "default": "Default-grault", "value": token, "set": true},
			map[string]any{"name": "tenant", "type": "string", "default": "nobody", "value": tenant, "set": true, "secret": true},
			map[string]any{"name": "pin", "type": "int", "default": pin, "value": pin, "secret": true},
			map[string]any{"name": "label", "type": "string", "default": "plain-label", "value": "plain-label"},
		},
		"targets":    []any{map[string]any{"uri": "mongodb://h/?appName=" + token + "&x=" + tenant}},
		"operations": []any{map[string]any{"filter": map[string]any{"note": "of " + tenant, "pin": 15, "l": "plain-label"}}},
	}
	r.Workload.Source = "params:\n  api_token: Default-grault\n"
	r.StartedAt = time.Date(2026, 3, 15, 15, 15, 15, 0, time.UTC) // "15" is a secret value
	r.StatusReason = "server said: bad appName " + url.QueryEscape(token)
	r.Explain = []Explain{{Operation: "find", Command: `{"find":"c","filter":{"note":"of ` + tenant + `"}}`}}

	clean, err := Sanitize(r)
	if err != nil {
		t.Fatal(err)
	}

	data, err := Marshal(clean)
	if err != nil {
		t.Fatal(err)
	}

	for _, leak := range []string{token, tenant, "Param", "Default-grault", "quux", "corge"} {
		if bytes.Contains(data, []byte(leak)) {
			t.Errorf("the results hold %q", leak)
		}
	}

	for _, want := range []string{`"pin": "xxxxx"`, `"l": "plain-label"`, `appName=xxxxx`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the results lack %s", want)
		}
	}

	if !clean.StartedAt.Equal(r.StartedAt) {
		t.Errorf("started_at %v, want %v kept", clean.StartedAt, r.StartedAt)
	}

	again, err := Sanitize(clean)
	if err != nil {
		t.Fatal(err)
	}

	if data2, err := Marshal(again); err != nil || !bytes.Equal(data, data2) {
		t.Errorf("sanitizing twice changes the results (%v)", err)
	}
}
