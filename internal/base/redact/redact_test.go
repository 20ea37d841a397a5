package redact

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestURI(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   string
		secret []string // substrings that must not survive
	}{
		{
			name: "empty",
			in:   "",
			want: "",
		},
		{
			name: "no credentials",
			in:   "mongodb://localhost:27017/",
			want: "mongodb://localhost:27017/",
		},
		{
			name: "no credentials no slash",
			in:   "mongodb://localhost",
			want: "mongodb://localhost",
		},
		{
			name:   "simple",
			in:     "mongodb://alice:s3cret@localhost:27017/bench",
			want:   "mongodb://alice:xxxxx@localhost:27017/bench",
			secret: []string{"s3cret"},
		},
		{
			name:   "srv",
			in:     "mongodb+srv://alice:s3cret@cluster0.example.net/?retryWrites=true&w=majority",
			want:   "mongodb+srv://alice:xxxxx@cluster0.example.net/?retryWrites=true&w=majority",
			secret: []string{"s3cret"},
		},
		{
			name:   "multiple hosts",
			in:     "mongodb://alice:s3cret@h1:27017,h2:27018,[::1]:27019/db?replicaSet=rs0",
			want:   "mongodb://alice:xxxxx@h1:27017,h2:27018,[::1]:27019/db?replicaSet=rs0",
			secret: []string{"s3cret"},
		},
		{
			name: "user without password",
			in:   "mongodb://CN=client,OU=x@localhost/?authMechanism=MONGODB-X509",
			want: "mongodb://CN=client,OU=x@localhost/?authMechanism=MONGODB-X509",
		},
		{
			name: "empty password",
			in:   "mongodb://alice:@localhost/",
			want: "mongodb://alice:xxxxx@localhost/",
		},
		{
			name:   "percent escaped password",
			in:     "mongodb://alice:p%40ss%3Aw%2Frd@localhost/",
			want:   "mongodb://alice:xxxxx@localhost/",
			secret: []string{"p%40ss%3Aw%2Frd", "p@ss:w/rd"},
		},
		{
			name:   "password with colon",
			in:     "mongodb://alice:pa:ss@localhost/",
			want:   "mongodb://alice:xxxxx@localhost/",
			secret: []string{"pa:ss"},
		},
		{
			name:   "password with unescaped at",
			in:     "mongodb://alice:p@ss@localhost:27017/db",
			want:   "mongodb://xxxxx@localhost:27017/db",
			secret: []string{"p@ss"},
		},
		{
			name:   "password with unescaped slash",
			in:     "mongodb://alice:pa/ss@h1:27017,h2:27018/db",
			want:   "mongodb://xxxxx@h1:27017,h2:27018/db",
			secret: []string{"pa/ss"},
		},
		{
			name:   "numeric password with slash looks like a port",
			in:     "mongodb://alice:123/456@localhost/",
			want:   "mongodb://xxxxx@localhost/",
			secret: []string{"123/456"},
		},
		{
			name:   "password with slash and question mark",
			in:     "mongodb://alice:123/?a=b@localhost/",
			want:   "mongodb://xxxxx@localhost/",
			secret: []string{"123/?a=b"},
		},
		{
			name:   "password with unescaped question mark",
			in:     "mongodb://alice:pa?ss@localhost/",
			want:   "mongodb://xxxxx@localhost/",
			secret: []string{"pa?ss"},
		},
		{
			name:   "password with hash",
			in:     "mongodb://alice:pa#ss@localhost/",
			want:   "mongodb://xxxxx@localhost/",
			secret: []string{"pa#ss"},
		},
		{
			name:   "password containing scheme separator",
			in:     "mongodb://alice:a://b@localhost/",
			want:   "mongodb://xxxxx@localhost/",
			secret: []string{"a://b"},
		},
		{
			name: "at sign in option value with credentials",
			in:   "mongodb://alice:s3cret@localhost/?appName=me@home",
			want: "mongodb://alice:xxxxx@localhost/?appName=me@home",
		},
		{
			name: "at sign in option value without credentials is over-redacted",
			in:   "mongodb://localhost/?appName=me@home",
			want: "mongodb://xxxxx@home",
		},
		{
			name:   "password option",
			in:     "mongodb://localhost/?authSource=admin&password=s3cret&w=1",
			want:   "mongodb://localhost/?authSource=admin&password=xxxxx&w=1",
			secret: []string{"s3cret"},
		},
		{
			name:   "option names are case insensitive and may use semicolons",
			in:     "mongodb://localhost/?PassWord=s3cret;tlsCertificateKeyFilePassword=k3y",
			want:   "mongodb://localhost/?PassWord=xxxxx;tlsCertificateKeyFilePassword=xxxxx",
			secret: []string{"s3cret", "k3y"},
		},
		{
			name:   "percent-encoded option name",
			in:     "mongodb://localhost/?pass%77ord=s3cret",
			want:   "mongodb://localhost/?pass%77ord=xxxxx",
			secret: []string{"s3cret"},
		},
		{
			name:   "aws session token",
			in:     "mongodb://AKIAEXAMPLE:wJalrXUtnFEMI@cluster.example.net/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:FwoGZXIvYXdzE%2Babc,SERVICE_NAME:x",
			want:   "mongodb://AKIAEXAMPLE:xxxxx@cluster.example.net/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:xxxxx,SERVICE_NAME:x",
			secret: []string{"wJalrXUtnFEMI", "FwoGZXIvYXdzE", "abc"},
		},
		{
			name:   "aws session token fully percent-encoded",
			in:     "mongodb://localhost/?authMechanismProperties=AWS_SESSION_TOKEN%3Atok3n%2CSERVICE_NAME%3Amongodb",
			want:   "mongodb://localhost/?authMechanismProperties=AWS_SESSION_TOKEN:xxxxx,SERVICE_NAME:mongodb",
			secret: []string{"tok3n"},
		},
		{
			name:   "undecodable properties are masked whole",
			in:     "mongodb://localhost/?authMechanismProperties=AWS_SESSION_TOKEN:tok3n%zz",
			want:   "mongodb://localhost/?authMechanismProperties=xxxxx",
			secret: []string{"tok3n"},
		},
		{
			name: "non-secret properties unchanged",
			in:   "mongodb://localhost/?authMechanismProperties=SERVICE_NAME:other,CANONICALIZE_HOST_NAME:true",
			want: "mongodb://localhost/?authMechanismProperties=SERVICE_NAME:other,CANONICALIZE_HOST_NAME:true",
		},
		{
			name:   "no scheme",
			in:     "alice:s3cret@localhost:27017",
			want:   "alice:xxxxx@localhost:27017",
			secret: []string{"s3cret"},
		},
		{
			name:   "query before slash is malformed",
			in:     "mongodb://alice:s3cret@localhost?password=p2",
			want:   "mongodb://xxxxx@localhost?password=xxxxx",
			secret: []string{"s3cret", "p2"},
		},
		{
			name:   "nothing after at",
			in:     "mongodb://alice:s3cret@",
			want:   "mongodb://alice:xxxxx@",
			secret: []string{"s3cret"},
		},
		{
			name:   "only scheme and userinfo garbage",
			in:     "mongodb://:@",
			want:   "mongodb://:xxxxx@",
			secret: nil,
		},
		{
			name: "not a uri at all",
			in:   "hello world",
			want: "hello world",
		},
		{
			name: "already redacted is unchanged",
			in:   "mongodb://alice:xxxxx@localhost/?password=xxxxx",
			want: "mongodb://alice:xxxxx@localhost/?password=xxxxx",
		},
		{
			name:   "invalid utf8",
			in:     "mongodb://alice:\xff\xfe@localhost/",
			want:   "mongodb://alice:xxxxx@localhost/",
			secret: []string{"\xff\xfe"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := URI(tt.in)
			if got != tt.want {
				t.Errorf("URI(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			for _, s := range tt.secret {
				if strings.Contains(got, s) {
					t.Errorf("URI(%q) = %q still contains secret %q", tt.in, got, s)
				}
			}
			if again := URI(got); again != got {
				t.Errorf("URI is not idempotent: URI(%q) = %q", got, again)
			}
		})
	}
}

