package errkind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

func mustRaw(t *testing.T, doc bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// refusedDial returns the real error of dialing a local port nobody listens
// on. A port freed by closing a listener can be taken by another process
// before the dial; each attempt uses a fresh port, and the test fails (it
// does not skip) if every one of them was taken.
func refusedDial(t *testing.T) error {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		if err := ln.Close(); err != nil {
			t.Fatal(err)
		}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		_ = conn.Close()
	}
	t.Fatal("20 freed ports were all listened on again before the dial")
	return nil
}

// readTimeout returns the real error of reading from a connection whose read
// deadline has passed.
func readTimeout(t *testing.T) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	_, err = conn.Read(make([]byte, 1))
	if err == nil {
		t.Fatal("read past the deadline succeeded")
	}
	return err
}

// decodeError returns the real error of decoding a string field into an int
// through the driver's SingleResult.
func decodeError(t *testing.T) error {
	t.Helper()
	res := mongo.NewSingleResultFromDocument(bson.D{{Key: "a", Value: "not a number"}}, nil, nil)
	var dst struct {
		A int `bson:"a"`
	}
	err := res.Decode(&dst)
	if err == nil {
		t.Fatal("decoding a string into an int succeeded")
	}
	return err
}

func TestOf(t *testing.T) {
	ce59 := mongo.CommandError{Code: 59, Name: "CommandNotFound", Message: "no such command: 'frob'"}
	tests := []struct {
		name string
		err  func(t *testing.T) error
		want string
	}{
		{"nil", func(*testing.T) error { return nil }, ""},
		{"plain error", func(*testing.T) error { return errors.New("boom") }, Other},
		{"client disconnected", func(*testing.T) error { return mongo.ErrClientDisconnected }, Other},

		{"context canceled", func(*testing.T) error { return context.Canceled }, Canceled},
		{"wrapped canceled", func(*testing.T) error { return fmt.Errorf("insert: %w", context.Canceled) }, Canceled},
		{"canceled pool wait", func(*testing.T) error { return topology.WaitQueueTimeoutError{Wrapped: context.Canceled} }, Canceled},
		{"canceled server selection", func(*testing.T) error {
			return topology.ServerSelectionError{Wrapped: context.Canceled}
		}, Canceled},
		{"canceled joined with server error", func(*testing.T) error { return errors.Join(ce59, context.Canceled) }, Canceled},

		{"deadline exceeded", func(*testing.T) error { return context.DeadlineExceeded }, Timeout},
		{"wrapped deadline", func(*testing.T) error { return fmt.Errorf("find: %w", context.DeadlineExceeded) }, Timeout},
		{"pool wait timeout", func(*testing.T) error { return topology.WaitQueueTimeoutError{} }, Timeout},
		{"max time ms expired", func(*testing.T) error {
			return mongo.CommandError{Code: 50, Name: "MaxTimeMSExpired"}
		}, Timeout},
		{"network timeout label", func(*testing.T) error {
			return mongo.CommandError{Labels: []string{"NetworkError", "NetworkTimeoutError"}}
		}, Timeout},
		{"write concern timeout", func(*testing.T) error {
			return mongo.WriteException{WriteConcernError: &mongo.WriteConcernError{Code: 50, Name: "MaxTimeMSExpired"}}
		}, Timeout},
		{"socket read timeout", readTimeout, Timeout},
		{"net op error with deadline", func(*testing.T) error {
			return &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
		}, Timeout},

		{"server selection", func(*testing.T) error {
			return topology.ServerSelectionError{Wrapped: errors.New("no reachable servers")}
		}, Network},
		{"server selection timed out", func(*testing.T) error {
			return fmt.Errorf("ping: %w", topology.ServerSelectionError{Wrapped: context.DeadlineExceeded})
		}, Network},
		{"network error label", func(*testing.T) error {
			return mongo.CommandError{
				Labels:  []string{"NetworkError"},
				Wrapped: topology.ConnectionError{ConnectionID: "localhost:27017[-3]", Wrapped: io.EOF},
			}
		}, Network},
		{"connection error", func(*testing.T) error {
			return topology.ConnectionError{ConnectionID: "localhost:27017[-3]", Wrapped: io.EOF}
		}, Network},
		{"dial refused", refusedDial, Network},
		{"net op error", func(*testing.T) error {
			return &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		}, Network},
		{"connection reset", func(*testing.T) error { return fmt.Errorf("read: %w", syscall.ECONNRESET) }, Network},
		{"unexpected eof", func(*testing.T) error { return fmt.Errorf("read: %w", io.ErrUnexpectedEOF) }, Network},

		{"duplicate key", func(*testing.T) error {
			return mongo.WriteException{WriteErrors: mongo.WriteErrors{{Code: 11000, Message: "E11000 duplicate key error"}}}
		}, DuplicateKey},
		{"duplicate key in bulk", func(*testing.T) error {
			return mongo.BulkWriteException{WriteErrors: []mongo.BulkWriteError{
				{WriteError: mongo.WriteError{Index: 3, Code: 11000}},
			}}
		}, DuplicateKey},
		{"duplicate key from command", func(*testing.T) error {
			return fmt.Errorf("insert: %w", mongo.CommandError{Code: 11000, Name: "DuplicateKey"})
		}, DuplicateKey},
		{"duplicate key in client bulk", func(*testing.T) error {
			return mongo.ClientBulkWriteException{WriteErrors: map[int]mongo.WriteError{4: {Code: 2}, 7: {Code: 11000}}}
		}, DuplicateKey},
		{"duplicate key wins over write concern", func(*testing.T) error {
			return mongo.WriteException{
				WriteErrors:       mongo.WriteErrors{{Code: 11000}},
				WriteConcernError: &mongo.WriteConcernError{Code: 64, Name: "WriteConcernFailed"},
			}
		}, DuplicateKey},

		{"write concern", func(*testing.T) error {
			return mongo.WriteException{WriteConcernError: &mongo.WriteConcernError{Code: 64, Name: "WriteConcernFailed"}}
		}, WriteConcern},
		{"write concern in bulk", func(*testing.T) error {
			return fmt.Errorf("insertMany: %w", mongo.BulkWriteException{
				WriteConcernError: &mongo.WriteConcernError{Code: 100, Name: "UnsatisfiableWriteConcern"},
			})
		}, WriteConcern},
		{"write concern in client bulk", func(*testing.T) error {
			return mongo.ClientBulkWriteException{WriteConcernErrors: []mongo.WriteConcernError{{Code: 64}}}
		}, WriteConcern},

		{"decode through single result", decodeError, Decode},
		{"decode through cursor", func(t *testing.T) error {
			cur, err := mongo.NewCursorFromDocuments([]any{bson.D{{Key: "a", Value: "x"}}}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !cur.Next(context.Background()) {
				t.Fatal(cur.Err())
			}
			var dst struct {
				A int `bson:"a"`
			}
			return cur.Decode(&dst)
		}, Decode},
		{"value decoder error", func(*testing.T) error {
			return fmt.Errorf("decode: %w", bson.ValueDecoderError{Name: "IntDecodeValue"})
		}, Decode},
		{"decode to nil", func(*testing.T) error { return fmt.Errorf("x: %w", bson.ErrDecodeToNil) }, Decode},
		{"no documents", func(*testing.T) error {
			return fmt.Errorf("findOne: %w", mongo.ErrNoDocuments)
		}, NoDocuments},

		{"command error with name", func(*testing.T) error { return ce59 }, "server_59_CommandNotFound"},
		{"wrapped command error", func(*testing.T) error { return fmt.Errorf("run: %w", ce59) }, "server_59_CommandNotFound"},
		{"command error without name", func(*testing.T) error { return mongo.CommandError{Code: 13} }, "server_13"},
		{"command error with odd name", func(*testing.T) error {
			return mongo.CommandError{Code: 2, Name: "Bad Value!"}
		}, "server_2_Bad_Value_"},
		{"negative code", func(*testing.T) error { return mongo.CommandError{Code: -1, Name: "Weird"} }, "server_-1_Weird"},
		{"command error without code", func(*testing.T) error {
			return mongo.CommandError{Message: "something"}
		}, Other},
		{"write error with code name", func(t *testing.T) error {
			raw := mustRaw(t, bson.D{
				{Key: "index", Value: 0},
				{Key: "code", Value: 121},
				{Key: "codeName", Value: "DocumentValidationFailure"},
				{Key: "errmsg", Value: "failed validation"},
			})
			return mongo.WriteException{WriteErrors: mongo.WriteErrors{{Code: 121, Raw: raw}}}
		}, "server_121_DocumentValidationFailure"},
		{"write error with unreadable raw", func(*testing.T) error {
			return mongo.WriteException{WriteErrors: mongo.WriteErrors{{Code: 121, Raw: bson.Raw{1, 2, 3}}}}
		}, "server_121"},
		{"bulk write error", func(*testing.T) error {
			return mongo.BulkWriteException{WriteErrors: []mongo.BulkWriteError{{WriteError: mongo.WriteError{Code: 66}}}}
		}, "server_66"},
		{"client bulk uses lowest index", func(*testing.T) error {
			return mongo.ClientBulkWriteException{WriteErrors: map[int]mongo.WriteError{
				9: {Code: 121}, 2: {Code: 66}, 5: {Code: 2},
			}}
		}, "server_66"},
		{"client bulk top-level error", func(*testing.T) error {
			return mongo.ClientBulkWriteException{WriteError: &mongo.WriteError{Code: 8000}}
		}, "server_8000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err(t)
			if got := Of(err); got != tt.want {
				t.Errorf("Of(%T %v) = %q, want %q", err, err, got, tt.want)
			}
		})
	}
}

