package redact

import (
	"strings"
	"testing"
)

// canary is a password that must never survive masking.
const canary = "Canary-S3cr3t-xyzzy"

// assertMasked fails when got still holds any of the secrets, or when want
// is given and differs from got.
func assertMasked(t *testing.T, got, want string, secrets ...string) {
	t.Helper()

	for _, s := range secrets {
		if strings.Contains(got, s) {
			t.Errorf("secret %q survived in:\n%s", s, got)
		}
	}

	if want != "" && got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		secrets []string
	}{
		{
			name: "no secret",
			in:   "cannot reach MongoDB server at localhost:27017 within 5s",
			want: "cannot reach MongoDB server at localhost:27017 within 5s",
		},
		{
			name:    "uri in a message",
			in:      "cannot connect to mongodb://bob:" + canary + "@h:27017/db: auth failed",
			want:    "cannot connect to mongodb://bob:xxxxx@h:27017/db: auth failed",
			secrets: []string{canary},
		},
		{
			name:    "several uris",
			in:      "a mongodb://u:" + canary + "@h1/ b mongodb+srv://v:" + canary + "2@c.example.net/?w=1",
			want:    "a mongodb://u:xxxxx@h1/ b mongodb+srv://v:xxxxx@c.example.net/?w=1",
			secrets: []string{canary},
		},
		{
			name:    "password with unescaped at and slash",
			in:      "lookup failed for mongodb://bob:Can@ry/xyzzy@127.0.0.1:1/ now",
			want:    "lookup failed for mongodb://xxxxx@127.0.0.1:1/ now",
			secrets: []string{"Can@ry", "ry/xyzzy", "xyzzy"},
		},
		{
			name:    "percent-encoded password",
			in:      "uri: mongodb://bob:Canary%40S3cr3t%3Ax%2Fy@h/",
			want:    "uri: mongodb://bob:xxxxx@h/",
			secrets: []string{"Canary%40S3cr3t", "S3cr3t"},
		},
		{
			name:    "password with unescaped colon",
			in:      "at mongodb://bob:" + canary + ":more@h/ failed",
			want:    "at mongodb://bob:xxxxx@h/ failed",
			secrets: []string{canary, "more"},
		},
		{
			name: "secret options with credentials",
			in: "mongodb://AKIA:" + canary + "@h/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:" + canary +
				"&sslClientCertificateKeyPassword=" + canary + "&password=" + canary,
			want: "mongodb://AKIA:xxxxx@h/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:xxxxx" +
				"&sslClientCertificateKeyPassword=xxxxx&password=xxxxx",
			secrets: []string{canary},
		},
		{
			name:    "quoted uri",
			in:      `uri: "mongodb://bob:` + canary + `@h/?authMechanism=PLAIN"`,
			want:    `uri: "mongodb://bob:xxxxx@h/?authMechanism=PLAIN"`,
			secrets: []string{canary},
		},
		{
			name:    "secret options without credentials",
			in:      "mongodb://h/?tlsCertificateKeyFilePassword=" + canary + "&authMechanismProperties=AWS_SESSION_TOKEN:" + canary,
			secrets: []string{canary},
		},
		{
			name:    "postgres url",
			in:      "postgresql://pg:" + canary + "@127.0.0.1:5432/db",
			want:    "postgresql://pg:xxxxx@127.0.0.1:5432/db",
			secrets: []string{canary},
		},
		{
			name:    "key=value",
			in:      "bad option password=" + canary + " and sslClientCertificateKeyPassword=" + canary + ";",
			want:    "bad option password=xxxxx and sslClientCertificateKeyPassword=xxxxx;",
			secrets: []string{canary},
		},
		{
			name:    "extended json",
			in:      `{"find": "users", "filter": {"password": "` + canary + `", "api_key" : 12345, "name": "bob"}}`,
			want:    `{"find": "users", "filter": {"password": "xxxxx", "api_key" : "xxxxx", "name": "bob"}}`,
			secrets: []string{canary, "12345"},
		},
		{
			name:    "nested secret value in extended json",
			in:      `{"parsedQuery": {"password": {"$eq": "` + canary + `", "$in": [1, "` + canary + `", true]}}, "n": 1}`,
			want:    `{"parsedQuery": {"password": {"$eq": "xxxxx", "$in": ["xxxxx", "xxxxx", true]}}, "n": 1}`,
			secrets: []string{canary},
		},
		{
			name:    "unterminated secret value",
			in:      `{"token": {"a": "` + canary,
			secrets: []string{canary},
		},
		{
			name: "base64 is no key=value",
			in:   "HISTFAAAACx4nJNpmSzMwMDAwgABzFCaEUzOmmIPYS0ypwpwdAAAOKQTg==",
			want: "HISTFAAAACx4nJNpmSzMwMDAwgABzFCaEUzOmmIPYS0ypwpwdAAAOKQTg==",
		},
		{
			name: "index keys are not secrets",
			in:   `{"keys": {"a": 1}, "keysExamined": 3, "key": "x"}`,
			want: `{"keys": {"a": 1}, "keysExamined": 3, "key": "x"}`,
		},
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Text(tc.in)
			assertMasked(t, got, tc.want, tc.secrets...)

			if again := Text(got); again != got {
				t.Errorf("not idempotent: %q became %q", got, again)
			}
		})
	}
}

