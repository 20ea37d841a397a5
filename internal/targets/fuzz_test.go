package targets

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/base/redact"
)

// passwordInURI matches flags whose PASSWORD stands where a connection
// string's password does.
var passwordInURI = regexp.MustCompile(`^\s*(uri:\s*)?(name=[^,]*,)?mongodb(\+srv)?://[^:/@?]*:PASSWORD@`)

// FuzzParseTargetFlag feeds arbitrary --target values to the parser, with
// the word PASSWORD in them replaced by a fuzzed password: the parser must
// never panic, its errors are one line, and an error never quotes the
// password.
func FuzzParseTargetFlag(f *testing.F) {
	for _, s := range []string{
		"embedded", "embedded-memory", "ferretdb-postgres", "ferretdb-postgres:shared_buffers=128MB,fsync=off",
		"mongod", "mongod:storage_engine=inMemory", "mongod:binary=/usr/bin/mongod,replica_set=true",
		"uri:mongodb://u:PASSWORD@localhost:27017/", "uri:name=prod,mongodb://u:PASSWORD@h1,h2/?replicaSet=rs",
		"uri:mongodb://u:PASSWORD@bad host/", "mongodb://u:PASSWORD@localhost/", "uri:", "x:y", "ferretdb-postgres:,", "",
	} {
		f.Add(s, "s3cretPW")
	}

	f.Fuzz(func(t *testing.T, flag, password string) {
		s := strings.ReplaceAll(flag, "PASSWORD", password)

		_, err := ParseTargetFlag(s)
		if err == nil {
			return
		}

		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Fatalf("error is not one line: %q", msg)
		}

		// Only a password in a connection string's password position is
		// judged, and not one that occurs in the message's own words.
		scaffold := strings.ReplaceAll(flag, "PASSWORD", redact.Mask)
		if len(password) < 4 || !passwordInURI.MatchString(flag) || strings.Contains(scaffold, password) ||
			strings.ContainsAny(password, "\"\\") {
			return
		}

		if strings.Contains(strings.ToLower(msg), strings.ToLower(password)) && !strings.Contains(strings.ToLower(KindList()+scaffold), strings.ToLower(password)) {
			t.Fatalf("the error quotes the password %q: %s", password, msg)
		}
	})
}
