package wiretest_test

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// findDocs is the FindDocs of the servers the driver tests talk to.
const findDocs = 3

func TestDriverCommands(t *testing.T) {
	s := startServer(t, wiretest.Config{FindDocs: findDocs})
	client := connect(t, s)
	db := client.Database("bench")
	coll := db.Collection("things")

	tests := []struct {
		name string
		run  func(t *testing.T, ctx context.Context)
	}{
		{"ping", func(t *testing.T, ctx context.Context) {
			if err := client.Ping(ctx, nil); err != nil {
				t.Fatal(err)
			}
		}},
		{"insertOne", func(t *testing.T, ctx context.Context) {
			res, err := coll.InsertOne(ctx, bson.D{{Key: "a", Value: 1}})
			if err != nil {
				t.Fatal(err)
			}

			if res.InsertedID == nil {
				t.Error("no inserted id")
			}
		}},
		{"insertMany", func(t *testing.T, ctx context.Context) {
			docs := []any{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 2}}, bson.D{{Key: "a", Value: 3}}}

			res, err := coll.InsertMany(ctx, docs)
			if err != nil {
				t.Fatal(err)
			}

			if len(res.InsertedIDs) != len(docs) {
				t.Errorf("inserted %d ids, want %d", len(res.InsertedIDs), len(docs))
			}
		}},
		{"insert command with documents array", func(t *testing.T, ctx context.Context) {
			// The driver sends documents as an OP_MSG sequence; a hand-written
			// command puts them in the body, which must count the same.
			var res struct {
				N int `bson:"n"`
			}

			cmd := bson.D{{Key: "insert", Value: "things"}, {Key: "documents", Value: bson.A{bson.D{}, bson.D{}}}}
			if err := db.RunCommand(ctx, cmd).Decode(&res); err != nil {
				t.Fatal(err)
			}

			if res.N != 2 {
				t.Errorf("n = %d, want 2", res.N)
			}
		}},
		{"find", func(t *testing.T, ctx context.Context) {
			cur, err := coll.Find(ctx, bson.D{})
			if err != nil {
				t.Fatal(err)
			}

			var got []bson.M
			if err := cur.All(ctx, &got); err != nil {
				t.Fatal(err)
			}

			if len(got) != findDocs {
				t.Fatalf("find returned %d documents, want %d", len(got), findDocs)
			}

			for i, d := range got {
				if d["_id"] != wiretest.CannedDoc(i)[0].Value {
					t.Errorf("document %d has _id %v", i, d["_id"])
				}
			}
		}},
		{"find with limit", func(t *testing.T, ctx context.Context) {
			cur, err := coll.Find(ctx, bson.D{}, options.Find().SetLimit(2))
			if err != nil {
				t.Fatal(err)
			}

			var got []bson.M
			if err := cur.All(ctx, &got); err != nil {
				t.Fatal(err)
			}

			if len(got) != 2 {
				t.Errorf("find returned %d documents, want 2", len(got))
			}
		}},
		{"findOne", func(t *testing.T, ctx context.Context) {
			var got bson.M
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 0}}).Decode(&got); err != nil {
				t.Fatal(err)
			}

			if got["value"] != "wiretest" {
				t.Errorf("findOne returned %v", got)
			}
		}},
		{"aggregate", func(t *testing.T, ctx context.Context) {
			cur, err := coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$match", Value: bson.D{}}}})
			if err != nil {
				t.Fatal(err)
			}

			var got []bson.M
			if err := cur.All(ctx, &got); err != nil {
				t.Fatal(err)
			}

			if len(got) != findDocs {
				t.Errorf("aggregate returned %d documents, want %d", len(got), findDocs)
			}
		}},
		{"countDocuments", func(t *testing.T, ctx context.Context) {
			n, err := coll.CountDocuments(ctx, bson.D{})
			if err != nil {
				t.Fatal(err)
			}

			if n != 0 {
				t.Errorf("count = %d, want 0", n)
			}
		}},
		{"estimatedDocumentCount", func(t *testing.T, ctx context.Context) {
			n, err := coll.EstimatedDocumentCount(ctx)
			if err != nil {
				t.Fatal(err)
			}

			if n != 0 {
				t.Errorf("count = %d, want 0", n)
			}
		}},
		{"updateOne", func(t *testing.T, ctx context.Context) {
			res, err := coll.UpdateOne(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 2}}}})
			if err != nil {
				t.Fatal(err)
			}

			if res.MatchedCount != 1 || res.ModifiedCount != 1 {
				t.Errorf("matched %d, modified %d; want 1, 1", res.MatchedCount, res.ModifiedCount)
			}
		}},
		{"replaceOne", func(t *testing.T, ctx context.Context) {
			res, err := coll.ReplaceOne(ctx, bson.D{}, bson.D{{Key: "a", Value: 3}})
			if err != nil {
				t.Fatal(err)
			}

			if res.MatchedCount != 1 {
				t.Errorf("matched %d, want 1", res.MatchedCount)
			}
		}},
		{"deleteMany", func(t *testing.T, ctx context.Context) {
			res, err := coll.DeleteMany(ctx, bson.D{})
			if err != nil {
				t.Fatal(err)
			}

			if res.DeletedCount != 1 {
				t.Errorf("deleted %d, want 1", res.DeletedCount)
			}
		}},
		{"createIndexes", func(t *testing.T, ctx context.Context) {
			name, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}})
			if err != nil {
				t.Fatal(err)
			}

			if name != "a_1" {
				t.Errorf("index name %q", name)
			}
		}},
		{"createCollection", func(t *testing.T, ctx context.Context) {
			if err := db.CreateCollection(ctx, "other"); err != nil {
				t.Fatal(err)
			}
		}},
		{"listCollectionNames", func(t *testing.T, ctx context.Context) {
			names, err := db.ListCollectionNames(ctx, bson.D{})
			if err != nil {
				t.Fatal(err)
			}

			if len(names) != 0 {
				t.Errorf("collections %v, want none", names)
			}
		}},
		{"listDatabaseNames", func(t *testing.T, ctx context.Context) {
			names, err := client.ListDatabaseNames(ctx, bson.D{})
			if err != nil {
				t.Fatal(err)
			}

			if len(names) != 0 {
				t.Errorf("databases %v, want none", names)
			}
		}},
		{"buildInfo", func(t *testing.T, ctx context.Context) {
			var res struct {
				Version  string `bson:"version"`
				WireTest bool   `bson:"wiretest"`
			}

			if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&res); err != nil {
				t.Fatal(err)
			}

			if res.Version != "7.0.0" || !res.WireTest {
				t.Errorf("buildInfo %+v", res)
			}
		}},
		{"drop collection", func(t *testing.T, ctx context.Context) {
			if err := coll.Drop(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"drop database", func(t *testing.T, ctx context.Context) {
			if err := db.Drop(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"getMore and killCursors", func(t *testing.T, ctx context.Context) {
			// The driver never sends these to this server, whose cursors are
			// always exhausted, but a hand-written client may.
			var more struct {
				Cursor struct {
					NextBatch []bson.Raw `bson:"nextBatch"`
					ID        int64      `bson:"id"`
					NS        string     `bson:"ns"`
				} `bson:"cursor"`
			}

			cmd := bson.D{{Key: "getMore", Value: int64(7)}, {Key: "collection", Value: "things"}}
			if err := db.RunCommand(ctx, cmd).Decode(&more); err != nil {
				t.Fatal(err)
			}

			if len(more.Cursor.NextBatch) != 0 || more.Cursor.ID != 0 || more.Cursor.NS != "bench.things" {
				t.Errorf("getMore %+v", more)
			}

			cmd = bson.D{{Key: "killCursors", Value: "things"}, {Key: "cursors", Value: bson.A{int64(7)}}}
			if err := db.RunCommand(ctx, cmd).Err(); err != nil {
				t.Fatal(err)
			}
		}},
		{"unknown command", func(t *testing.T, ctx context.Context) {
			err := db.RunCommand(ctx, bson.D{{Key: "frobnicate", Value: 1}}).Err()

			var ce mongo.CommandError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T), want a CommandError", err, err)
			}

			if ce.Code != 59 || ce.Name != "CommandNotFound" {
				t.Errorf("code %d %q, want 59 CommandNotFound", ce.Code, ce.Name)
			}
		}},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, testContext(t))
		})
	}
}