func TestIsCanceled(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"canceled", context.Canceled, true},
		{"wrapped canceled", fmt.Errorf("a: %w", fmt.Errorf("b: %w", context.Canceled)), true},
		{"deadline", context.DeadlineExceeded, false},
		{"other", errors.New("canceled"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsCanceled(tt.err); got != tt.want {
				t.Errorf("IsCanceled(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestOfRealClient runs real driver operations against a local port where
// nothing listens, so the errors come from the driver itself rather than
// from hand-built values.
func TestOfRealClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a driver client")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	client, err := mongo.Connect(options.Client().
		ApplyURI("mongodb://" + addr + "/?directConnection=true").
		SetServerSelectionTimeout(300 * time.Millisecond).
		SetConnectTimeout(200 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	coll := client.Database("errkind").Collection("c")

	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"unreachable server", context.Background(), Network},
		{"canceled context", canceled, Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := coll.InsertOne(tt.ctx, bson.D{{Key: "x", Value: 1}})
			if err == nil {
				t.Fatal("insert into an unreachable server succeeded")
			}
			t.Logf("driver returned %T: %v", err, err)
			if got := Of(err); got != tt.want {
				t.Errorf("Of(%T %v) = %q, want %q", err, err, got, tt.want)
			}
		})
	}
}
