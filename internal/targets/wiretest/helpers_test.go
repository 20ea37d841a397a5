package wiretest_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// opTimeout bounds every operation a test performs, so that a bug shows up
// as a failure instead of a hung test binary. It is a hang guard, never a
// latency assertion.
const opTimeout = 30 * time.Second

// startServer starts a server that the test closes at cleanup.
func startServer(t testing.TB, cfg wiretest.Config) *wiretest.Server {
	t.Helper()

	s, err := wiretest.Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}

	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})

	return s
}

// connect returns a driver client for s, disconnected at cleanup (before
// the server closes, since cleanups run last-in first-out). The heartbeat is
// slowed down so that background hellos do not disturb request counts.
func connect(t testing.TB, s *wiretest.Server, opts ...*options.ClientOptions) *mongo.Client {
	t.Helper()

	all := append([]*options.ClientOptions{
		options.Client().ApplyURI(s.URI()).SetHeartbeatInterval(time.Minute),
	}, opts...)

	client, err := mongo.Connect(all...)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}

	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()

		_ = client.Disconnect(ctx) // endSessions may fail once the server is gone
	})

	return client
}

// testContext returns a context bounded by opTimeout.
func testContext(t testing.TB) context.Context {
	t.Helper()

	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	t.Cleanup(cancel)

	return ctx
}

// waitFor polls cond until it holds, failing the test after opTimeout. It
// is for counters that the server updates just after the client has seen
// the effect (a reply is counted once written, and the client may read it
// first).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()

	deadline := time.Now().Add(opTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}

		time.Sleep(5 * time.Millisecond)
	}
}

// Wire-protocol constants for hand-built messages.
const (
	opReply = 1
	opQuery = 2004
	opMsg   = 2013
)

// message frames body with a standard header.
func message(requestID, opCode int32, body []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(16+len(body)))
	b = binary.LittleEndian.AppendUint32(b, uint32(requestID))
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(opCode))

	return append(b, body...)
}

// mustMarshal encodes doc or fails the test.
func mustMarshal(t testing.TB, doc any) []byte {
	t.Helper()

	b, err := bson.Marshal(doc)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}

	return b
}

// reply is a decoded server reply.
type reply struct {
	responseTo int32
	opCode     int32
	doc        bson.Raw
}

// readReply reads one OP_MSG or OP_REPLY from c and extracts its document.
func readReply(t testing.TB, c net.Conn) reply {
	t.Helper()

	_ = c.SetReadDeadline(time.Now().Add(opTimeout))

	var hdr [16]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		t.Fatalf("read reply header: %v", err)
	}

	length := int(binary.LittleEndian.Uint32(hdr[0:4]))
	r := reply{
		responseTo: int32(binary.LittleEndian.Uint32(hdr[8:12])),
		opCode:     int32(binary.LittleEndian.Uint32(hdr[12:16])),
	}

	body := make([]byte, length-16)
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatalf("read reply body: %v", err)
	}

	switch r.opCode {
	case opMsg:
		if body[4] != 0 {
			t.Fatalf("OP_MSG reply section kind %d, want 0", body[4])
		}

		r.doc = bson.Raw(body[5:])
	case opReply:
		if n := binary.LittleEndian.Uint32(body[16:20]); n != 1 {
			t.Fatalf("OP_REPLY numberReturned %d, want 1", n)
		}

		r.doc = bson.Raw(body[20:])
	default:
		t.Fatalf("reply opcode %d", r.opCode)
	}

	if err := r.doc.Validate(); err != nil {
		t.Fatalf("reply document: %v", err)
	}

	return r
}

// dial opens a raw TCP connection to s, closed at cleanup.
func dial(t testing.TB, s *wiretest.Server) net.Conn {
	t.Helper()

	c, err := net.DialTimeout("tcp", s.Addr().String(), opTimeout)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}

	t.Cleanup(func() { _ = c.Close() })

	return c
}

// expectClosed reads from c until the server closes it, failing if it
// sends anything or keeps the connection open past opTimeout.
func expectClosed(t testing.TB, c net.Conn) {
	t.Helper()

	_ = c.SetReadDeadline(time.Now().Add(opTimeout))

	var buf [64]byte

	n, err := c.Read(buf[:])
	if n > 0 {
		t.Fatalf("server sent %d bytes instead of closing", n)
	}

	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("server kept the connection open: %v", err)
	}

	if err == nil {
		t.Fatal("read returned neither data nor error")
	}
}
