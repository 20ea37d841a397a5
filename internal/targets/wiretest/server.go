package wiretest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/base/alarm"
)

// defaultAddr keeps the server off the network and lets the kernel pick a
// free port, so parallel tests never collide.
const defaultAddr = "127.0.0.1:0"

// maxCommandNames bounds Stats.Requests, so that a client sending random
// command names cannot grow it without limit; further names are counted
// under otherCommands.
const (
	maxCommandNames = 256
	otherCommands   = "<other>"
)

// largeBuffer is the read-buffer capacity above which a connection drops its
// buffer after a message, so that one 48 MB insert does not pin 48 MB for
// the connection's lifetime.
const largeBuffer = 1 << 20

// Config configures a Server. The zero value is a null server on a free
// loopback port that answers at once and returns no documents from find.
type Config struct {
	// Addr is the TCP address to listen on; empty means 127.0.0.1 with a
	// port chosen by the kernel.
	Addr string

	// Latency decides how long each reply is held; nil means none. It can
	// be replaced later with SetLatency.
	Latency Latency

	// FindDocs is how many small documents find and aggregate return, so
	// that read paths in the code under test have something to decode.
	// Keep it modest: all of them go into a single reply.
	FindDocs int

	// Logger receives connection and protocol-error events; nil discards
	// them.
	Logger *slog.Logger

	// Record, when not nil, is called with every command the server
	// receives, before the reply, so that a test can check what a client
	// actually sent (the mix of operations, the keys its filters name). It
	// is called from connection goroutines at once, so it must be safe for
	// concurrent use; the command's bytes are valid only during the call
	// (copy them to keep them).
	Record func(c *Command)

	// CountInserts makes the server count the documents each insert
	// command sends, per namespace, and answer collStats with that count
	// (sizes zero), so that a growth-blocks run sees its collection grow
	// and a Latency can grow with it (Inserted). The server still stores
	// nothing: updates and deletes change no count, and find still returns
	// FindDocs documents. Off, collStats is an unknown command, as before.
	CountInserts bool
}

// Command is a received command, as Config.Record sees it.
type Command struct {
	// Name is the command's name, the first key of Body.
	Name string

	// Body is the command document.
	Body bson.Raw

	// Sequences holds the documents of the OP_MSG document sequences by
	// identifier: the driver sends an insert's "documents", an update's
	// "updates" and a delete's "deletes" there rather than in Body.
	Sequences map[string][]bson.Raw
}

// Server is a minimal MongoDB wire-protocol server: it answers the commands
// a driver and a load generator send with plausible, canned replies, holding
// each reply as long as its Latency says. It stores nothing.
//
// All methods are safe for concurrent use.
type Server struct {
	ln     net.Listener
	logger *slog.Logger
	record func(c *Command)
	start  time.Time

	// docs are the canned documents find returns; built once at Start and
	// only read afterwards, so connections share them without locking.
	docs bson.A

	latency atomic.Pointer[latencyBox]

	// wake releases held replies at their deadlines, and wakeAlarm is the
	// alarm it sleeps on, closed by Close to stop it.
	wake      *wakeups
	wakeAlarm alarm.Alarm

	// done is closed by Close to release replies being held.
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error

	// wg counts the accept loop and every connection goroutine, for Close
	// to wait on.
	wg sync.WaitGroup

	mu     sync.Mutex // guards closed and conns
	closed bool
	conns  map[net.Conn]struct{}

	nextConnID atomic.Int64
	nextReqID  atomic.Int32
	inFlight   atomic.Int64

	stats counters

	// countInserts is Config.CountInserts; inserted counts documents per
	// namespace under insMu, insertedTotal all of them.
	countInserts  bool
	insMu         sync.Mutex
	inserted      map[string]int64
	insertedTotal atomic.Int64
}

// latencyBox lets an interface value live behind an atomic pointer.
type latencyBox struct {
	l Latency
}

// Stats is a snapshot of what the server has seen since it started.
type Stats struct {
	// Requests counts commands by name (the command document's first key),
	// whether they arrived as OP_MSG or OP_QUERY, answered or not.
	Requests map[string]int64

	// Replies counts replies written to a connection. Requests held when
	// the server closed, and moreToCome requests, get none.
	Replies int64

	// MoreToCome counts OP_MSG requests flagged moreToCome (unacknowledged,
	// w:0 writes), which by protocol get no reply.
	MoreToCome int64

	// MaxInFlight is the largest number of requests being processed at
	// once, the load the server actually saw.
	MaxInFlight int

	// Connections counts accepted connections, which shows how many a
	// client's pool really opened.
	Connections int64

	// LegacyQueries counts requests that arrived as OP_QUERY, which drivers
	// use only for the first hello of a connection's handshake.
	LegacyQueries int64

	// ProtocolErrors counts connections closed because a message could not
	// be parsed.
	ProtocolErrors int64
}

