package targets

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/base/redact"
)

// closedPort returns a 127.0.0.1 address nothing listens on: a port that was
// just opened and closed again.
func closedPort(t *testing.T) string {
	t.Helper()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}

	addr := l.Addr().String()

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	return addr
}

func TestConnectUnreachable(t *testing.T) {
	const password = "s3cretPW"

	addr := closedPort(t)
	uri := "mongodb://user:" + password + "@" + addr + "/"
	timeout := time.Second

	client, err := Connect(t.Context(), uri, ConnectOptions{Timeout: timeout})

	if client != nil {
		t.Error("got a client for an unreachable server")
	}

	var ce *ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("got %T %v, want *ConnectError", err, err)
	}

	if !ce.Unreachable || ce.Timeout != timeout {
		t.Errorf("ConnectError = %+v, want Unreachable with timeout %s", ce, timeout)
	}

	msg := err.Error()
	want := "cannot reach MongoDB server at mongodb://user:xxxxx@" + addr + "/ within 1s: "

	if !strings.HasPrefix(msg, want) {
		t.Errorf("message = %q, want prefix %q", msg, want)
	}

	if !strings.Contains(msg, "connection refused") {
		t.Errorf("message = %q, want the essential cause (connection refused)", msg)
	}

	if strings.Contains(msg, password) {
		t.Errorf("message contains the password: %q", msg)
	}

	if strings.ContainsAny(msg, "\r\n") || strings.Contains(msg, "topology") {
		t.Errorf("message is not a short single line: %q", msg)
	}
}

func TestConnectURITimeoutWins(t *testing.T) {
	addr := closedPort(t)

	// Were the URI's timeout ignored, Connect would wait for the
	// context's deadline instead and fail with it, not with a
	// *ConnectError naming 300ms.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	_, err := Connect(ctx, "mongodb://"+addr+"/?serverSelectionTimeoutMS=300", ConnectOptions{Timeout: time.Hour})

	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Timeout != 300*time.Millisecond {
		t.Fatalf("got %v, want *ConnectError with the URI's 300ms timeout", err)
	}

	if !strings.Contains(err.Error(), "within 300ms") {
		t.Errorf("message = %q, want it to name the 300ms timeout", err)
	}
}

func TestConnectCanceled(t *testing.T) {
	addr := closedPort(t)

	// Canceled while it waits for an unreachable server, long before its
	// hour-long timeout could end, Connect returns the cancellation.
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)

	_, err := Connect(ctx, "mongodb://"+addr+"/", ConnectOptions{Timeout: time.Hour})

	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestConnectMalformedURI(t *testing.T) {
	const password = "pa55word"

	for _, tc := range []struct {
		name, uri string
	}{
		{"empty", ""},
		{"wrong scheme", "mongo://user:" + password + "@localhost/"},
		{"bad option value", "mongodb://user:" + password + "@localhost/?maxPoolSize=many"},
		{"bad password escape", "mongodb://user:" + password + "%zz@localhost/"},
		{"raw @ in password", "mongodb://user:" + password + "@x@localhost/"},
		{"query before path", "mongodb://user:" + password + "@localhost?tls=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A *URIError (not a *ConnectError) means the URI was
			// rejected before any connection was tried.
			_, err := Connect(t.Context(), tc.uri, ConnectOptions{})

			var ue *URIError
			if !errors.As(err, &ue) {
				t.Fatalf("got %T %v, want *URIError", err, err)
			}

			if want := redact.URI(tc.uri); ue.URI != want {
				t.Errorf("URIError.URI = %q, want %q", ue.URI, want)
			}

			if ue.Reason == "" {
				t.Error("URIError.Reason is empty")
			}

			msg := err.Error()
			if strings.Contains(msg, password) || strings.Contains(msg, "%zz") {
				t.Errorf("message leaks (part of) the password: %q", msg)
			}

			if strings.ContainsAny(msg, "\r\n") {
				t.Errorf("message is not a single line: %q", msg)
			}
		})
	}
}

// TestConnectRefusedClient covers a server that answers but refuses the
// client: embedded FerretDB does not support SCRAM authentication.
func TestConnectRefusedClient(t *testing.T) {
	const password = "t0ps3cret"

	e := startEmbedded(t, EmbeddedOptions{})
	uri := strings.Replace(e.URI(), "mongodb://", "mongodb://bench:"+password+"@", 1)

	_, err := Connect(t.Context(), uri, ConnectOptions{Timeout: 2 * time.Second})

	var ce *ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("got %T %v, want *ConnectError", err, err)
	}

	if ce.Unreachable {
		t.Errorf("ConnectError.Unreachable = true for a server that answered: %v", err)
	}

	msg := err.Error()
	if strings.Contains(msg, password) || strings.ContainsAny(msg, "\r\n") {
		t.Errorf("message leaks the password or spans lines: %q", msg)
	}

	if !strings.Contains(msg, "mongodb://bench:xxxxx@127.0.0.1:") || !strings.Contains(msg, "authenticat") {
		t.Errorf("message = %q, want the redacted URI and the authentication cause", msg)
	}
}

func TestConnectEmbedded(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{})

	client, err := Connect(t.Context(), e.URI(), ConnectOptions{MaxPoolSize: 2, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })

	var res bson.M
	if err := client.Database("admin").RunCommand(t.Context(), bson.D{{Key: "ping", Value: 1}}).Decode(&res); err != nil {
		t.Fatalf("ping through the returned client: %v", err)
	}
}

func TestScrubReason(t *testing.T) {
	for _, tc := range []struct{ uri, reason, want string }{
		{"mongodb://u:longpass@h/", "xlongpassx", "xxxxxxx"},
		{"mongodb://u:a%40bcd@h/", "got a@bcd and a%40bcd", "got xxxxx and xxxxx"},
		{"mongodb://u:pass%zz@h/", `invalid password: invalid URL escape "%zz"`, "invalid password encoding (use %XX escapes for special characters)"},
		{"mongodb://h/", "anything", "anything"},
	} {
		if got := scrubReason(tc.uri, tc.reason); got != tc.want {
			t.Errorf("scrubReason(%q, %q) = %q, want %q", tc.uri, tc.reason, got, tc.want)
		}
	}
}

// TestSelectionTimeout checks which server selection timeout a client gets:
// the URI's, else the option's, else the default.
func TestSelectionTimeout(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		opts ConnectOptions
		want time.Duration
	}{
		{"mongodb://127.0.0.1:1", ConnectOptions{}, DefaultConnectTimeout},
		{"mongodb://127.0.0.1:1", ConnectOptions{Timeout: 2 * time.Second}, 2 * time.Second},
		{"mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=7000", ConnectOptions{Timeout: 2 * time.Second}, 7 * time.Second},
	} {
		if got := SelectionTimeout(tc.uri, tc.opts); got != tc.want {
			t.Errorf("SelectionTimeout(%q, %+v) = %s, want %s", tc.uri, tc.opts, got, tc.want)
		}
	}
}
