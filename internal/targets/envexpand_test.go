package targets

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestExpandEnv(t *testing.T) {
	env := map[string]string{"PW": "Canary%40S3cr3t", "HOST": "db.example.net:27017", "USER_1": "bob"}
	getenv := func(k string) string { return env[k] }

	for _, tc := range []struct {
		in, want string
	}{
		{"mongodb://h/", "mongodb://h/"},
		{"mongodb://bob:${PW}@h/", "mongodb://bob:Canary%40S3cr3t@h/"},
		{"mongodb://${USER_1}:${PW}@${HOST}/?authSource=admin", "mongodb://bob:Canary%40S3cr3t@db.example.net:27017/?authSource=admin"},
		{"mongodb://bob:pa$$word@h/", "mongodb://bob:pa$$word@h/"},
		{"mongodb://bob:$PW@h/", "mongodb://bob:$PW@h/"},
	} {
		got, err := ExpandEnv(tc.in, getenv)
		if err != nil || got != tc.want {
			t.Errorf("ExpandEnv(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}

	for _, tc := range []struct {
		in, name  string
		malformed bool
	}{
		{"mongodb://bob:${NOPE}@h/", "NOPE", false},
		{"mongodb://bob:${PW}@${MISSING_HOST}/", "MISSING_HOST", false},
		{"mongodb://bob:${Canary-S3cr3t}@h/", "", true},
		{"mongodb://bob:${Canary@h/", "", true},
		{"mongodb://bob:${}@h/", "", true},
	} {
		_, err := ExpandEnv(tc.in, getenv)

		var ee *EnvError
		if !errors.As(err, &ee) || ee.Name != tc.name || ee.Malformed != tc.malformed {
			t.Errorf("ExpandEnv(%q) error %v, want EnvError{%q, malformed %v}", tc.in, err, tc.name, tc.malformed)

			continue
		}

		if tc.name != "" && !strings.Contains(err.Error(), tc.name) {
			t.Errorf("error %q does not name %s", err, tc.name)
		}

		if strings.Contains(err.Error(), "Canary") || strings.Contains(err.Error(), "S3cr3t") {
			t.Errorf("error %q quotes the connection string", err)
		}
	}
}

// TestConnectAmbiguousPassword is the "@ in the password" leak: the driver
// splits at the first '@', so it took "S3cr3t-plugh" for a host and its
// lookup error quoted it. Such strings are now refused before the driver
// sees them, with a message that holds no part of the password.
func TestConnectAmbiguousPassword(t *testing.T) {
	for _, uri := range []string{
		"mongodb://bob:Canary@S3cr3t-plugh/x@127.0.0.1:1/",
		"mongodb://bob:Canary@S3cr3t-plugh@127.0.0.1:1/",
		"mongodb+srv://bob:Canary@S3cr3t-plugh/x@cluster.invalid/",
		"mongodb://bob:Canary/S3cr3t-plugh@127.0.0.1:1/",
		"mongodb://bob:Canary?S3cr3t-plugh@127.0.0.1:1/",
	} {
		_, err := Connect(t.Context(), uri, ConnectOptions{Timeout: time.Second})

		var ue *URIError
		if !errors.As(err, &ue) {
			t.Errorf("Connect(%q): %v, want a URIError", uri, err)

			continue
		}

		for _, frag := range []string{"Canary", "S3cr3t", "plugh"} {
			if strings.Contains(err.Error(), frag) {
				t.Errorf("Connect(%q) error quotes %q: %v", uri, frag, err)
			}
		}

		if !strings.Contains(err.Error(), "%40") {
			t.Errorf("error %q does not say how to write the password", err)
		}
	}
}