// counters is the mutable side of Stats.
type counters struct {
	mu       sync.Mutex // guards requests
	requests map[string]int64

	replies        atomic.Int64
	moreToCome     atomic.Int64
	maxInFlight    atomic.Int64
	connections    atomic.Int64
	legacyQueries  atomic.Int64
	protocolErrors atomic.Int64
}

// Start listens on cfg.Addr and serves in the background until Close.
func Start(cfg Config) (*Server, error) {
	addr := cfg.Addr
	if addr == "" {
		addr = defaultAddr
	}

	docs, err := cannedDocs(cfg.FindDocs)
	if err != nil {
		return nil, err
	}

	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	// Without the precise alarm (a sandbox that forbids timerfd, say) the
	// server still works, with Go's timers' resolution.
	wakeAlarm, err := alarm.New()
	if err != nil {
		logger.Warn("wiretest: reply delays fall back to Go's timers", "err", err)
		wakeAlarm = alarm.NewTimer()
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		_ = wakeAlarm.Close()
		return nil, fmt.Errorf("wiretest: listen on %s: %w", addr, err)
	}

	s := &Server{
		ln:        ln,
		logger:    logger,
		record:    cfg.Record,
		start:     time.Now(),
		docs:      docs,
		wake:      newWakeups(time.Now, wakeAlarm, spinLead),
		wakeAlarm: wakeAlarm,
		done:      make(chan struct{}),
		conns:     make(map[net.Conn]struct{}),
		stats:     counters{requests: make(map[string]int64)},

		countInserts: cfg.CountInserts,
		inserted:     make(map[string]int64),
	}
	s.SetLatency(cfg.Latency)

	s.wg.Add(2)

	go s.acceptLoop()

	go func() {
		defer s.wg.Done()
		s.wake.run()
	}()

	return s, nil
}

// CannedDoc is the i-th document find and aggregate return: an
// application's record, with an ObjectId _id (as every collection of a
// workload has), strings, an int32, dates, a nested document and an array
// of strings, so that a client maps it as it maps real data (a typed Go
// struct, a Mongoose model, a MongoEngine document) and its decode cost
// is measured against a server that costs nearly nothing. The shape is
// that of workloads/studies/document-load.yaml's template; "value" is
// kept for clients that filter on it.
func CannedDoc(i int) bson.D {
	id := bson.ObjectID{0x66, 0x0d, 0x0c, 0x5e, 0x77, 0x69, 0x72, 0x65}
	binary.BigEndian.PutUint32(id[8:], uint32(i)) //nolint:gosec // wraps past 2^32 documents, never reached

	born := time.Date(1950+i%50, time.Month(1+i%12), 1+i%28, 0, 0, 0, 0, time.UTC)

	return bson.D{
		{Key: "_id", Value: id},
		{Key: "value", Value: "wiretest"},
		{Key: "name", Value: fmt.Sprintf("Ada Lovelace %d", i)},
		{Key: "age", Value: int32(18 + i%72)}, //nolint:gosec // 18..89
		{Key: "birthday", Value: born},
		{Key: "timestamp", Value: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)},
		{Key: "address", Value: bson.D{
			{Key: "street", Value: fmt.Sprintf("%d Wire Street", 1+i%300)},
			{Key: "city", Value: "Testville"},
			{Key: "zip", Value: fmt.Sprintf("%05d", i%100000)},
		}},
		{Key: "tags", Value: bson.A{"alpha", "beta", "gamma"}},
	}
}

// cannedDocs builds the documents find returns, encoded once so that
// replies only copy bytes.
func cannedDocs(n int) (bson.A, error) {
	docs := make(bson.A, max(n, 0))

	for i := range docs {
		raw, err := bson.Marshal(CannedDoc(i))
		if err != nil {
			return nil, fmt.Errorf("wiretest: encode find document: %w", err)
		}

		docs[i] = bson.Raw(raw)
	}

	return docs, nil
}

// URI returns a connection string for the driver. directConnection makes
// the driver treat the server as a standalone without topology discovery.
func (s *Server) URI() string {
	return "mongodb://" + s.hostPort() + "/?directConnection=true"
}