func TestUnacknowledgedWrite(t *testing.T) {
	s := startServer(t, wiretest.Config{})
	// One pooled connection, so that the ping after the w:0 insert travels
	// on the same connection: a stray reply to the insert would be read as
	// the ping's reply and fail it.
	client := connect(t, s, options.Client().SetMaxPoolSize(1))
	ctx := testContext(t)

	coll := client.Database("bench").Collection("things", options.Collection().SetWriteConcern(writeconcern.Unacknowledged()))

	if _, err := coll.InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatalf("w:0 insert: %v", err)
	}

	if err := client.Ping(ctx, nil); err != nil {
		t.Fatalf("ping after w:0 insert: %v", err)
	}

	st := s.Stats()
	if st.MoreToCome != 1 || st.Requests["insert"] != 1 {
		t.Fatalf("moreToCome %d, insert %d; want 1, 1", st.MoreToCome, st.Requests["insert"])
	}

	// Every request but the moreToCome one is answered; the counters settle
	// once the server has finished writing.
	waitFor(t, "replies to match answered requests", func() bool {
		st := s.Stats()

		var total int64
		for _, n := range st.Requests {
			total += n
		}

		return st.Replies == total-st.MoreToCome
	})
}

func TestLatencyLowerBound(t *testing.T) {
	const minDelay = 50 * time.Millisecond

	tests := []struct {
		name    string
		latency wiretest.Latency
	}{
		{"fixed", wiretest.Fixed(minDelay)},
		{"uniform", wiretest.Uniform(minDelay, 2*minDelay, 1)},
		{"load dependent", wiretest.LoadDependent{Base: minDelay, PerInFlight: time.Millisecond}},
		{"stall base", wiretest.Stall{Base: wiretest.Fixed(minDelay)}},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, wiretest.Config{})
			client := connect(t, s)
			ctx := testContext(t)

			if err := client.Ping(ctx, nil); err != nil { // connect at full speed
				t.Fatal(err)
			}

			s.SetLatency(tt.latency)

			start := time.Now()
			if err := client.Ping(ctx, nil); err != nil {
				t.Fatal(err)
			}

			// Only a lower bound: a busy machine may add any amount.
			if took := time.Since(start); took < minDelay {
				t.Errorf("ping took %v, want at least %v", took, minDelay)
			}
		})
	}
}