func TestError(t *testing.T) {
	const uri = "mongodb://alice:p%40ssw0rd@db1:27017,db2:27017/?authSource=admin"
	tests := []struct {
		name   string
		err    error
		uris   []string
		want   string
		secret []string
	}{
		{
			name: "nil",
			err:  nil,
			uris: []string{uri},
			want: "",
		},
		{
			name: "no uris",
			err:  errors.New("boom"),
			want: "boom",
		},
		{
			name: "uri quoted in message",
			err:  fmt.Errorf("connect to %s: %w", uri, errors.New("connection refused")),
			uris: []string{uri},
			want: "connect to mongodb://alice:xxxxx@db1:27017,db2:27017/?authSource=admin: connection refused",
		},
		{
			name:   "raw and decoded password quoted alone",
			err:    errors.New("auth failed for password p%40ssw0rd (p@ssw0rd)"),
			uris:   []string{uri},
			want:   "auth failed for password xxxxx (xxxxx)",
			secret: []string{"p@ssw0rd", "p%40ssw0rd"},
		},
		{
			name:   "several uris",
			err:    errors.New("a=mongodb://u:one@h/ b=mongodb://v:two@k/ one two"),
			uris:   []string{"mongodb://u:one@h/", "", "mongodb://v:two@k/"},
			want:   "a=mongodb://u:xxxxx@h/ b=mongodb://v:xxxxx@k/ xxxxx xxxxx",
			secret: []string{"one", "two"},
		},
		{
			name:   "malformed uri",
			err:    errors.New("parse mongodb://alice:p@ss@h/: bad; p@ss"),
			uris:   []string{"mongodb://alice:p@ss@h/"},
			want:   "parse mongodb://xxxxx@h/: bad; xxxxx",
			secret: []string{"p@ss"},
		},
		{
			name:   "secret options",
			err:    errors.New("tls key password k3y rejected; token tok3n expired"),
			uris:   []string{"mongodb://h/?tlsCertificateKeyFilePassword=k3y&authMechanismProperties=AWS_SESSION_TOKEN:tok3n"},
			want:   "tls key password xxxxx rejected; token xxxxx expired",
			secret: []string{"k3y", "tok3n"},
		},
		{
			name: "uri without secrets",
			err:  errors.New("dial mongodb://h/"),
			uris: []string{"mongodb://h/"},
			want: "dial mongodb://h/",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Error(tt.err, tt.uris...)
			if got != tt.want {
				t.Errorf("Error()\n got %q\nwant %q", got, tt.want)
			}
			for _, s := range tt.secret {
				if strings.Contains(got, s) {
					t.Errorf("Error() = %q still contains secret %q", got, s)
				}
			}
		})
	}
}

