package wireproxy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/spec/capture"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/embeddedtest"
	"github.com/mongobench/mongobench/internal/targets/wireproxy"
)

// entry is one line of a recording, with the fields the tests check.
type entry struct {
	T struct {
		Date string `json:"$date"`
	} `json:"t"`
	S    string `json:"s"`
	C    string `json:"c"`
	ID   int    `json:"id"`
	Ctx  string `json:"ctx"`
	Msg  string `json:"msg"`
	Attr struct {
		Type               string          `json:"type"`
		NS                 string          `json:"ns"`
		Command            json.RawMessage `json:"command"`
		OriginatingCommand json.RawMessage `json:"originatingCommand"`
		DurationMillis     *int64          `json:"durationMillis"`
		DurationMicros     *int64          `json:"durationMicros"`
		NReturned          *int64          `json:"nreturned"`
		NInserted          *int64          `json:"ninserted"`
		NMatched           *int64          `json:"nMatched"`
		NModified          *int64          `json:"nModified"`
		NDeleted           *int64          `json:"ndeleted"`
		CursorID           int64           `json:"cursorid"`
		Remote             string          `json:"remote"`
		Protocol           string          `json:"protocol"`
		ConnectionID       int64           `json:"connectionId"`
	} `json:"attr"`

	cmd bson.D // Attr.Command decoded
}

// name is the command's name (its first key).
func (e *entry) name() string {
	if len(e.cmd) == 0 {
		return ""
	}

	return e.cmd[0].Key
}

func (e *entry) get(key string) any {
	for _, el := range e.cmd {
		if el.Key == key {
			return el.Value
		}
	}

	return nil
}

// parseRecording reads every line of a recording, failing on one that is
// not a JSON object of mongod's log format.
func parseRecording(t *testing.T, data []byte) []*entry {
	t.Helper()

	var out []*entry

	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)

	for n := 1; sc.Scan(); n++ {
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", n, err, sc.Bytes())
		}

		if _, err := time.Parse("2006-01-02T15:04:05.000-07:00", e.T.Date); err != nil {
			t.Errorf("line %d: t.$date %q is not mongod's time format: %v", n, e.T.Date, err)
		}

		if e.S != "I" || e.Ctx == "" || e.Msg == "" {
			t.Errorf("line %d lacks s, ctx or msg: %s", n, sc.Bytes())
		}

		if len(e.Attr.Command) > 0 {
			if err := bson.UnmarshalExtJSON(e.Attr.Command, false, &e.cmd); err != nil {
				t.Fatalf("line %d: command is not Extended JSON: %v", n, err)
			}
		}

		out = append(out, &e)
	}

	return out
}

// startProxy starts a proxy in front of uri recording into the returned
// buffer, which may be read once the proxy is closed.
func startProxy(t *testing.T, uri string) (*wireproxy.Proxy, *bytes.Buffer) {
	t.Helper()

	addr, err := wireproxy.UpstreamAddr(uri)
	if err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer

	p, err := wireproxy.Start(wireproxy.Config{Upstream: addr, Out: &out})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = p.Close() })

	return p, &out
}

func connect(t *testing.T, uri string) *mongo.Client {
	t.Helper()

	c, err := mongo.Connect(options.Client().ApplyURI(uri).SetTimeout(30 * time.Second))
	if err != nil {
		t.Fatal(err)
	}

	return c
}