func TestStall(t *testing.T) {
	s := startServer(t, wiretest.Config{})
	client := connect(t, s)
	ctx := testContext(t)

	if err := client.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}

	// The window opens a full second after the first request is sent, so
	// that request is received before it even on a slow machine.
	const window = time.Second

	before := time.Now()
	stall := wiretest.Stall{At: before.Add(window), For: window}
	end := stall.At.Add(stall.For)
	s.SetLatency(stall)

	if err := client.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}

	if done := time.Now(); !done.Before(end) {
		t.Errorf("a ping sent %v before the window was held until %v after it closed",
			window, done.Sub(end))
	}

	time.Sleep(time.Until(stall.At) + 10*time.Millisecond)

	if err := client.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}

	if done := time.Now(); done.Before(end) {
		t.Errorf("a ping sent inside the window was answered %v before it closed", end.Sub(done))
	}
}

// gate is a Latency that holds each caller until want calls are inside
// Delay at once, which forces that many requests to be in flight together
// without relying on timing.
type gate struct {
	want    int32
	entered atomic.Int32
	open    chan struct{}
	once    sync.Once
	maxSeen atomic.Int32
}

func (g *gate) Delay(_ time.Time, inFlight int) time.Duration {
	if seen := int32(inFlight); seen > g.maxSeen.Load() {
		g.maxSeen.Store(seen) // racy max is fine: only a lower bound is checked
	}

	if g.entered.Add(1) >= g.want {
		g.once.Do(func() { close(g.open) })
	}

	select {
	case <-g.open:
	case <-time.After(opTimeout):
	}

	return 0
}

func TestInFlight(t *testing.T) {
	s := startServer(t, wiretest.Config{})
	client := connect(t, s)
	ctx := testContext(t)

	if err := client.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}

	g := &gate{want: 2, open: make(chan struct{})}
	s.SetLatency(g)

	var wg sync.WaitGroup

	errs := make(chan error, 2)

	for range 2 {
		wg.Go(func() { errs <- client.Ping(ctx, nil) })
	}

	wg.Wait()
	close(errs)

	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	if got := g.maxSeen.Load(); got < 2 {
		t.Errorf("Delay saw at most %d in flight, want at least 2", got)
	}

	if got := s.Stats().MaxInFlight; got < 2 {
		t.Errorf("Stats.MaxInFlight = %d, want at least 2", got)
	}
}

