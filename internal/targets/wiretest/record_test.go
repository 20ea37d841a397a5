package wiretest_test

import (
	"context"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestRecord checks that Config.Record sees the commands a driver sends,
// with the fields the driver put in them.
func TestRecord(t *testing.T) {
	t.Parallel()

	var (
		mu      sync.Mutex
		finds   []bson.Raw
		updates []bson.Raw
	)

	s := startServer(t, wiretest.Config{Record: func(c *wiretest.Command) {
		mu.Lock()
		defer mu.Unlock()

		switch c.Name {
		case "find":
			finds = append(finds, append(bson.Raw(nil), c.Body...))
		case "update":
			for _, u := range c.Sequences["updates"] {
				updates = append(updates, append(bson.Raw(nil), u...))
			}
		}
	}})
	coll := connect(t, s).Database("db").Collection("c")

	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()

	cur, err := coll.Find(ctx, bson.D{{Key: "_id", Value: int64(42)}}, options.Find().SetLimit(7))
	if err != nil {
		t.Fatalf("Find: %v", err)
	}

	_ = cur.Close(ctx)

	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "k9"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}); err != nil {
		t.Fatalf("UpdateOne: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()

	if len(finds) != 1 {
		t.Fatalf("recorded %d finds, want 1", len(finds))
	}

	if id := finds[0].Lookup("filter", "_id").Int64(); id != 42 {
		t.Errorf("recorded filter _id %d, want 42", id)
	}

	if l := finds[0].Lookup("limit").AsInt64(); l != 7 {
		t.Errorf("recorded limit %d, want 7", l)
	}

	if len(updates) != 1 || updates[0].Lookup("q", "_id").StringValue() != "k9" {
		t.Errorf("recorded updates %v, want one with q._id k9", updates)
	}
}
