package cli

import (
	"bytes"
	"net/url"
	"os"
	"strings"
	"testing"
)

// Canary passwords: one plain, one with an '@' (percent-encoded where it is
// used in a valid connection string, raw where the string must be refused).
const (
	canaryPlain = "Canary-S3cr3t-xyzzy"
	canaryAt    = "Canary@S3cr3t-plugh"
)

// Canary values of secret workload parameters, given with --set: two
// named like secrets, one declared secret: true.
const (
	canaryParamPW     = "Canary-P4ramPw-wibble"
	canaryParamToken  = "Canary-T0ken/wobble" // '/' is percent-encoded in a query
	canaryParamTenant = "Canary-Tenant-fnord"
)

// canaryFragments are the byte strings whose presence anywhere means a
// leak: the canaries, their percent-encoded forms and distinctive parts of
// them, so that half a password counts as a leak too.
var canaryFragments = []string{
	canaryPlain, canaryAt, url.QueryEscape(canaryAt), url.PathEscape(canaryAt), "S3cr3t", "xyzzy", "plugh",
	canaryParamPW, canaryParamToken, canaryParamTenant, url.QueryEscape(canaryParamToken),
	"P4ramPw", "wibble", "T0ken", "wobble", "fnord",
}

// canaryParamsWorkload declares secret parameters and substitutes them into
// a load document, a query filter (which explain quotes) and, in its
// matrix form, a target's connection string: the password and appName.
const canaryParamsWorkload = `name: canary-params
database: mongobench_cli_canary_params
seed: 7
params:
  db_password: {type: string, default: ""}
  api_token: none
  tenant: {type: string, default: nobody, secret: true}
  plan: {type: string, default: basic, values: [basic, pro], secret: true}
collections:
  - name: users
load:
  - collection: users
    documents: 20
    document: {user: bob, note: "token ${api_token} of ${tenant}", pw: "${db_password}", plan: "${plan}"}
run:
  concurrency: 1
  duration: 1s
  interval: 250ms
operations:
  - name: login
    op: find
    collection: users
    filter: {user: bob, pw: "${db_password}", note: "token ${api_token} of ${tenant}"}
    limit: 1
`

// canaryParamsTargets puts the parameters into a matrix's connection
// strings, where only the password has a form redact.URI recognises.
const canaryParamsTargets = `targets:
  - name: params
    kind: uri
    uri: "mongodb://bench:${db_password}@HOSTPORT/?authMechanism=PLAIN&appName=${api_token}"
  - name: tenant
    kind: uri
    uri: "mongodb://HOSTPORT/?appName=${tenant}"
`

// canaryWorkload plants the plain canary in the workload's comments, vars,
// load documents, query filter (so that explain's command and answer hold
// it) and, for the matrix, in a target URI written out and in one that
// refers to an environment variable.
const canaryWorkload = `# canary: secrets planted for the leak test.
# password: Canary-S3cr3t-xyzzy
# was: mongodb://bench:Canary-S3cr3t-xyzzy@old-host/
name: canary
database: mongobench_cli_canary
seed: 7
vars:
  api_token: Canary-S3cr3t-xyzzy
collections:
  - name: users
load:
  - collection: users
    documents: 20
    document: {user: bob, password: Canary-S3cr3t-xyzzy}
run:
  concurrency: 1
  duration: 1s
  interval: 250ms
operations:
  - name: login
    op: find
    collection: users
    filter: {user: bob, password: Canary-S3cr3t-xyzzy}
    limit: 1
`

// canaryTargets are the matrix's targets: the password written out, and
// taken from CANARY_PW.
const canaryTargets = `targets:
  - name: literal
    kind: uri
    uri: mongodb://bench:Canary-S3cr3t-xyzzy@HOSTPORT/?authMechanism=PLAIN
  - name: fromenv
    kind: uri
    uri: "mongodb://bench:${CANARY_PW}@HOSTPORT/?authMechanism=PLAIN"
`

// canaryRun is one in-process invocation whose streams are scanned.
type canaryRun struct {
	args           []string
	stdout, stderr string
	code           int
}

// runWithEnv runs mongobench with args and the given environment.
func runWithEnv(t *testing.T, env map[string]string, args ...string) canaryRun {
	t.Helper()

	r := newCLIRun(args...)
	r.st.Getenv = func(k string) string {
		if k == "CI" {
			return "1"
		}

		return env[k]
	}

	code := r.wait(t, r.start(), mainTimeout)

	return canaryRun{args: args, stdout: r.stdout.String(), stderr: r.stderr.String(), code: code}
}

// assertNoFragment fails when data holds any canary fragment, in any case
// (host names are lower-cased in resolver messages).
func assertNoFragment(t *testing.T, what string, data []byte) {
	t.Helper()

	lower := bytes.ToLower(data)

	for _, f := range canaryFragments {
		if i := bytes.Index(lower, bytes.ToLower([]byte(f))); i >= 0 {
			lo, hi := max(0, i-100), min(len(data), i+len(f)+100)
			t.Errorf("%s holds %q: …%s…", what, f, data[lo:hi])
		}
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()

	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestResolveURIFlag pins the precedence: --uri, else MONGOBENCH_URI, each
// with ${NAME} expanded; a missing variable names the source.
func TestResolveURIFlag(t *testing.T) {
	env := map[string]string{"MONGOBENCH_URI": "mongodb://env-host/", "PW": "pw"}

	for _, tc := range []struct {
		flag, envURI, want, err string
	}{
		{flag: "mongodb://flag-host/", envURI: "mongodb://env-host/", want: "mongodb://flag-host/"},
		{envURI: "mongodb://env-host/", want: "mongodb://env-host/"},
		{want: ""},
		{flag: "mongodb://u:${PW}@flag-host/", want: "mongodb://u:pw@flag-host/"},
		{envURI: "mongodb://u:${PW}@env-host/", want: "mongodb://u:pw@env-host/"},
		{flag: "mongodb://u:${NOPE}@h/", err: "--uri: environment variable NOPE is not set"},
		{envURI: "mongodb://u:${NOPE}@h/", err: "MONGOBENCH_URI: environment variable NOPE is not set"},
	} {
		env["MONGOBENCH_URI"] = tc.envURI
		st := &State{Getenv: func(k string) string { return env[k] }}
		f := &runFlags{uri: tc.flag}

		err := resolveURIFlag(st, f)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("flag %q, env %q: error %v, want %q", tc.flag, tc.envURI, err, tc.err)
		case tc.err == "" && (err != nil || f.uri != tc.want):
			t.Errorf("flag %q, env %q: %q, %v; want %q", tc.flag, tc.envURI, f.uri, err, tc.want)
		}
	}
}
