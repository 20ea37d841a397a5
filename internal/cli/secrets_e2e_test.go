//go:build e2e

package cli

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestNoSecretWrittenAnywhere plants canary passwords in --uri, in a
// workload's targets[].uri, in environment variables (${VAR} and
// MONGOBENCH_URI) and in the workload itself, runs every output path
// in-process against a real server, and scans every byte written (all files
// in the output directory, standard output and standard error) for them.
//
// The server is an embedded FerretDB (SQLite), started as a user's server
// would be. It accepts the PLAIN mechanism with any user name and password
// (it refuses SCRAM, and the wiretest null server answers no saslStart at
// all), so authMechanism=PLAIN makes the driver really send the password;
// the test also checks that the driver's options carry it.
func TestNoSecretWrittenAnywhere(t *testing.T) {
	t.Parallel()

	srv := startServer(t)

	u, err := url.Parse(srv.URI())
	if err != nil {
		t.Fatal(err)
	}

	hostPort := u.Host
	auth := func(password string) string {
		return "mongodb://bench:" + password + "@" + hostPort + "/?authMechanism=PLAIN"
	}

	in, out := t.TempDir(), t.TempDir()
	path := func(name string) string { return filepath.Join(out, name) }

	single := filepath.Join(in, "canary.yaml")
	matrix := filepath.Join(in, "canary-matrix.yaml")
	unset := filepath.Join(in, "canary-unset.yaml")
	badKind := filepath.Join(in, "canary-bad.yaml")

	writeFile(t, single, canaryWorkload)
	writeFile(t, matrix, canaryWorkload+strings.ReplaceAll(canaryTargets, "HOSTPORT", hostPort))
	writeFile(t, unset, canaryWorkload+"targets:\n  - kind: uri\n    uri: mongodb://bench:${CANARY_UNSET}@"+hostPort+"/\n")
	writeFile(t, badKind, canaryWorkload+"targets:\n  - kind: mongodb://bench:"+canaryPlain+"@"+hostPort+"/\n")

	encodedAt := url.QueryEscape(canaryAt)
	env := map[string]string{"CANARY_PW": canaryPlain, "CANARY_PW_AT": encodedAt}

	// The connection strings really carry the passwords to the driver.
	for uri, want := range map[string]string{auth(canaryPlain): canaryPlain, auth(encodedAt): canaryAt} {
		if co := options.Client().ApplyURI(uri); co.Auth == nil || co.Auth.Password != want {
			t.Fatalf("driver options for %s carry no password %q", uri, want)
		}
	}

	var runs []canaryRun

	expect := func(code int, env map[string]string, args ...string) canaryRun {
		t.Helper()

		r := runWithEnv(t, env, args...)
		runs = append(runs, r)

		if r.code != code {
			t.Errorf("mongobench %s: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s",
				strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
		}

		assertNoStackTrace(t, r.stderr)

		return r
	}

	// A single target: password in --uri, HTML report next to the results.
	expect(ExitOK, nil, "run", single, "--quiet", "--uri", auth(canaryPlain), "--out", path("plain.json"), "--report")

	// The password with '@' through ${VAR} in --uri.
	expect(ExitOK, env, "run", single, "--quiet", "--uri", auth("${CANARY_PW_AT}"), "--out", path("at.json"))

	// The password with '@' through MONGOBENCH_URI (no --uri).
	expect(ExitOK, map[string]string{"MONGOBENCH_URI": auth(encodedAt)},
		"run", single, "--quiet", "--out", path("env.json"), "--report")

	// The matrix: two workload targets (written out, and ${CANARY_PW}) and
	// a --target with ${CANARY_PW_AT}; Markdown and HTML too.
	expect(ExitOK, env, "run", matrix, "--quiet", "--out", path("matrix.json"), "--markdown", path("matrix.md"), "--report",
		"--target", "uri:name=flag,"+auth("${CANARY_PW_AT}"))

	// Reports and comparisons of the files.
	expect(ExitOK, nil, "report", path("plain.json"), path("env.json"), path("matrix.json"), "-o", path("report.html"))
	expect(ExitOK, nil, "report", path("plain.json"), path("at.json"), "--csv", path("csv"))
	expect(ExitOK, nil, "compare", path("plain.json"), path("at.json"), path("env.json"), "--markdown", path("compare.md"))
	expect(ExitOK, nil, "validate", single, matrix)

	// Secret workload parameters given with --set: a run with its run log,
	// HTML and Markdown; a matrix whose connection strings hold them; the
	// reports, finish and merge of what the runs wrote.
	params := filepath.Join(in, "canary-params.yaml")
	paramsMatrix := filepath.Join(in, "canary-params-matrix.yaml")

	writeFile(t, params, canaryParamsWorkload)
	writeFile(t, paramsMatrix, canaryParamsWorkload+strings.ReplaceAll(canaryParamsTargets, "HOSTPORT", hostPort))

	sets := []string{"--set", "db_password=" + canaryParamPW, "--set", "api_token=" + canaryParamToken, "--set", "tenant=" + canaryParamTenant}

	expect(ExitOK, nil, append([]string{"run", params, "--uri", srv.URI(), "--out", path("params.json"), "--report"}, sets...)...)
	expect(ExitOK, nil, append([]string{"run", paramsMatrix, "--quiet", "--out", path("params-matrix.json"), "--report"}, sets...)...)
	expect(ExitOK, nil, append([]string{
		"run", params, "--quiet", "--uri", srv.URI(), "--out", path("params-shard.json"),
		"--shard", "0/1",
	}, sets...)...)
	expect(ExitOK, nil, "report", path("params.json"), path("params-matrix.json"), "-o", path("params-report.html"), "--csv", path("params-csv"))
	expect(ExitOK, nil, "finish", path("params.runlog.jsonl"), "-o", path("params-finished.json"))
	expect(ExitOK, nil, "finish", path("params.runlog.jsonl"), "-o", "-")
	expect(ExitOK, nil, "merge", path("params-shard.runlog.jsonl"), "-o", path("params-merged.json"))
	expect(ExitOK, nil, "compare", path("params.json"), path("params-finished.json"), "--markdown", path("params-compare.md"))
	expect(ExitBadInput, nil, "run", params, "--quiet", "--uri", srv.URI(), "--out", path("x6.json"), "--set", "plan="+canaryParamTenant)
	expect(ExitBadInput, nil, "run", params, "--quiet", "--uri", srv.URI(), "--out", path("x7.json"), "--set", "api_token2="+canaryParamToken)

	// Failure paths, whose messages quote connection strings and values.
	expect(ExitBadInput, nil, "mongodb://bench:"+canaryPlain+"@"+hostPort+"/") // a URI where the command goes
	expect(ExitBadInput, nil, "validate", badKind)
	expect(ExitBadInput, nil, "run", single, "--quiet", "--out", path("x1.json"),
		"--uri", "mongodb://bench:"+canaryAt+"/x@"+hostPort+"/")
	expect(ExitBadInput, nil, "run", single, "--quiet", "--out", path("x2.json"),
		"--target", "uri:mongodb://bench:"+canaryAt+"@"+hostPort+"/")
	expect(ExitFailed, nil, "run", single, "--quiet", "--out", path("x3.json"),
		"--uri", "mongodb://bench:"+canaryPlain+"@"+hostPort+"/") // SCRAM, which FerretDB refuses
	expect(ExitFailed, nil, "run", single, "--quiet", "--out", path("x4.json"),
		"--uri", "mongodb://bench:"+canaryPlain+"@"+closedPort(t)+"/?serverSelectionTimeoutMS=500")

	r := expect(ExitBadInput, nil, "run", unset, "--quiet", "--out", path("x5.json"))
	if want := fmt.Sprintf("%s:%d:", unset, strings.Count(canaryWorkload, "\n")+3); !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "CANARY_UNSET") {
		t.Errorf("unset variable: stderr does not name the variable and %s:\n%s", want, r.stderr)
	}

	// Every expected file exists, so that the scan below reads them.
	for _, name := range []string{
		"plain.json", "plain.html", "at.json", "env.json", "env.html", "matrix.json", "matrix.md", "matrix.html",
		"report.html", "csv/summary.csv", "csv/intervals.csv", "compare.md",
		"params.json", "params.runlog.jsonl", "params.html", "params-matrix.json", "params-matrix.html",
		"params-shard.json", "params-shard.runlog.jsonl", "params-report.html", "params-csv/summary.csv",
		"params-csv/intervals.csv", "params-finished.json", "params-merged.json", "params-compare.md",
	} {
		if st, err := os.Stat(path(name)); err != nil || st.Size() == 0 {
			t.Errorf("%s was not written (%v)", name, err)
		}
	}

	// The report holds the masked workload source, so the scan is not
	// passing because the source was left out.
	if html, err := os.ReadFile(path("plain.html")); err == nil &&
		!bytes.Contains(html, []byte("api_token: xxxxx")) {
		t.Error("plain.html does not show the masked workload source")
	}

	// The saved workload keeps its ${NAME} reference as written.
	if res, err := os.ReadFile(path("matrix.json")); err == nil &&
		!bytes.Contains(res, []byte(`mongodb://bench:${CANARY_PW}@`+hostPort)) {
		t.Error("matrix.json does not keep ${CANARY_PW} in the workload source")
	}

	scanned := 0

	err = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}

		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}

		scanned++

		assertNoFragment(t, p, data)

		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	if scanned < 12 {
		t.Errorf("scanned only %d files", scanned)
	}

	for _, r := range runs {
		what := "mongobench " + strings.Join(r.args, " ")
		assertNoFragment(t, what+": stdout", []byte(r.stdout))
		assertNoFragment(t, what+": stderr", []byte(r.stderr))
	}
}