func TestIsSecretKey(t *testing.T) {
	for _, k := range []string{
		"password", "Password", "PASSWORD", "db_password", "passwd", "pwd", "pass", "secret", "client_secret",
		"token", "AWS_SESSION_TOKEN", "accessToken", "api_key", "apiKey", "API-KEY", "access_key", "privateKey",
		"secret_key", "credentials", "tlsCertificateKeyFilePassword", "passphrase",
	} {
		if !IsSecretKey(k) {
			t.Errorf("IsSecretKey(%q) = false", k)
		}
	}

	for _, k := range []string{
		"key", "keys", "keys_examined", "shard_key", "sort_key", "name", "uri", "kind", "user", "username",
		"authMechanism", "authSource", "tlsCertificateKeyFile", "message", "histogram", "",
	} {
		if IsSecretKey(k) {
			t.Errorf("IsSecretKey(%q) = true", k)
		}
	}
}

func TestAmbiguous(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		want bool
	}{
		{"mongodb://bob:pw@h/", false},
		{"mongodb://bob:p%40w@h/", false},
		{"mongodb://h/", false},
		{"mongodb://bob:pw@h/?appName=me@home", false},
		{"mongodb://bob:p@w@h/", true},
		{"mongodb://bob:Can@ry/x@127.0.0.1:1/", true},
		{"mongodb://bob:p/w@h/", true},
		{"mongodb://bob:p?w@h/", true},
		{"mongodb://bob:p#w@h/", true},
	} {
		if got := Ambiguous(tc.uri); got != tc.want {
			t.Errorf("Ambiguous(%q) = %v, want %v", tc.uri, got, tc.want)
		}
	}
}

