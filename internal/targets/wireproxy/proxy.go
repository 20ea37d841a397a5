// Package wireproxy is a recording proxy for the MongoDB wire protocol: an
// application points at it instead of its server, it forwards every byte
// both ways, and it writes each command that passes through, with the time
// the server took to answer it, as a line of mongod's JSON log (logv2, a
// "Slow query" entry). A recording is therefore read like a server log
// that had slowms 0: `mongobench capture RECORDING` turns either into a
// workload, and a recording can be made in front of any server (FerretDB,
// the embedded one, mongod, a managed service without log access).
//
// It reads OP_MSG, and OP_QUERY with OP_REPLY for the legacy first hello,
// with the framing of internal/targets/wiretest. It removes the
// compressors a client offers in its hello, so that no compression is
// negotiated and the traffic stays readable; an OP_COMPRESSED that still
// arrives (a client that compresses unasked) is forwarded and counted, not
// decoded. It speaks neither TLS nor SRV: the application connects to it in
// plain TCP and directly (directConnection=true), and it to one server.
//
// It never records a credential: authentication commands are written with
// their name and mechanism only, hello's speculative authentication is
// left out, and so is every field whose name redact.IsSecretKey calls a
// secret, at any depth; values the caller knows to be secret (the
// upstream URI's password) are masked in every line besides.
package wireproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// Config is what a proxy listens on, forwards to and records into.
type Config struct {
	// Listen is the address to listen on; "" is a free port of 127.0.0.1.
	Listen string

	// Upstream is the server's host:port (see UpstreamAddr).
	Upstream string

	// Out receives the recording, one JSON line per entry. Writes are
	// serialised by the proxy, and buffered: Close flushes them.
	Out io.Writer

	// Secrets are values masked in every line (Known.Mask), whatever field
	// they appear in.
	Secrets redact.Known

	// Now is the clock of the recording; nil is time.Now.
	Now func() time.Time

	// Dial connects to the upstream; nil is a plain TCP dial with a
	// 10-second timeout.
	Dial func(network, addr string) (net.Conn, error)
}

// Stats counts what a proxy saw.
type Stats struct {
	// Connections is how many clients connected.
	Connections int64
	// Commands is how many commands were recorded (an update or delete
	// command counts once, however many statement lines it wrote).
	Commands int64
	// Unanswered is how many requests had no reply when their connection
	// closed.
	Unanswered int64
	// Compressed is how many OP_COMPRESSED messages were forwarded
	// unread.
	Compressed int64
	// Unreadable is how many other messages could not be parsed and were
	// forwarded unread.
	Unreadable int64
	// DialErrors is how many client connections were closed because the
	// upstream could not be reached.
	DialErrors int64
}

// Proxy is a running recording proxy. Its methods are safe for concurrent
// use.
type Proxy struct {
	cfg Config
	ln  net.Listener
	rec *recorder

	connID      atomic.Int64
	connections atomic.Int64
	open        atomic.Int64
	unanswered  atomic.Int64
	compressed  atomic.Int64
	unreadable  atomic.Int64
	dialErrors  atomic.Int64

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	done  bool

	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// UpstreamAddr returns the host:port of the one server a connection string
// names, or why the proxy cannot stand in front of it. The error never
// quotes the password.
func UpstreamAddr(uri string) (string, error) {
	if strings.HasPrefix(uri, "mongodb+srv://") {
		return "", errors.New("a mongodb+srv:// URI names a cluster through DNS; give one server as mongodb://HOST:PORT")
	}

	cs, err := connstring.Parse(uri)
	if err != nil {
		return "", errors.New(redact.Error(err, uri))
	}

	switch {
	case len(cs.Hosts) != 1:
		return "", fmt.Errorf("the URI names %d servers; the proxy stands in front of one: give one server as mongodb://HOST:PORT", len(cs.Hosts))
	case cs.SSL:
		return "", errors.New("the URI asks for TLS, which the proxy does not speak; record in front of a server reachable without TLS")
	}

	host := cs.Hosts[0]
	if strings.HasPrefix(host, "/") || strings.HasSuffix(host, ".sock") {
		return "", errors.New("the URI names a Unix socket; give the server's TCP address")
	}

	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "27017")
	}

	return host, nil
}

// URISecrets returns the secrets a connection string holds (its password),
// for Config.Secrets: the proxy does not log in itself (the application
// does, through it), but a password the user typed must not reach the
// recording even when the application sends it in a field of its own.
func URISecrets(uri string) redact.Known {
	cs, err := connstring.Parse(uri)
	if err != nil || !cs.PasswordSet {
		return redact.KnownValues()
	}

	return redact.KnownValues(cs.Password)
}

// Start listens and serves until Close.
func Start(cfg Config) (*Proxy, error) {
	if cfg.Upstream == "" {
		return nil, errors.New("wireproxy: no upstream address")
	}

	if cfg.Out == nil {
		return nil, errors.New("wireproxy: no output")
	}

	if cfg.Now == nil {
		cfg.Now = time.Now
	}

	if cfg.Dial == nil {
		cfg.Dial = func(network, addr string) (net.Conn, error) {
			return net.DialTimeout(network, addr, 10*time.Second)
		}
	}

	listen := cfg.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", listen, err)
	}

	p := &Proxy{
		cfg:   cfg,
		ln:    ln,
		rec:   newRecorder(bufio.NewWriterSize(cfg.Out, 64<<10), cfg.Secrets),
		conns: map[net.Conn]struct{}{},
	}

	p.wg.Add(1)

	go p.accept()

	return p, nil
}