func TestSetLatencyConcurrent(t *testing.T) {
	s := startServer(t, wiretest.Config{})
	client := connect(t, s)
	ctx := testContext(t)

	stop := make(chan struct{})

	var wg sync.WaitGroup

	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}

			s.SetLatency(wiretest.Fixed(time.Duration(i%2) * time.Millisecond))
		}
	})

	for range 4 {
		wg.Go(func() {
			for range 20 {
				if err := client.Ping(ctx, nil); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}

	// Wait for the pingers first (the swapper only stops when told).
	waitFor(t, "80 pings", func() bool { return s.Stats().Requests["ping"] >= 80 })
	close(stop)
	wg.Wait()
}

func TestStats(t *testing.T) {
	s := startServer(t, wiretest.Config{FindDocs: 1})
	client := connect(t, s)
	ctx := testContext(t)
	coll := client.Database("bench").Collection("things")

	for range 2 {
		if _, err := coll.InsertOne(ctx, bson.D{}); err != nil {
			t.Fatal(err)
		}
	}

	for range 3 {
		if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil {
			t.Fatal(err)
		}
	}

	st := s.Stats()

	if st.Requests["insert"] != 2 || st.Requests["find"] != 3 {
		t.Errorf("requests %v, want 2 inserts and 3 finds", st.Requests)
	}

	handshakes := st.Requests["hello"] + st.Requests["isMaster"] + st.Requests["ismaster"]
	if handshakes < 1 {
		t.Errorf("requests %v, want at least one handshake", st.Requests)
	}

	if st.Connections < 1 || st.MaxInFlight < 1 || st.ProtocolErrors != 0 || st.MoreToCome != 0 {
		t.Errorf("stats %+v", st)
	}

	// Reveals which opcode the driver's handshake used; not asserted, as it
	// is the driver's choice.
	t.Logf("requests %v, OP_QUERY %d, connections %d", st.Requests, st.LegacyQueries, st.Connections)

	// The snapshot is a copy.
	st.Requests["insert"] = 100
	if s.Stats().Requests["insert"] != 2 {
		t.Error("Stats shares its map with the server")
	}
}

func TestRawMessages(t *testing.T) {
	s := startServer(t, wiretest.Config{})

	doc := func(d bson.D) []byte { return mustMarshal(t, d) }

	opMsgBody := func(flags uint32, sections ...[]byte) []byte {
		b := binary.LittleEndian.AppendUint32(nil, flags)
		for _, sec := range sections {
			b = append(b, sec...)
		}

		return b
	}
	kind0 := func(d bson.D) []byte { return append([]byte{0}, doc(d)...) }
	kind1 := func(id string, docs ...bson.D) []byte {
		var payload []byte
		payload = append(payload, id...)
		payload = append(payload, 0)

		for _, d := range docs {
			payload = append(payload, doc(d)...)
		}

		b := append([]byte{1}, binary.LittleEndian.AppendUint32(nil, uint32(4+len(payload)))...)

		return append(b, payload...)
	}
	opQueryBody := func(ns string, query bson.D) []byte {
		b := binary.LittleEndian.AppendUint32(nil, 0)
		b = append(b, ns...)
		b = append(b, 0)
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint32(b, ^uint32(0)) // numberToReturn -1

		return append(b, doc(query)...)
	}

	tests := []struct {
		name   string
		opCode int32
		body   []byte
		wantOp int32
		check  func(t *testing.T, d bson.Raw)
	}{
		{
			name:   "OP_MSG ping",
			opCode: opMsg,
			body:   opMsgBody(0, kind0(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})),
			wantOp: opMsg,
			check:  wantOK,
		},
		{
			name:   "OP_MSG with checksum",
			opCode: opMsg,
			body:   append(opMsgBody(1, kind0(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})), 1, 2, 3, 4),
			wantOp: opMsg,
			check:  wantOK,
		},
		{
			name:   "OP_MSG with exhaustAllowed",
			opCode: opMsg,
			body:   opMsgBody(1<<16, kind0(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})),
			wantOp: opMsg,
			check:  wantOK,
		},
		{
			name:   "OP_MSG insert with a document sequence",
			opCode: opMsg,
			body: opMsgBody(0,
				kind0(bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "bench"}}),
				kind1("documents", bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 2}}, bson.D{}),
			),
			wantOp: opMsg,
			check: func(t *testing.T, d bson.Raw) {
				wantOK(t, d)

				if n := d.Lookup("n").Int32(); n != 3 {
					t.Errorf("n = %d, want 3", n)
				}
			},
		},
		{
			name:   "OP_MSG without $db",
			opCode: opMsg,
			body:   opMsgBody(0, kind0(bson.D{{Key: "ping", Value: 1}})),
			wantOp: opMsg,
			check:  wantCode(40571),
		},
		{
			name:   "OP_MSG empty command",
			opCode: opMsg,
			body:   opMsgBody(0, kind0(bson.D{})),
			wantOp: opMsg,
			check:  wantCode(40571),
		},
		{
			name:   "OP_QUERY isMaster",
			opCode: opQuery,
			body:   opQueryBody("admin.$cmd", bson.D{{Key: "isMaster", Value: 1}, {Key: "helloOk", Value: true}}),
			wantOp: opReply,
			check: func(t *testing.T, d bson.Raw) {
				wantOK(t, d)

				if !d.Lookup("ismaster").Boolean() || d.Lookup("maxWireVersion").Int32() != 21 {
					t.Errorf("hello reply %v", d)
				}
			},
		},
		{
			name:   "OP_QUERY wrapped in $query",
			opCode: opQuery,
			body: opQueryBody("admin.$cmd", bson.D{
				{Key: "$query", Value: bson.D{{Key: "hello", Value: 1}}},
				{Key: "$readPreference", Value: bson.D{{Key: "mode", Value: "primaryPreferred"}}},
			}),
			wantOp: opReply,
			check:  wantOK,
		},
		{
			name:   "OP_QUERY other than hello",
			opCode: opQuery,
			body:   opQueryBody("admin.$cmd", bson.D{{Key: "ping", Value: 1}}),
			wantOp: opReply,
			check:  wantCode(352),
		},
	}

	// All on one connection: each reply must answer its own request.
	c := dial(t, s)

	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqID := int32(100 + i)
			if _, err := c.Write(message(reqID, tt.opCode, tt.body)); err != nil {
				t.Fatal(err)
			}

			r := readReply(t, c)
			if r.opCode != tt.wantOp || r.responseTo != reqID {
				t.Fatalf("reply opcode %d responseTo %d, want %d %d", r.opCode, r.responseTo, tt.wantOp, reqID)
			}

			tt.check(t, r.doc)
		})
	}
}

