package wireproxy_test

import (
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/targets/wireproxy"
)

// TestUpstreamAddr takes the one server of a URI, and says in one line why
// it cannot stand in front of the others, never quoting the password.
func TestUpstreamAddr(t *testing.T) {
	for _, tc := range []struct {
		uri, want, err string
	}{
		{uri: "mongodb://127.0.0.1:27017/?directConnection=true", want: "127.0.0.1:27017"},
		{uri: "mongodb://u:hunter2secret@db.example:27018/app", want: "db.example:27018"},
		{uri: "mongodb://db.example", want: "db.example:27017"},
		{uri: "mongodb+srv://u:hunter2secret@cluster.example/", err: "mongodb+srv"},
		{uri: "mongodb://u:hunter2secret@a:1,b:2/?replicaSet=rs", err: "names 2 servers"},
		{uri: "mongodb://u:hunter2secret@a:1/?tls=true", err: "TLS"},
		{uri: "mongodb://u:hunter2secret@a:1/?notAnOption=%zz", err: ""},
		{uri: "postgres://u:hunter2secret@a:1/", err: "scheme"},
	} {
		got, err := wireproxy.UpstreamAddr(tc.uri)

		switch {
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.uri, got, err, tc.want)
		case tc.want == "" && err == nil:
			t.Errorf("%s: %q accepted", tc.uri, got)
		case err != nil && (!strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "hunter2secret")):
			t.Errorf("%s: error %q: want it to say %q, without the password", tc.uri, err, tc.err)
		}
	}
}
