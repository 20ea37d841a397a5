package target

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestZZProbeMemoryOps(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{Memory: true})
	client := connect(t, e)
	coll := client.Database("bench").Collection("items")
	for i := range 10 {
		coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: i}, {Key: "v", Value: i}})
	}
	ops := []struct{ name string; f func(ctx context.Context) error }{
		{"find", func(ctx context.Context) error { c, err := coll.Find(ctx, bson.D{}); if err != nil { return err }; var d []bson.M; return c.All(ctx, &d) }},
		{"updateOne _id", func(ctx context.Context) error { _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}); return err }},
		{"updateOne v", func(ctx context.Context) error { _, err := coll.UpdateOne(ctx, bson.D{{Key: "v", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}); return err }},
		{"updateMany", func(ctx context.Context) error { _, err := coll.UpdateMany(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}); return err }},
		{"replaceOne", func(ctx context.Context) error { _, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "z", Value: 1}}); return err }},
		{"upsert", func(ctx context.Context) error { _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 99}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}, options.UpdateOne().SetUpsert(true)); return err }},
		{"findOneAndUpdate", func(ctx context.Context) error { return coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 4}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: 1}}}}).Err() }},
		{"deleteOne", func(ctx context.Context) error { _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 5}}); return err }},
		{"deleteMany", func(ctx context.Context) error { _, err := coll.DeleteMany(ctx, bson.D{{Key: "v", Value: bson.D{{Key: "$gt", Value: 7}}}}); return err }},
		{"count", func(ctx context.Context) error { _, err := coll.CountDocuments(ctx, bson.D{}); return err }},
		{"aggregate", func(ctx context.Context) error { c, err := coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$match", Value: bson.D{}}}}); if err != nil { return err }; var d []bson.M; return c.All(ctx, &d) }},
		{"createIndex", func(ctx context.Context) error { _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "v", Value: 1}}}); return err }},
		{"insertMany", func(ctx context.Context) error { _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 2}}}); return err }},
	}
	for _, op := range ops {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		start := time.Now()
		err := op.f(ctx)
		cancel()
		t.Logf("%-18s %v %s", op.name, err, time.Since(start).Round(time.Millisecond))
	}
}
