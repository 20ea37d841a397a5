package targets

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPostgreSQLSettingsValidate(t *testing.T) {
	tests := []struct {
		name, value string
		want        string // "" for valid
	}{
		{"synchronous_commit", "off", ""},
		{"shared_buffers", "256MB", ""},
		{"default_transaction_isolation", "repeatable read", ""},
		{"checkpoint_completion_target", "0.9", ""},
		{"Fsync", "off", `invalid PostgreSQL setting name "Fsync": use lower-case letters, digits, '_' and '.'`},
		{"work mem", "4MB", `invalid PostgreSQL setting name "work mem": use lower-case letters, digits, '_' and '.'`},
		{"port", "5433", `PostgreSQL setting "port" is managed by mongobench and cannot be changed`},
		{"archive_command", "rm -rf /", `PostgreSQL setting "archive_command" is not one mongobench lets a target change (see docs/security.md for the list)`},
		{"shared_preload_libraries", "evil", `PostgreSQL setting "shared_preload_libraries" is not one mongobench lets a target change (see docs/security.md for the list)`},
		{"no_such_setting", "1", `PostgreSQL setting "no_such_setting" is not one mongobench lets a target change (see docs/security.md for the list)`},
		{"work_mem", "", "PostgreSQL setting work_mem has no value"},
	}

	for _, bad := range []string{"4MB\nfsync = off", "4MB\r", "4MB'", `4"MB`, `4MB\`, "4\x00MB", "4\tMB"} {
		tests = append(tests, struct{ name, value, want string }{
			"work_mem", bad,
			"PostgreSQL setting work_mem: the value must be one line without quotes, backslashes or control characters",
		})
	}

	for _, tt := range tests {
		err := Validate(TargetSpec{Kind: KindFerretDBPostgres, Settings: map[string]string{tt.name: tt.value}})

		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s=%q: Validate() = %v, want nil", tt.name, tt.value, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want):
			t.Errorf("%s=%q: Validate() = %v, want %s", tt.name, tt.value, err, tt.want)
		}
	}
}

// TestPostgreSQLSettingsExist checks the allowed settings against the list
// the installed PostgreSQL server describes, so that the list holds no
// typo. It needs PostgreSQL's server binary.
func TestPostgreSQLSettingsExist(t *testing.T) {
	postgres := ""
	if dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(dirs) > 0 {
		postgres = dirs[len(dirs)-1]
	} else if p, err := exec.LookPath("postgres"); err == nil {
		postgres = p
	} else {
		if os.Getenv("CI") != "" {
			t.Fatal("PostgreSQL's server binary is required under CI")
		}

		t.Skip("PostgreSQL's server binary is not installed")
	}

	out, err := exec.Command(postgres, "--describe-config").Output()
	if err != nil {
		t.Fatalf("%s --describe-config: %v", postgres, err)
	}

	var known []string
	for line := range strings.Lines(string(out)) {
		name, _, _ := strings.Cut(line, "\t")
		known = append(known, name)
	}

	for _, s := range PostgreSQLSettings() {
		if !slices.Contains(known, s) {
			t.Errorf("allowed setting %q is not a PostgreSQL setting", s)
		}
	}
}
