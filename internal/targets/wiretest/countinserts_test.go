package wiretest_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestCountInserts checks that, with CountInserts, collStats answers with
// the documents inserted into its collection (single and batched inserts,
// other collections apart) and Inserted with all of them; without it,
// collStats stays an unknown command.
func TestCountInserts(t *testing.T) {
	srv := startServer(t, wiretest.Config{CountInserts: true})
	ctx := testContext(t)
	db := connect(t, srv).Database("d")

	if _, err := db.Collection("a").InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}

	if _, err := db.Collection("a").InsertMany(ctx, []any{bson.D{{Key: "x", Value: 2}}, bson.D{{Key: "x", Value: 3}}}); err != nil {
		t.Fatal(err)
	}

	if _, err := db.Collection("b").InsertOne(ctx, bson.D{{Key: "x", Value: 4}}); err != nil {
		t.Fatal(err)
	}

	var st struct {
		Count int64 `bson:"count"`
	}

	if err := db.RunCommand(ctx, bson.D{{Key: "collStats", Value: "a"}}).Decode(&st); err != nil {
		t.Fatal(err)
	}

	if st.Count != 3 || srv.Inserted() != 4 {
		t.Errorf("collStats a: count %d, Inserted %d; want 3 and 4", st.Count, srv.Inserted())
	}

	off := startServer(t, wiretest.Config{})
	if err := connect(t, off).Database("d").RunCommand(ctx, bson.D{{Key: "collStats", Value: "a"}}).Err(); err == nil {
		t.Error("collStats without CountInserts answered; want CommandNotFound")
	}
}
