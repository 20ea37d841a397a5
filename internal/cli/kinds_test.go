package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// kindsWorkload writes a one-operation workload with the given targets
// section and returns its path.
func kindsWorkload(t *testing.T, targetList string) string {
	t.Helper()

	text := `name: kinds
database: mongobench_cli_kinds
collections: [{name: c}]
run: {max_operations: 5}
operations:
  - {name: ins, op: insertOne, collection: c, document: {a: 1}}
` + targetList

	path := filepath.Join(t.TempDir(), "kinds.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	return path
}

// TestWorkloadCannotRunPrograms checks that a workload naming a mongod
// binary is refused by validate and by run before anything starts, with
// the flag to use instead, and that the program is never executed.
func TestWorkloadCannotRunPrograms(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")

	evil := filepath.Join(dir, "evil.sh")
	if err := os.WriteFile(evil, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}

	path := kindsWorkload(t, "targets:\n  - kind: mongod\n    mongod:\n      binary: "+evil+"\n      args: [--quiet]\n")

	want := path + ":10:15: targets[0].mongod.binary: a workload file cannot name a program to run; give the mongod binary on the command line with --mongod-binary"

	for _, args := range [][]string{{"validate", path}, {"run", path, "--quiet"}} {
		code, _, stderr := runMain(t, args...)
		if code != ExitBadInput || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 2 and %q", args, code, stderr, want)
		}

		if strings.Contains(stderr, "Target ") {
			t.Errorf("%v: a target was started:\n%s", args, stderr)
		}
	}

	// Free-form mongod arguments are refused too.
	path = kindsWorkload(t, "targets:\n  - kind: mongod\n    mongod: {args: [--config=/etc/evil.conf]}\n")
	if code, _, stderr := runMain(t, "validate", path); code != ExitBadInput || !strings.Contains(stderr, `targets[0].mongod.args[0]: mongod argument "--config" is not one mongobench passes on`) {
		t.Errorf("--config in args: exit %d, stderr:\n%s", code, stderr)
	}

	if _, err := os.Stat(marker); err == nil {
		t.Error("the workload's program was run")
	}
}

// TestTargetsCheckedUpFront checks that run refuses bad targets before it
// starts any: a connection string that is not mongodb://, a PostgreSQL
// setting that is not allowed or has a newline.
func TestTargetsCheckedUpFront(t *testing.T) {
	tests := []struct {
		name, targets string
		flags         []string
		want          string
	}{
		{
			"http uri", "targets:\n  - {kind: embedded}\n  - {kind: uri, uri: 'http://u:secret@h/'}\n", nil,
			`:9:22: targets[1].uri: the connection string has scheme "http://"`,
		},
		{
			"setting", "targets:\n  - kind: ferretdb-postgres\n    settings: {archive_command: 'sh -c x'}\n", nil,
			`:9:33: targets[0].settings.archive_command: PostgreSQL setting "archive_command" is not one mongobench lets a target change`,
		},
		{
			"newline", "targets:\n  - kind: ferretdb-postgres\n    settings: {work_mem: \"1MB\\nfsync = off\"}\n", nil,
			`:9:26: targets[0].settings.work_mem: PostgreSQL setting work_mem: the value must be one line`,
		},
		{
			"flag", "",
			[]string{"--target", "embedded", "--target", "uri:http://u:secret@h/"},
			`--target "uri:http://u:xxxxx@h/": the connection string has scheme "http://"`,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := kindsWorkload(t, tt.targets)

			code, _, stderr := runMain(t, append([]string{"run", path, "--quiet"}, tt.flags...)...)
			if code != ExitBadInput || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, tt.want)
			}

			if strings.Contains(stderr, "Target ") || strings.Contains(stderr, "secret") {
				t.Errorf("a target was started, or the password shown:\n%s", stderr)
			}
		})
	}
}

// TestMongodBinaryFromFlagAndEnvironment checks where a mongod target's
// program comes from: --mongod-binary, else MONGOBENCH_MONGOD, else PATH;
// a --target's own binary= wins. The programs named do not exist, so the
// launch fails naming the one it tried (the launch itself is tested with a
// fake mongod in package target).
func TestMongodBinaryFromFlagAndEnvironment(t *testing.T) {
	path := kindsWorkload(t, "targets:\n  - {kind: mongod}\n")

	tests := []struct {
		name  string
		env   string
		flags []string
		want  string
	}{
		{"flag", "", []string{"--mongod-binary", "/nonexistent/flag-mongod"}, `mongod binary "/nonexistent/flag-mongod" cannot be run`},
		{"environment", "/nonexistent/env-mongod", nil, `mongod binary "/nonexistent/env-mongod" cannot be run`},
		{"flag over environment", "/nonexistent/env-mongod", []string{"--mongod-binary", "/nonexistent/flag-mongod"}, `mongod binary "/nonexistent/flag-mongod" cannot be run`},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCLIRun(append([]string{"run", path, "--quiet"}, tt.flags...)...)

			getenv := r.st.Getenv
			r.st.Getenv = func(k string) string {
				if k == workload.MongodBinaryEnv {
					return tt.env
				}

				return getenv(k)
			}

			code := r.wait(t, r.start(), mainTimeout)
			if stderr := r.stderr.String(); code == ExitOK || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant a failure naming %s", code, stderr, tt.want)
			}
		})
	}
}

// TestReportRefusesEmptyResults checks that report refuses a results file
// whose phases are null, and a matrix without trials.
func TestReportRefusesEmptyResults(t *testing.T) {
	dir := t.TempDir()

	files := map[string]*result.Result{
		"null-phases.json": {Status: result.StatusCompleted, Target: result.Target{Kind: targets.KindEmbedded}},
		"no-trials.json":   {Status: result.StatusCompleted, ResultKind: result.KindMatrix, Matrix: &result.Matrix{Rounds: 1}},
	}

	for name, r := range files {
		path := filepath.Join(dir, name)
		if err := result.WriteFile(path, r); err != nil {
			t.Fatal(err)
		}

		for _, args := range [][]string{{"report", path, "-o", filepath.Join(dir, "r.html")}, {"report", path, "--csv", filepath.Join(dir, "csv")}} {
			code, _, stderr := runMain(t, args...)
			if code != ExitBadInput || !strings.Contains(stderr, "results file "+path+": the ") {
				t.Errorf("%v: exit %d, stderr:\n%s", args, code, stderr)
			}
		}
	}

	if _, err := os.Stat(filepath.Join(dir, "r.html")); err == nil {
		t.Error("a report was written")
	}
}
