package targets

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"

	"github.com/mongobench/mongobench/internal/base/redact"
)

// DefaultConnectTimeout is how long Connect waits for a server when neither
// ConnectOptions.Timeout nor the URI's serverSelectionTimeoutMS says
// otherwise. It is far below the driver's 30 seconds because a benchmark
// pointed at the wrong address should fail while the user is still looking.
const DefaultConnectTimeout = 5 * time.Second

// AppName is the application name Connect reports to servers (unless the URI
// sets appName), so that mongobench's load can be told apart in server logs,
// currentOp and profiler output.
const AppName = "mongobench"

// ConnectOptions tunes Connect. The zero value is ready to use.
type ConnectOptions struct {
	// Timeout bounds server selection (for the initial ping and for every
	// later operation), connection establishment and the initial ping;
	// zero means DefaultConnectTimeout. A serverSelectionTimeoutMS or
	// connectTimeoutMS in the URI takes precedence for its part.
	Timeout time.Duration

	// MaxPoolSize caps the client's connection pool; zero leaves the URI's
	// maxPoolSize or the driver default alone. It overrides the URI so that
	// a limit the server imposes (see Embedded.MaxPoolSize) always holds.
	MaxPoolSize uint64
}

// URIError reports a connection string that cannot be used as given, which
// the user has to fix (the CLI exits with status 2). It never holds the
// password: URI is redacted (by redact.URI) and Reason is scrubbed.
type URIError struct {
	// URI is the connection string with its password replaced by "xxxxx".
	URI string

	// Reason says what is wrong, without any part of the password.
	Reason string
}

// Error implements error as a single line.
func (e *URIError) Error() string {
	return fmt.Sprintf("invalid MongoDB URI %s: %s", e.URI, e.Reason)
}

// ConnectError reports that a well-formed URI did not lead to a usable
// server: nothing answered within the timeout, or the server refused the
// client (e.g. bad credentials or TLS). Its message is one line and never
// contains the password.
type ConnectError struct {
	// URI is the connection string with its password replaced by "xxxxx".
	URI string

	// Timeout is the bound that was applied to reaching the server.
	Timeout time.Duration

	// Unreachable is true if no server answered at all, as opposed to a
	// server that answered but refused the client.
	Unreachable bool

	// Cause is the essential reason in a few words, stripped of the driver's
	// multi-line topology description.
	Cause string

	err error
}

// Error implements error as a single line.
func (e *ConnectError) Error() string {
	if e.Unreachable {
		return fmt.Sprintf("cannot reach MongoDB server at %s within %s: %s", e.URI, e.Timeout, e.Cause)
	}

	return fmt.Sprintf("cannot connect to MongoDB server at %s: %s", e.URI, e.Cause)
}

// Unwrap returns the driver's original error, so that errors.Is works for
// conditions such as context.DeadlineExceeded.
func (e *ConnectError) Unwrap() error {
	return e.err
}

// Connect creates a client for uri and pings the server, so that a returned
// client is known to work. It applies the connect timeout, the pool cap and
// mongobench's application name. A malformed URI yields a *URIError; a server
// that cannot be reached or used yields a *ConnectError within about the
// timeout. Either way the message never contains the password. The caller
// must Disconnect the returned client.
func Connect(ctx context.Context, uri string, opts ConnectOptions) (*mongo.Client, error) {
	redacted := redact.URI(uri)

	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}

	// The driver ends the user information at the first '@', so with an
	// unescaped '@' (or '/', '?', '#') in the password it takes the rest
	// of the password for hosts and database, and its errors ("lookup
	// <part of the password>") would quote it. Such strings never reach
	// the driver.
	if redact.Ambiguous(uri) {
		return nil, &URIError{URI: redacted, Reason: ambiguousReason}
	}

	co := options.Client().ApplyURI(uri)
	if err := co.Validate(); err != nil {
		return nil, classifyURIError(uri, redacted, timeout, err)
	}

	// The driver accepts host names it can never resolve, such as ones with
	// spaces; they are typing mistakes, so say so at once instead of after
	// the connect timeout.
	for _, h := range co.Hosts {
		if strings.ContainsAny(h, " \t\r\n\"<>\\^`{|}") {
			return nil, &URIError{URI: redacted, Reason: fmt.Sprintf("invalid host %q", scrubReason(uri, h))}
		}
	}

	timeout = selectionTimeout(co, timeout)
	co.SetServerSelectionTimeout(timeout)

	if co.ConnectTimeout == nil {
		co.SetConnectTimeout(timeout)
	}

	if opts.MaxPoolSize > 0 {
		co.SetMaxPoolSize(opts.MaxPoolSize)
	}

	if co.AppName == nil {
		co.SetAppName(AppName)
	}

	if err := co.Validate(); err != nil {
		return nil, &URIError{URI: redacted, Reason: scrubReason(uri, err.Error())}
	}

	client, err := mongo.Connect(co)
	if err != nil {
		return nil, &ConnectError{URI: redacted, Timeout: timeout, Cause: scrubReason(uri, oneLine(err.Error())), err: err}
	}

	// The extra second lets the driver's server selection timeout fire first:
	// its error carries the per-server cause that makes the message useful.
	pingCtx, cancel := context.WithTimeout(ctx, timeout+time.Second)
	defer cancel()

	err = client.Ping(pingCtx, nil)
	if err == nil {
		return client, nil
	}

	disconnectCtx, cancelDisconnect := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancelDisconnect()

	_ = client.Disconnect(disconnectCtx)

	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, fmt.Errorf("connect to MongoDB server at %s: %w", redacted, context.Cause(ctx))
	}

	return nil, connectError(uri, redacted, timeout, err)
}