// Addr returns the address the server listens on, for tests that speak the
// wire protocol by hand.
func (s *Server) Addr() net.Addr {
	return s.ln.Addr()
}

// hostPort returns the listening address as host:port, replacing a
// wildcard IP with loopback so that the result is dialable.
func (s *Server) hostPort() string {
	tcp, isTCP := s.ln.Addr().(*net.TCPAddr)
	if !isTCP {
		return s.ln.Addr().String()
	}

	ip := tcp.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
		if tcp.IP != nil && tcp.IP.To4() == nil {
			ip = net.IPv6loopback
		}
	}

	return net.JoinHostPort(ip.String(), fmt.Sprint(tcp.Port))
}

// SetLatency replaces the latency for requests received from now on;
// requests already being held keep their deadline. Nil means no delay. A
// Stall placed with After is anchored to the server's start, not to this
// call.
func (s *Server) SetLatency(l Latency) {
	if l == nil {
		l = Fixed(0)
	}

	s.latency.Store(&latencyBox{l: anchorLatency(l, s.start)})
}

// Close stops listening, closes every connection, releases held replies
// without sending them and waits for all the server's goroutines. It is
// idempotent: later calls wait for the first to finish and return its
// result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true

		for c := range s.conns {
			_ = c.Close() // unblocks the connection's read
		}
		s.mu.Unlock()

		close(s.done)

		s.closeErr = errors.Join(s.ln.Close(), s.wakeAlarm.Close())
		s.wg.Wait()
	})

	return s.closeErr
}

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() Stats {
	s.stats.mu.Lock()
	requests := make(map[string]int64, len(s.stats.requests))
	for k, v := range s.stats.requests {
		requests[k] = v
	}
	s.stats.mu.Unlock()

	return Stats{
		Requests:       requests,
		Replies:        s.stats.replies.Load(),
		MoreToCome:     s.stats.moreToCome.Load(),
		MaxInFlight:    int(s.stats.maxInFlight.Load()),
		Connections:    s.stats.connections.Load(),
		LegacyQueries:  s.stats.legacyQueries.Load(),
		ProtocolErrors: s.stats.protocolErrors.Load(),
	}
}

// acceptLoop accepts connections until the listener closes.
func (s *Server) acceptLoop() {
	defer s.wg.Done()

	var backoff time.Duration

	for {
		c, err := s.ln.Accept()
		if err != nil {
			if s.isClosing() || errors.Is(err, net.ErrClosed) {
				return
			}

			// A transient failure such as running out of file descriptors:
			// back off, as net/http does, rather than spin.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.logger.Warn("wiretest: accept failed", "err", err, "retry_in", backoff)

			if !s.sleep(backoff) {
				return
			}

			continue
		}

		backoff = 0

		if !s.track(c) {
			_ = c.Close()
			return
		}

		go s.serveConn(c)
	}
}

// isClosing reports whether Close has begun.
func (s *Server) isClosing() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// sleep waits for d unless the server closes first, reporting whether the
// full duration passed.
func (s *Server) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()

	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	}
}

// track registers a new connection, refusing it once Close has begun.
// Registering and counting it in wg under the same lock that Close takes
// guarantees that Close either closes and waits for it, or it is refused.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()

	if s.closed {
		return false
	}

	s.conns[c] = struct{}{}
	s.wg.Add(1)

	return true
}

// untrack forgets and closes a connection whose goroutine is ending.
func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()

	_ = c.Close()
}

// conn is the per-connection state reused from one request to the next.
type conn struct {
	net.Conn
	id  int64
	in  []byte // the current message after its header
	out []byte // the current reply
}

// serveConn reads and answers one connection's requests, one at a time.
// That is how MongoDB serves a connection, and drivers never pipeline
// requests on one connection (they wait for each reply, or send moreToCome
// requests that want none), so reading the next request only after
// answering this one loses nothing and keeps a held reply holding up its
// connection, as on a real server.
func (s *Server) serveConn(nc net.Conn) {
	defer s.wg.Done()
	defer s.untrack(nc)

	c := &conn{Conn: nc, id: s.nextConnID.Add(1)}
	s.stats.connections.Add(1)
	s.logger.Debug("wiretest: connection opened", "conn", c.id, "remote", nc.RemoteAddr().String())

	r := bufio.NewReader(nc)

	var hdr [headerLen]byte

	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			s.logger.Debug("wiretest: connection closed", "conn", c.id, "err", err)
			return
		}

		h, err := parseHeader(hdr[:])
		if err != nil {
			s.protocolError(c, err)
			return
		}

		n := int(h.length) - headerLen
		if cap(c.in) < n {
			c.in = make([]byte, n)
		}

		c.in = c.in[:n]

		if _, err := io.ReadFull(r, c.in); err != nil {
			s.logger.Debug("wiretest: connection closed mid-message", "conn", c.id, "err", err)
			return
		}

		received := time.Now()

		req, err := parseMessage(h, c.in)
		if err != nil {
			s.protocolError(c, err)
			return
		}

		if !s.handle(c, req, received) {
			return
		}

		if cap(c.in) > largeBuffer {
			c.in = nil
		}
	}
}