// wantOK fails unless d is a success reply.
func wantOK(t *testing.T, d bson.Raw) {
	t.Helper()

	if ok, _ := d.Lookup("ok").AsFloat64OK(); ok != 1 {
		t.Errorf("reply %v, want ok: 1", d)
	}
}

// wantCode returns a check that d is an error reply with code.
func wantCode(code int32) func(t *testing.T, d bson.Raw) {
	return func(t *testing.T, d bson.Raw) {
		t.Helper()

		if ok, _ := d.Lookup("ok").AsFloat64OK(); ok != 0 {
			t.Errorf("reply %v, want ok: 0", d)
		}

		if got, _ := d.Lookup("code").Int32OK(); got != code {
			t.Errorf("reply %v, want code %d", d, code)
		}
	}
}

func TestMalformedClosesOnlyThatConnection(t *testing.T) {
	s := startServer(t, wiretest.Config{})
	client := connect(t, s)
	ctx := testContext(t)

	if err := client.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}

	ping := mustMarshal(t, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	body0 := append([]byte{0}, ping...)
	flags := func(f uint32) []byte { return binary.LittleEndian.AppendUint32(nil, f) }
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}

		return b
	}

	// A valid document whose single element has the undefined type 0x42.
	badBSON := []byte{12, 0, 0, 0, 0x42, 'a', 0, 1, 0, 0, 0, 0}

	tests := []struct {
		name string
		raw  []byte
	}{
		{"length below header", cat(binary.LittleEndian.AppendUint32(nil, 8), make([]byte, 12))},
		{"length above cap", cat(binary.LittleEndian.AppendUint32(nil, 48_000_001), make([]byte, 12))},
		{"unknown opcode", message(1, 2002, flags(0))},
		{"OP_COMPRESSED", message(1, 2012, flags(0))},
		{"OP_MSG without flags", message(1, opMsg, []byte{0, 0})},
		{"OP_MSG without sections", message(1, opMsg, flags(0))},
		{"OP_MSG unknown required flag", message(1, opMsg, cat(flags(1<<3), body0))},
		{"OP_MSG checksum flag without checksum", message(1, opMsg, cat(flags(1), []byte{0, 1}))},
		{"OP_MSG section kind 2", message(1, opMsg, cat(flags(0), []byte{2}, ping))},
		{"OP_MSG two bodies", message(1, opMsg, cat(flags(0), body0, body0))},
		{"OP_MSG truncated document", message(1, opMsg, cat(flags(0), []byte{0, 100, 0, 0, 0, 1}))},
		{"OP_MSG document length below 5", message(1, opMsg, cat(flags(0), []byte{0, 4, 0, 0, 0, 0}))},
		{"OP_MSG invalid BSON", message(1, opMsg, cat(flags(0), []byte{0}, badBSON))},
		{"OP_MSG sequence overruns", message(1, opMsg, cat(flags(0), body0, []byte{1, 200, 0, 0, 0, 'd', 0}))},
		{"OP_MSG sequence without identifier end", message(1, opMsg, cat(flags(0), body0, []byte{1, 6, 0, 0, 0, 'd', 'x'}))},
		{"OP_MSG sequence with a torn document", message(1, opMsg, cat(flags(0), body0, []byte{1, 9, 0, 0, 0, 'd', 0, 9, 0}))},
		{"OP_QUERY unterminated namespace", message(1, opQuery, cat(flags(0), []byte("admin.$cmd")))},
		{"OP_QUERY without query", message(1, opQuery, cat(flags(0), []byte("admin.$cmd\x00"), make([]byte, 8)))},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, s)
			if _, err := c.Write(tt.raw); err != nil {
				t.Fatal(err)
			}

			expectClosed(t, c)

			// The driver's connections are untouched.
			if err := client.Ping(ctx, nil); err != nil {
				t.Fatalf("ping after malformed input: %v", err)
			}
		})
	}

	waitFor(t, "protocol errors to be counted", func() bool {
		return s.Stats().ProtocolErrors == int64(len(tests))
	})
}