// Addr is the address the proxy listens on.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URI is the connection string an application uses to go through the
// proxy: a direct connection, since the server's hello may name other
// members that the driver would otherwise connect to past the proxy.
func (p *Proxy) URI() string { return "mongodb://" + p.Addr() + "/?directConnection=true" }

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	return Stats{
		Connections: p.connections.Load(),
		Commands:    p.rec.commands.Load(),
		Unanswered:  p.unanswered.Load(),
		Compressed:  p.compressed.Load(),
		Unreadable:  p.unreadable.Load(),
		DialErrors:  p.dialErrors.Load(),
	}
}

// Close stops listening, closes every connection (both sides), waits for
// their goroutines and flushes the recording. It returns the first error
// of writing the recording, if any.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.done = true
		_ = p.ln.Close()

		for c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()

		p.wg.Wait()
		p.closeErr = p.rec.flush()
	})

	return p.closeErr
}

// track registers c to be closed by Close; false when Close has begun.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()

	if p.done {
		return false
	}

	p.conns[c] = struct{}{}

	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	defer p.wg.Done()

	for {
		c, err := p.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}

			return // closed
		}

		if !p.track(c) {
			_ = c.Close()
			return
		}

		p.wg.Add(1)

		go p.serve(c)
	}
}

// serve relays one client connection to its own upstream connection.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client)
	defer client.Close()

	up, err := p.cfg.Dial("tcp", p.cfg.Upstream)
	if err != nil {
		p.dialErrors.Add(1)
		return
	}

	if !p.track(up) {
		_ = up.Close()
		return
	}

	defer p.untrack(up)
	defer up.Close()

	id := p.connID.Add(1)
	p.connections.Add(1)

	c := &conn{
		id:      id,
		remote:  client.RemoteAddr().String(),
		pending: map[int32]*pending{},
	}

	p.rec.connection(p.cfg.Now(), c, true, p.open.Add(1))

	var relay sync.WaitGroup

	relay.Add(1)

	go func() {
		defer relay.Done()
		p.replies(c, up, client)
		// The server closed, or the client side failed: end both.
		_ = client.Close()
	}()

	p.requests(c, client, up)
	_ = up.Close()

	relay.Wait()

	c.mu.Lock()
	p.unanswered.Add(int64(len(c.pending)))
	c.mu.Unlock()

	p.rec.connection(p.cfg.Now(), c, false, p.open.Add(-1))
}

// conn is what the two directions of one connection share: the requests
// awaiting their replies, by requestID.
type conn struct {
	id     int64
	remote string

	mu      sync.Mutex
	pending map[int32]*pending
}

// maxPending bounds the requests a connection keeps awaiting replies: a
// client that pipelines unanswered requests without end (or a server that
// never answers) must not grow the proxy's memory.
const maxPending = 4096

// requests forwards the client's messages to the server, noting each
// request and when it was read.
func (p *Proxy) requests(c *conn, client io.Reader, up io.Writer) {
	var buf []byte

	for {
		msg, err := wiretest.ReadFrame(client, buf)
		if err != nil {
			return
		}

		buf = msg[:0]
		now := p.cfg.Now()

		switch f, perr := wiretest.ParseFrame(msg); {
		case perr == nil && (f.OpCode == wiretest.OpMsg || f.OpCode == wiretest.OpQuery):
			if out, changed := stripCompression(msg, f); changed {
				msg = out
				if f, perr = wiretest.ParseFrame(msg); perr != nil {
					p.unreadable.Add(1)
					break
				}
			}

			req := newPending(f, now)
			if f.MoreToCome {
				// No reply will come: the time the server took is unknown.
				p.rec.record(now, c, req, nil, 0)
				break
			}

			c.mu.Lock()
			if len(c.pending) < maxPending {
				c.pending[f.RequestID] = req
			}
			c.mu.Unlock()
		case perr == nil:
			p.unreadable.Add(1) // a reply opcode from a client
		case len(msg) >= wiretest.HeaderLen && opCode(msg) == wiretest.OpCompressed:
			p.compressed.Add(1)
		default:
			p.unreadable.Add(1)
		}

		if _, err := up.Write(msg); err != nil {
			return
		}
	}
}

// replies forwards the server's messages to the client and records each
// request its reply answers.
func (p *Proxy) replies(c *conn, up io.Reader, client io.Writer) {
	var buf []byte

	for {
		msg, err := wiretest.ReadFrame(up, buf)
		if err != nil {
			return
		}

		buf = msg[:0]
		now := p.cfg.Now()

		if _, err := client.Write(msg); err != nil {
			return
		}

		f, perr := wiretest.ParseFrame(msg)
		if perr != nil {
			if len(msg) >= wiretest.HeaderLen && opCode(msg) == wiretest.OpCompressed {
				p.compressed.Add(1)
			} else {
				p.unreadable.Add(1)
			}

			// Its request stays pending: counted as unanswered at the end.
			continue
		}

		c.mu.Lock()
		req := c.pending[f.ResponseTo]
		delete(c.pending, f.ResponseTo)

		if req != nil && f.MoreToCome {
			// An exhaust cursor or a streaming hello: the next reply
			// answers this one, and is timed from it.
			c.pending[f.RequestID] = &pending{cmd: req.cmd, name: req.name, db: req.db, protocol: req.protocol, start: now}
		}
		c.mu.Unlock()

		if req != nil {
			p.rec.record(now, c, req, f, len(msg))
		}
	}
}

func opCode(msg []byte) int32 {
	return int32(uint32(msg[12]) | uint32(msg[13])<<8 | uint32(msg[14])<<16 | uint32(msg[15])<<24)
}
