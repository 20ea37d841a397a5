package targets

import (
	"strings"
	"testing"
)

func TestMongodArgsAllowList(t *testing.T) {
	tests := []struct {
		arg  string
		want string // "" for valid
	}{
		{"--quiet", ""},
		{"--slowms=50", ""},
		{"--wiredTigerCollectionBlockCompressor=zstd", ""},
		{"--setParameter=diagnosticDataCollectionEnabled=false", ""},
		{"--config=/etc/evil.conf", `mongod argument "--config" is not one mongobench passes on`},
		{"--logpath=/etc/passwd", `mongod argument "--logpath" is not one mongobench passes on`},
		{"--keyFile=/root/key", `mongod argument "--keyFile" is not one mongobench passes on`},
		{"/tmp/x", `mongod argument "/tmp/x" is not one mongobench passes on`},
		{"--bind_ip_all", `mongod argument "--bind_ip_all" is not allowed in arg: mongobench binds to 127.0.0.1 only`},
		{"--quiet=1", "mongod argument --quiet takes no value"},
		{"--slowms", "mongod argument --slowms needs a value, written as one argument: --slowms=VALUE"},
		{"--slowms=1;x", `mongod argument --slowms takes a number, got "1;x"`},
		{"--wiredTigerJournalCompressor=../x", `mongod argument --wiredTigerJournalCompressor takes a word of letters, digits and '_', got "../x"`},
		{"--setParameter=authenticationMechanisms=PLAIN", `mongod parameter "authenticationMechanisms" is not one mongobench sets`},
		{"--setParameter=ttlMonitorEnabled=a b", `mongod parameter ttlMonitorEnabled takes a number, true or false, got "a b"`},
	}

	for _, tt := range tests {
		err := Validate(TargetSpec{Kind: KindMongod, Mongod: &MongodSpec{Args: []string{tt.arg}}})

		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: Validate() = %v, want nil", tt.arg, err)
		case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
			t.Errorf("%q: Validate() = %v, want %s…", tt.arg, err, tt.want)
		}
	}
}