func TestCloseWhileReplyHeld(t *testing.T) {
	s, err := wiretest.Start(wiretest.Config{})
	if err != nil {
		t.Fatal(err)
	}

	client := connect(t, s)
	ctx := testContext(t)

	if err := client.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}

	s.SetLatency(wiretest.Fixed(time.Hour))

	pingErr := make(chan error, 1)

	go func() { pingErr <- client.Ping(ctx, nil) }()

	waitFor(t, "the ping to be held", func() bool { return s.Stats().Requests["ping"] >= 2 })

	closed := make(chan error, 1)

	go func() { closed <- s.Close() }()

	// The bound only guards against Close waiting out the hour-long hold.
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(opTimeout):
		t.Fatal("Close did not interrupt a held reply")
	}

	if err := <-pingErr; err == nil {
		t.Error("held ping succeeded after Close")
	}

	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestStartErrors(t *testing.T) {
	s := startServer(t, wiretest.Config{})

	if _, err := wiretest.Start(wiretest.Config{Addr: s.Addr().String()}); err == nil {
		t.Error("Start on a busy address succeeded")
	}
}

func TestURIOnWildcardAddress(t *testing.T) {
	s := startServer(t, wiretest.Config{Addr: "0.0.0.0:0"})
	client := connect(t, s)

	if err := client.Ping(testContext(t), nil); err != nil {
		t.Fatalf("ping via %s: %v", s.URI(), err)
	}
}

func BenchmarkPing(b *testing.B) {
	s := startServer(b, wiretest.Config{Latency: wiretest.Fixed(0)})
	client := connect(b, s)
	ctx := context.Background()

	if err := client.Ping(ctx, nil); err != nil {
		b.Fatal(err)
	}

	b.ReportAllocs()

	for b.Loop() {
		if err := client.Ping(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPingParallel(b *testing.B) {
	s := startServer(b, wiretest.Config{Latency: wiretest.Fixed(0)})
	client := connect(b, s)
	ctx := context.Background()

	if err := client.Ping(ctx, nil); err != nil {
		b.Fatal(err)
	}

	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := client.Ping(ctx, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
