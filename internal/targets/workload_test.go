package targets_test

import (
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// targetsWorkload is a minimal workload followed by the given targets.
func targetsWorkload(list string) string {
	return `name: t
database: bench
collections: [{name: c}]
run: {max_operations: 1}
operations:
  - {name: ins, op: insertOne, collection: c, document: {a: 1}}
targets:
` + list
}

// TestWorkloadTargetsValidated checks that a workload's targets are
// validated by the registry of target kinds up front (Parse, then
// CheckTargets with Validate, as bench.Compile does), each problem named by
// file, line and field, and that a workload file cannot name a program to
// run.
func TestWorkloadTargetsValidated(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		targets string
		want    string // the one error expected; "" for none
	}{
		{"valid", "  - {kind: embedded}\n  - {kind: uri, name: prod, uri: 'mongodb+srv://u:p@h/'}\n" +
			"  - {kind: ferretdb-postgres, settings: {synchronous_commit: off, shared_buffers: 128MB}}\n" +
			"  - {kind: mongod, mongod: {replica_set: 3, args: [--quiet, --slowms=50]}}\n", ""},
		{
			"unknown kind", "  - {kind: sqlite}\n",
			`w.yaml:8:12: targets[0].kind: unknown target kind "sqlite" (want embedded, embedded-memory, ferretdb-postgres, mongod or uri)`,
		},
		{
			"http uri", "  - kind: uri\n    uri: http://user:secret@host/\n",
			`w.yaml:9:10: targets[0].uri: the connection string has scheme "http://"; it must start with mongodb:// or mongodb+srv://`,
		},
		{
			"setting name", "  - kind: ferretdb-postgres\n    settings:\n      fsync: off\n      Work-Mem: 4MB\n",
			`w.yaml:11:17: targets[0].settings.Work-Mem: invalid PostgreSQL setting name "Work-Mem": use lower-case letters, digits, '_' and '.'`,
		},
		{
			"program-running setting", "  - kind: ferretdb-postgres\n    settings:\n      archive_command: 'sh -c evil'\n",
			`w.yaml:10:24: targets[0].settings.archive_command: PostgreSQL setting "archive_command" is not one mongobench lets a target change (see docs/security.md for the list)`,
		},
		{
			"newline in value", "  - kind: ferretdb-postgres\n    settings:\n      work_mem: \"4MB\\nfsync = off\"\n",
			`w.yaml:10:17: targets[0].settings.work_mem: PostgreSQL setting work_mem: the value must be one line without quotes, backslashes or control characters`,
		},
		{
			"quote in value", "  - kind: ferretdb-postgres\n    settings:\n      work_mem: \"4MB'\"\n",
			`w.yaml:10:17: targets[0].settings.work_mem: PostgreSQL setting work_mem: the value must be one line without quotes, backslashes or control characters`,
		},
		{
			"mongod binary", "  - kind: mongod\n    mongod:\n      binary: ../../evil.sh\n      args: [--quiet]\n",
			`w.yaml:10:15: targets[0].mongod.binary: a workload file cannot name a program to run; give the mongod binary on the command line with --mongod-binary (or the environment variable MONGOBENCH_MONGOD), or put mongod on PATH`,
		},
		{
			"mongod args", "  - kind: mongod\n    mongod:\n      args: [--quiet, --config=/etc/evil.conf]\n",
			`w.yaml:10:23: targets[0].mongod.args[1]: mongod argument "--config" is not one mongobench passes on`,
		},
		{
			"settings on mongod", "  - kind: mongod\n    settings: {fsync: off}\n",
			`w.yaml:9:15: targets[0].settings: settings apply to ferretdb-postgres targets (PostgreSQL settings), not to mongod targets`,
		},
		{
			"same label twice", "  - {kind: embedded}\n  - {kind: embedded}\n",
			`w.yaml:9:5: targets[1].name: target "embedded" is named twice; give each a name`,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, errs := workload.Parse("w.yaml", []byte(targetsWorkload(tt.targets)))
			if len(errs) == 0 {
				errs = spec.CheckTargets(targets.Validate)
			}

			switch {
			case tt.want == "" && len(errs) > 0:
				t.Fatalf("errors %v, want none", errs)
			case tt.want == "":
				return
			case len(errs) != 1:
				t.Fatalf("errors %v, want one: %s", errs, tt.want)
			case !strings.HasPrefix(errs[0].Error(), tt.want):
				t.Errorf("error\n got %s\nwant %s", errs[0], tt.want)
			}

			if strings.Contains(errs[0].Error(), "secret") {
				t.Errorf("error shows the password: %v", errs[0])
			}
		})
	}
}