// FuzzURI checks that, whatever the password, neither it nor any part of the
// connection string other than the fixed skeleton survives redaction.
func FuzzURI(f *testing.F) {
	for _, seed := range []string{
		"s3cret", "p@ss", "a/b", "a?b", "123/?a=b", "a:b", "%40", "%zz", "a#b",
		"xxxxx", "@@@", "://", "/", "?", "a@b/c?d=e@f", "\xff", "pass word", ",h2:1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, pass string) {
		uri := "mongodb://user:" + pass + "@host/"
		got := URI(uri)
		// The last '@' is always the one before "host/", so the result must
		// be one of the two skeletons, which cannot carry the password.
		const wellFormed = "mongodb://user:xxxxx@host/"
		const malformed = "mongodb://xxxxx@host/"
		if got != wellFormed && got != malformed {
			t.Fatalf("URI(%q) = %q, want %q or %q", uri, got, wellFormed, malformed)
		}
		// A password that is a piece of either skeleton ("/x" of
		// "mongodb://xxxxx") is found in the result without being leaked:
		// the result is a skeleton, checked above.
		if pass != "" && strings.Contains(got, pass) && !strings.Contains(wellFormed, pass) && !strings.Contains(malformed, pass) {
			t.Fatalf("URI(%q) = %q leaks the password", uri, got)
		}
		// Error may legitimately contain the password only where it is a
		// substring of the text that surrounds it in any case.
		msg := Error(errors.New("failed: "+uri+" password="+pass), uri)
		// The texts Error may return: does pass occur in them anyway?
		wellFormedMsg := "failed: " + wellFormed + " password=" + Mask
		malformedMsg := "failed: " + malformed + " password=" + Mask
		excused := strings.Contains(wellFormedMsg, pass) || strings.Contains(malformedMsg, pass)
		if pass != "" && strings.Contains(msg, pass) && !excused {
			t.Fatalf("Error() = %q leaks the password %q", msg, pass)
		}
	})
}

// FuzzURIArbitrary feeds arbitrary strings to both functions to check that
// they never panic and that redaction is stable when applied twice.
func FuzzURIArbitrary(f *testing.F) {
	for _, seed := range []string{
		"", "://", "mongodb://", "mongodb://@", "mongodb://u:p@h/?password=x&authMechanismProperties=AWS_SESSION_TOKEN:t",
		"mongodb://h/?authMechanismProperties=%zz", "@?@/@", "mongodb+srv://a:b@c,d:1/e?f=g@h;i=j",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := URI(s)
		if twice := URI(once); twice != once {
			t.Fatalf("URI not stable: URI(%q) = %q, URI(that) = %q", s, once, twice)
		}
		_ = Error(errors.New(s), s, once)
	})
}