// protocolError records and logs a message that could not be parsed; the
// caller then closes the connection, since its byte stream can no longer be
// trusted to be framed correctly.
func (s *Server) protocolError(c *conn, err error) {
	s.stats.protocolErrors.Add(1)
	s.logger.Warn("wiretest: closing connection after malformed message", "conn", c.id, "err", err)
}

// handle answers one request, holding the reply until its latency has
// passed. It reports whether the connection should go on.
func (s *Server) handle(c *conn, req *request, received time.Time) bool {
	inFlight := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)

	s.stats.noteInFlight(inFlight)

	cmd := req.command()
	s.stats.count(cmd, req)

	if s.record != nil {
		s.record(req.recorded(cmd))
	}

	if s.countInserts && cmd == "insert" {
		s.noteInserted(namespace(req.db(), req.body), req.countDocs("documents"))
	}

	delay := s.latency.Load().l.Delay(received, int(inFlight))

	if !req.moreToCome {
		doc, err := bson.Marshal(s.answer(req, cmd, c.id, received))
		if err != nil {
			s.logger.Error("wiretest: encode reply", "conn", c.id, "command", cmd, "err", err)
			return false
		}

		reqID := s.nextReqID.Add(1)
		if req.opCode == opQuery {
			c.out = appendOpReply(c.out[:0], reqID, req.requestID, doc)
		} else {
			c.out = appendMsgReply(c.out[:0], reqID, req.requestID, doc)
		}
	}

	// A moreToCome request is held too: the server is "busy" with it, so
	// the connection's next request waits, as it would on a real server.
	if !s.hold(received.Add(delay)) {
		return false
	}

	if req.moreToCome {
		return true
	}

	if _, err := c.Write(c.out); err != nil {
		s.logger.Debug("wiretest: write reply", "conn", c.id, "err", err)
		return false
	}

	s.stats.replies.Add(1)

	if cap(c.out) > largeBuffer {
		c.out = nil
	}

	return true
}

// hold waits until deadline, or until the server closes, reporting whether
// the deadline was reached. The wait is the shared wakeups scheduler's, not
// a timer per connection: see wakeup.go for why.
func (s *Server) hold(deadline time.Time) bool {
	if !time.Now().Before(deadline) {
		return !s.isClosing()
	}

	select {
	case <-s.wake.at(deadline):
		return true
	case <-s.done:
		return false
	}
}

// noteInFlight raises maxInFlight to n if n is larger.
func (st *counters) noteInFlight(n int64) {
	for {
		cur := st.maxInFlight.Load()
		if n <= cur || st.maxInFlight.CompareAndSwap(cur, n) {
			return
		}
	}
}

// count records a request under its command name.
func (st *counters) count(cmd string, req *request) {
	if req.opCode == opQuery {
		st.legacyQueries.Add(1)
	}

	if req.moreToCome {
		st.moreToCome.Add(1)
	}

	st.mu.Lock()
	defer st.mu.Unlock()

	if _, known := st.requests[cmd]; !known && len(st.requests) >= maxCommandNames {
		cmd = otherCommands
	}

	st.requests[cmd]++
}

// noteInserted counts n documents inserted into namespace ns.
func (s *Server) noteInserted(ns string, n int) {
	s.insMu.Lock()
	s.inserted[ns] += int64(n)
	s.insMu.Unlock()

	s.insertedTotal.Add(int64(n))
}

// Inserted is how many documents insert commands have sent, in every
// namespace, with Config.CountInserts (0 without): a Latency that grows
// with the data can read it.
func (s *Server) Inserted() int64 { return s.insertedTotal.Load() }

// insertedInto is the count of documents inserted into namespace ns.
func (s *Server) insertedInto(ns string) int64 {
	s.insMu.Lock()
	defer s.insMu.Unlock()

	return s.inserted[ns]
}
