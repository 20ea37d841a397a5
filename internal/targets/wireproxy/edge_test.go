package wireproxy_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestUnacknowledgedWrite records a write sent with moreToCome (w: 0),
// which has no reply, without leaving it pending.
func TestUnacknowledgedWrite(t *testing.T) {
	srv, err := wiretest.Start(wiretest.Config{})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	p, out := startProxy(t, srv.URI())
	// One connection, so that the ping below follows the insert on it.
	c, err := mongo.Connect(options.Client().ApplyURI(p.URI()).SetMaxPoolSize(1).SetTimeout(30 * time.Second))
	if err != nil {
		t.Fatal(err)
	}

	coll := c.Database("wp").Collection("events", options.Collection().SetWriteConcern(writeconcern.Unacknowledged()))
	if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "kind", Value: "click"}}); err != nil {
		t.Fatal(err)
	}

	// A ping after it on the one connection: once it is answered, the
	// server has read the insert before it.
	if err := c.Database("wp").RunCommand(t.Context(), bson.D{{Key: "ping", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}

	if err := c.Disconnect(t.Context()); err != nil {
		t.Fatal(err)
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	if srv.Stats().MoreToCome != 1 {
		t.Fatalf("the server saw %d unacknowledged requests, want 1", srv.Stats().MoreToCome)
	}

	var inserts []*entry

	for _, l := range parseRecording(t, out.Bytes()) {
		if l.name() == "insert" {
			inserts = append(inserts, l)
		}
	}

	if len(inserts) != 1 || inserts[0].Attr.NS != "wp.events" || *inserts[0].Attr.DurationMillis != 0 || inserts[0].Attr.NInserted != nil {
		t.Fatalf("insert lines %v: want one on wp.events, duration 0 and no count (no reply)", inserts)
	}

	if s := p.Stats(); s.Unanswered != 0 {
		t.Errorf("Stats %+v: the unacknowledged write is pending", s)
	}
}

// TestCompressedPassesThrough forwards an OP_COMPRESSED message unread
// and counts it: the server, not the proxy, decides what to do with it.
func TestCompressedPassesThrough(t *testing.T) {
	srv, err := wiretest.Start(wiretest.Config{})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	p, out := startProxy(t, srv.URI())

	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}

	defer conn.Close()

	// Header, then originalOpcode, uncompressedSize, compressorId (noop)
	// and the "compressed" bytes.
	body := binary.LittleEndian.AppendUint32(nil, wiretest.OpMsg)
	body = binary.LittleEndian.AppendUint32(body, 4)
	body = append(body, 0, 0, 0, 0, 0)

	msg := binary.LittleEndian.AppendUint32(nil, uint32(wiretest.HeaderLen+len(body)))
	msg = binary.LittleEndian.AppendUint32(msg, 1)
	msg = binary.LittleEndian.AppendUint32(msg, 0)
	msg = binary.LittleEndian.AppendUint32(msg, wiretest.OpCompressed)
	msg = append(msg, body...)

	if _, err := conn.Write(msg); err != nil {
		t.Fatal(err)
	}

	// The test server closes a connection on an opcode it does not know,
	// and the proxy closes the client's side in turn.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadAll(conn); err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("reading until the proxy closes: %v", err)
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	if s := p.Stats(); s.Compressed != 1 || s.Unreadable != 0 || s.Commands != 0 {
		t.Errorf("Stats %+v: want one compressed message and nothing recorded", s)
	}

	if bytes.Contains(out.Bytes(), []byte("Slow query")) {
		t.Errorf("a compressed message was recorded:\n%s", out)
	}
}
