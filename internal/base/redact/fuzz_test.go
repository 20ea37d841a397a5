package redact

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// FuzzURIParts builds connection strings around a fuzzed password (and fuzzed
// user name and options) and checks that neither URI nor Error ever lets
// the password through, raw or percent-decoded.
func FuzzURIParts(f *testing.F) {
	f.Add("u", "s3cretPW", "localhost:27017", "authSource=admin")
	f.Add("user", "p@ss/w?rd", "h1,h2", "replicaSet=rs&tls=true")
	f.Add("", "only:colon", "host", "")
	f.Add("a%40b", "%70%77%21", "h", "password=other")
	f.Add("u", "pw&x=1", "h", "authMechanismProperties=AWS_SESSION_TOKEN:tok")

	f.Fuzz(func(t *testing.T, user, password, hosts, query string) {
		// Host lists never hold these, and an '@' in the options makes the
		// password's end ambiguous: the redactor then masks the whole
		// user information as one secret (FuzzURI covers that case).
		// A user name holds none of ":@/?" unescaped, or the password is not
		// where this test puts it.
		if strings.ContainsAny(hosts, "@/?") || strings.Contains(query, "@") || strings.ContainsAny(user, ":@/?") {
			return
		}

		uri := "mongodb://" + user + ":" + password + "@" + hosts + "/db"
		if query != "" {
			uri += "?" + query
		}

		out := URI(uri)
		msg := Error(errors.New("connecting to "+uri+" failed; password "+password), uri)

		for _, secret := range forms(password) {
			// A password that occurs in the rest of the string (or in the
			// mask) cannot be told apart from it there.
			rest := "mongodb://" + user + ":" + Mask + "@" + hosts + "/db?" + query + " connecting to failed; password "
			if len(secret) < 3 || strings.Contains(rest, secret) {
				continue
			}

			if strings.Contains(out, secret) {
				t.Fatalf("URI(%q) = %q keeps the password %q", uri, out, secret)
			}

			if strings.Contains(msg, secret) {
				t.Fatalf("Error with %q = %q keeps the password %q", uri, msg, secret)
			}
		}

		if again := URI(out); again != out {
			t.Fatalf("URI is not idempotent: %q, then %q", out, again)
		}
	})
}

// forms returns the password as written and percent-decoded.
func forms(pw string) []string {
	out := []string{pw}
	if d, err := url.PathUnescape(pw); err == nil && d != pw {
		out = append(out, d)
	}

	if d, err := url.QueryUnescape(pw); err == nil && d != pw {
		out = append(out, d)
	}

	return out
}