// TestRecordsDriverTraffic runs the Go driver through the proxy in front of
// the embedded FerretDB and checks every command the test ran is in the
// recording once, with its namespace, its counts from the reply and a
// duration, and that the capture parser reads the recording into the
// shapes of those commands.
func TestRecordsDriverTraffic(t *testing.T) {
	e := embeddedtest.Start(t, targets.EmbeddedOptions{})
	p, out := startProxy(t, e.URI())

	ctx := t.Context()
	client := connect(t, p.URI())
	coll := client.Database("wp").Collection("orders")

	docs := []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "status", Value: "A"}, {Key: "qty", Value: 1}},
		bson.D{{Key: "_id", Value: 2}, {Key: "status", Value: "B"}, {Key: "qty", Value: 2}},
		bson.D{{Key: "_id", Value: 3}, {Key: "status", Value: "A"}, {Key: "qty", Value: 3}},
		bson.D{{Key: "_id", Value: 4}, {Key: "status", Value: "B"}, {Key: "qty", Value: 4}},
		bson.D{{Key: "_id", Value: 5}, {Key: "status", Value: "A"}, {Key: "qty", Value: 5}},
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}

	// A find with filter, sort, projection and limit.
	cur, err := coll.Find(ctx, bson.D{{Key: "qty", Value: bson.D{{Key: "$gt", Value: 1}}}},
		options.Find().SetSort(bson.D{{Key: "qty", Value: -1}}).SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "qty", Value: 1}}).SetLimit(3))
	if err != nil {
		t.Fatal(err)
	}

	var top []bson.D
	if err := cur.All(ctx, &top); err != nil || len(top) != 3 {
		t.Fatalf("find with limit 3 returned %d documents (%v)", len(top), err)
	}

	// A find whose cursor needs getMores: 5 documents in batches of 2.
	cur, err = coll.Find(ctx, bson.D{}, options.Find().SetBatchSize(2))
	if err != nil {
		t.Fatal(err)
	}

	var all []bson.D
	if err := cur.All(ctx, &all); err != nil || len(all) != 5 {
		t.Fatalf("batched find returned %d documents (%v)", len(all), err)
	}

	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "C"}}}}); err != nil {
		t.Fatal(err)
	}

	if _, err := coll.DeleteMany(ctx, bson.D{{Key: "status", Value: "B"}}); err != nil {
		t.Fatal(err)
	}

	agg, err := coll.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "status", Value: "A"}}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$status"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}

	var groups []bson.D
	if err := agg.All(ctx, &groups); err != nil || len(groups) != 1 {
		t.Fatalf("aggregate returned %d groups (%v)", len(groups), err)
	}

	if err := client.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	lines := parseRecording(t, out.Bytes())
	stats := p.Stats()

	byName := map[string][]*entry{}
	accepted := map[string]bool{}
	commands := int64(0)

	for _, l := range lines {
		switch l.Msg {
		case "Connection accepted":
			accepted["conn"+strconv.FormatInt(l.Attr.ConnectionID, 10)] = true
		case "Slow query":
			if l.Attr.DurationMillis == nil || *l.Attr.DurationMillis < 0 || l.Attr.DurationMicros == nil || *l.Attr.DurationMicros < *l.Attr.DurationMillis*1000 {
				t.Errorf("%s: durationMillis %v, durationMicros %v", l.name(), l.Attr.DurationMillis, l.Attr.DurationMicros)
			}

			if !strings.HasPrefix(l.Attr.Remote, "127.0.0.1:") {
				t.Errorf("%s: remote %q", l.name(), l.Attr.Remote)
			}

			key := l.name()
			if l.Attr.Type != "command" {
				key = "statement " + l.Attr.Type
			} else {
				commands++
			}

			byName[key] = append(byName[key], l)
		}
	}

	// Pairing: every request had its reply, every line names a connection
	// the recording saw open.
	if stats.Unanswered != 0 || stats.Compressed != 0 || stats.Unreadable != 0 || stats.DialErrors != 0 {
		t.Errorf("stats %+v: want no unanswered, compressed, unreadable or undialled", stats)
	}

	if commands != stats.Commands {
		t.Errorf("%d command lines, Stats.Commands %d", commands, stats.Commands)
	}

	if int64(len(accepted)) != stats.Connections || stats.Connections == 0 {
		t.Errorf("%d connections accepted in the recording, Stats.Connections %d", len(accepted), stats.Connections)
	}

	for name, ls := range byName {
		for _, l := range ls {
			if !accepted[l.Ctx] {
				t.Errorf("%s line on %s, which the recording never saw connect", name, l.Ctx)
			}
		}
	}

	one := func(name string) *entry {
		t.Helper()

		if len(byName[name]) != 1 {
			t.Fatalf("%d %s lines, want 1", len(byName[name]), name)
		}

		return byName[name][0]
	}

	ins := one("insert")
	if ins.Attr.NS != "wp.orders" || ins.Attr.NInserted == nil || *ins.Attr.NInserted != 5 {
		t.Errorf("insert: ns %q, ninserted %v", ins.Attr.NS, ins.Attr.NInserted)
	}

	if d, ok := ins.get("documents").(bson.A); !ok || len(d) != 5 {
		t.Errorf("insert: documents %v, want the 5 inserted", ins.get("documents"))
	}

	// The two finds: the limited one, and the batched one with its getMores.
	finds := byName["find"]
	if len(finds) != 2 {
		t.Fatalf("%d find lines, want 2", len(finds))
	}

	limited, batched := finds[0], finds[1]
	if limited.get("limit") == nil {
		limited, batched = batched, limited
	}

	if limited.Attr.NS != "wp.orders" || limited.get("sort") == nil || limited.get("projection") == nil ||
		limited.Attr.NReturned == nil || *limited.Attr.NReturned != 3 {
		t.Errorf("limited find: ns %q, command %v, nreturned %v", limited.Attr.NS, limited.cmd, limited.Attr.NReturned)
	}

	if batched.Attr.CursorID == 0 || batched.Attr.NReturned == nil || *batched.Attr.NReturned != 2 {
		t.Errorf("batched find: cursorid %d, nreturned %v", batched.Attr.CursorID, batched.Attr.NReturned)
	}

	returned := *batched.Attr.NReturned
	for _, g := range byName["getMore"] {
		if g.Attr.NS != "wp.orders" || g.Attr.NReturned == nil {
			t.Fatalf("getMore: ns %q, nreturned %v", g.Attr.NS, g.Attr.NReturned)
		}

		var orig bson.D
		if err := bson.UnmarshalExtJSON(g.Attr.OriginatingCommand, false, &orig); err != nil || len(orig) == 0 || orig[0].Key != "find" || orig[0].Value != "orders" {
			t.Errorf("getMore: originatingCommand %s (%v), want the batched find", g.Attr.OriginatingCommand, err)
		}

		returned += *g.Attr.NReturned
	}

	if len(byName["getMore"]) == 0 || returned != 5 {
		t.Errorf("%d getMores; the cursor returned %d documents in all, want 5", len(byName["getMore"]), returned)
	}

	upd := one("statement update")
	if upd.Attr.NS != "wp.orders" || upd.C != "WRITE" || upd.Attr.NMatched == nil || *upd.Attr.NMatched != 1 || upd.Attr.NModified == nil || *upd.Attr.NModified != 1 {
		t.Errorf("update statement: %+v", upd.Attr)
	}

	if q, ok := upd.get("q").(bson.D); !ok || len(q) != 1 || q[0].Key != "_id" {
		t.Errorf("update statement: q %v", upd.get("q"))
	}

	rm := one("statement remove")
	if rm.Attr.NS != "wp.orders" || rm.Attr.NDeleted == nil || *rm.Attr.NDeleted != 2 {
		t.Errorf("remove statement: ns %q, ndeleted %v", rm.Attr.NS, rm.Attr.NDeleted)
	}

	// The commands of the statements, with the counts of the reply.
	if u := one("update"); u.get("updates") != nil || u.Attr.NMatched == nil || *u.Attr.NMatched != 1 {
		t.Errorf("update command: updates %v (want none: they are the statement's line), nMatched %v", u.get("updates"), u.Attr.NMatched)
	}

	if d := one("delete"); d.get("deletes") != nil || d.Attr.NDeleted == nil || *d.Attr.NDeleted != 2 {
		t.Errorf("delete command: deletes %v (want none), ndeleted %v", d.get("deletes"), d.Attr.NDeleted)
	}

	aggLine := one("aggregate")
	if aggLine.Attr.NS != "wp.orders" || aggLine.get("pipeline") == nil || aggLine.Attr.NReturned == nil || *aggLine.Attr.NReturned != 1 {
		t.Errorf("aggregate: ns %q, command %v, nreturned %v", aggLine.Attr.NS, aggLine.cmd, aggLine.Attr.NReturned)
	}

	// The capture parser reads the recording as a log: one shape a command
	// the test ran, the update and delete counted once (as statements).
	c := capture.New(capture.Options{})
	if err := c.Read("recording", bytes.NewReader(out.Bytes())); err != nil {
		t.Fatal(err)
	}

	got := map[string]int64{}
	for _, s := range c.Shapes() {
		got[s.Text] = s.Count
	}

	want := map[string]int64{
		"insert orders": 1,
		"find orders filter {qty: {$gt: ?}} sort {qty: -1} projection {_id: 0, qty: 1} limit ?": 1,
		"find orders filter {}": 1,
		"updateOne orders filter {_id: ?} update {$set: {status: ?}}":                                   1,
		"deleteMany orders filter {status: ?}":                                                          1,
		"aggregate orders pipeline [{$match: {status: ?}}, {$group: {_id: \"$status\", n: {$sum: 1}}}]": 1,
	}

	for text, n := range want {
		if got[text] != n {
			t.Errorf("shape %q: count %d, want %d", text, got[text], n)
		}
	}

	if len(got) != len(want) {
		var table bytes.Buffer
		_ = c.WriteTable(&table)
		t.Errorf("%d shapes, want %d:\n%s", len(got), len(want), table.String())
	}
}