func TestYAML(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		secrets []string
	}{
		{
			name:    "block mapping",
			in:      "name: x\npassword: " + canary + "\nafter: 1\n",
			want:    "name: x\npassword: xxxxx\nafter: 1\n",
			secrets: []string{canary},
		},
		{
			name:    "quoted keys and values",
			in:      "\"db_password\": '" + canary + "'\n'api_key': \"" + canary + "\" # comment\n",
			want:    "\"db_password\": \"xxxxx\"\n'api_key': xxxxx\n",
			secrets: []string{canary},
		},
		{
			name:    "uri in a sequence of targets",
			in:      "targets:\n  - kind: uri\n    uri: mongodb://bob:" + canary + "@h:27017/?authMechanism=PLAIN\n",
			want:    "targets:\n  - kind: uri\n    uri: mongodb://bob:xxxxx@h:27017/?authMechanism=PLAIN\n",
			secrets: []string{canary},
		},
		{
			name:    "env reference is kept",
			in:      "  - {kind: uri, uri: \"mongodb://bob:${BENCH_PASSWORD}@h/\"}\n",
			want:    "  - {kind: uri, uri: \"mongodb://bob:${BENCH_PASSWORD}@h/\"}\n",
			secrets: []string{canary},
		},
		{
			name:    "flow mapping",
			in:      "vars: {token: " + canary + ", n: 3}\n",
			want:    "vars: {token: xxxxx, n: 3}\n",
			secrets: []string{canary},
		},
		{
			name:    "block scalar",
			in:      "creds:\n  token: |\n    " + canary + "\n    line2-" + canary + "\n  other: ok\n",
			want:    "creds:\n  token: xxxxx\n    xxxxx\n    xxxxx\n  other: ok\n",
			secrets: []string{canary},
		},
		{
			name:    "nested block under a secret key",
			in:      "secret:\n  user: bob\n  pass: " + canary + "\n  list:\n    - " + canary + "\nvisible: yes\n",
			want:    "secret:\n  user: xxxxx\n  pass: xxxxx\n  list:\n    - xxxxx\nvisible: yes\n",
			secrets: []string{canary},
		},
		{
			name:    "comments",
			in:      "# password: " + canary + "\n# see mongodb://bob:" + canary + "@h/\nname: x # token: " + canary + "\n",
			secrets: []string{canary},
		},
		{
			name: "env references kept under secret keys",
			in:   "password: ${BENCH_PASSWORD}\ntoken: \"${TOKEN}\"\nuri: mongodb://h/?password=${PW}\n",
			want: "password: ${BENCH_PASSWORD}\ntoken: \"${TOKEN}\"\nuri: mongodb://h/?password=${PW}\n",
		},
		{
			name:    "a reference inside a longer password is no reference",
			in:      "uri: mongodb://bob:x${PW}@h/\npassword: a${PW}\n",
			want:    "uri: mongodb://bob:xxxxx@h/\npassword: xxxxx\n",
			secrets: []string{"x${PW}", "a${PW}"},
		},
		{
			name:    "scalars continued on the next lines",
			in:      "a:\n  password: \"Canary-\n    S3cr3t\"\n  token: Canary\n    xyzzy\n  kind: uri\n",
			want:    "a:\n  password: xxxxx\n    xxxxx\n  token: xxxxx\n    xxxxx\n  kind: uri\n",
			secrets: []string{"Canary", "S3cr3t", "xyzzy"},
		},
		{
			name: "index keys untouched",
			in:   "indexes:\n  - keys: {message: 1}\n  - key: x\n",
			want: "indexes:\n  - keys: {message: 1}\n  - key: x\n",
		},
		{
			name:    "sibling after a nested secret keeps its value",
			in:      "targets:\n  - password:\n      " + canary + "\n    kind: uri\n",
			want:    "targets:\n  - password:\n      xxxxx\n    kind: uri\n",
			secrets: []string{canary},
		},
		{
			name:    "windows line ends",
			in:      "password: " + canary + "\r\nname: x\r\n",
			want:    "password: xxxxx\r\nname: x\r\n",
			secrets: []string{canary},
		},
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := YAML(tc.in)
			assertMasked(t, got, tc.want, tc.secrets...)

			if n, m := strings.Count(got, "\n"), strings.Count(tc.in, "\n"); n != m {
				t.Errorf("%d lines, the source has %d", n, m)
			}

			if again := YAML(got); again != got {
				t.Errorf("not idempotent:\n%s\nbecame\n%s", got, again)
			}
		})
	}
}

func TestWriter(t *testing.T) {
	var b strings.Builder

	w := Writer(&b)

	line := "level=INFO msg=connecting uri=mongodb://bob:" + canary + "@h/ password=" + canary + "\n"
	if n, err := w.Write([]byte(line)); err != nil || n != len(line) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(line))
	}

	assertMasked(t, b.String(), "level=INFO msg=connecting uri=mongodb://bob:xxxxx@h/ password=xxxxx\n", canary)
}