// SelectionTimeout is the server selection timeout a client made by Connect
// for uri with opts uses: the URI's serverSelectionTimeoutMS if it sets one,
// else opts.Timeout, else DefaultConnectTimeout. It is how long every
// operation waits for a usable server before it fails, so that a run can be
// stopped once its server has been unreachable that long. A URI that does
// not parse yields the default; Connect reports it.
func SelectionTimeout(uri string, opts ConnectOptions) time.Duration {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}

	return selectionTimeout(options.Client().ApplyURI(uri), timeout)
}

// selectionTimeout is co's server selection timeout if the URI set one, else
// fallback.
func selectionTimeout(co *options.ClientOptions, fallback time.Duration) time.Duration {
	if co.ServerSelectionTimeout != nil && *co.ServerSelectionTimeout > 0 {
		return *co.ServerSelectionTimeout
	}

	return fallback
}

// classifyURIError turns an error from parsing uri into a *URIError, except
// for DNS failures while resolving a mongodb+srv record: the URI is fine
// then, and the server is what cannot be reached.
func classifyURIError(uri, redacted string, timeout time.Duration, err error) error {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return &ConnectError{
			URI:         redacted,
			Timeout:     timeout,
			Unreachable: true,
			Cause:       scrubReason(uri, dnsErr.Error()),
			err:         err,
		}
	}

	reason := err.Error()
	for _, prefix := range []string{"error parsing uri: ", "error validating uri: "} {
		reason = strings.TrimPrefix(reason, prefix)
	}

	return &URIError{URI: redacted, Reason: scrubReason(uri, oneLine(reason))}
}

// connectError builds the one-line *ConnectError for a failed initial ping.
func connectError(uri, redacted string, timeout time.Duration, err error) *ConnectError {
	ce := &ConnectError{URI: redacted, Timeout: timeout, err: err}

	var sse topology.ServerSelectionError
	if !errors.As(err, &sse) {
		if errors.Is(err, context.DeadlineExceeded) {
			ce.Unreachable = true
			ce.Cause = "no server answered"
		} else {
			ce.Cause = scrubReason(uri, shortCause(err))
		}

		return ce
	}

	ce.Unreachable = true
	ce.Cause = "no server answered"

	for _, s := range sse.Desc.Servers {
		if s.LastError == nil {
			continue
		}

		ce.Cause = scrubReason(uri, shortCause(s.LastError))

		// A server that answered but refused us (authentication, TLS) is
		// reachable; say so rather than blaming the network.
		if !isNetworkError(s.LastError) {
			ce.Unreachable = false
		}

		break
	}

	return ce
}

// isNetworkError reports whether err means that the server could not be
// talked to at all (as opposed to refusing a client that reached it).
func isNetworkError(err error) bool {
	var (
		opErr  *net.OpError
		dnsErr *net.DNSError
		netErr net.Error
	)

	return errors.As(err, &opErr) || errors.As(err, &dnsErr) || errors.As(err, &netErr) ||
		errors.Is(err, context.DeadlineExceeded)
}

// shortCause extracts the essential reason from a driver error: the network
// error if there is one (e.g. "dial tcp 127.0.0.1:1: connect: connection
// refused"), otherwise the message without the driver's wrapping prefixes.
func shortCause(err error) string {
	var (
		opErr   *net.OpError
		dnsErr  *net.DNSError
		certErr x509.UnknownAuthorityError
		hostErr x509.HostnameError
	)

	switch {
	case errors.As(err, &opErr):
		return oneLine(opErr.Error())
	case errors.As(err, &dnsErr):
		return oneLine(dnsErr.Error())
	case errors.As(err, &certErr):
		return oneLine(certErr.Error())
	case errors.As(err, &hostErr):
		return oneLine(hostErr.Error())
	}

	msg := oneLine(err.Error())

	// Driver connection errors read "connection(host[-n]) <what>: <cause>";
	// the address is already in our message.
	if strings.HasPrefix(msg, "connection(") {
		if i := strings.Index(msg, ") "); i >= 0 {
			msg = msg[i+2:]
		}
	}

	for _, prefix := range []string{
		"error occurred during connection handshake: ",
		"auth error: ",
		"sasl conversation error: ",
	} {
		msg = strings.TrimPrefix(msg, prefix)
	}

	return msg
}

// ambiguousReason explains a connection string whose user information
// cannot be told from its hosts.
const ambiguousReason = "an '@' that does not end the user information (a password with an unescaped '@', '/', '?' or '#'?); " +
	"percent-encode those characters in the user name and password (%40, %2F, %3F, %23)"

// maxCauseLen caps the length of a cause taken from a server or driver
// message, so one error stays one readable terminal line.
const maxCauseLen = 300

// oneLine joins the lines of s with spaces and caps its length, so no
// multi-line driver or server message ever reaches the terminal as such.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")

	if r := []rune(s); len(r) > maxCauseLen {
		s = string(r[:maxCauseLen-1]) + "…"
	}

	return s
}

// scrubReason removes every trace of uri's secrets from reason, a message
// from the driver about uri. Beyond what redact.Error masks, it drops the
// quoted fragment that Go's URL unescaping quotes when the password has a
// bad %-escape, which is part of the password but not all of it.
func scrubReason(uri, reason string) string {
	if i := strings.Index(reason, "invalid password"); i >= 0 {
		reason = reason[:i] + "invalid password encoding (use %XX escapes for special characters)"
	}

	return redact.Error(errors.New(reason), uri)
}
