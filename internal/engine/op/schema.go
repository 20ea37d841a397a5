package op

import (
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/spec/workload"
)

// IndexModels returns the driver models of the indexes declared for a
// collection; when names is non-empty, only of those indexes. The spec must
// be valid.
func IndexModels(spec *workload.Spec, collection string, names []string) []mongo.IndexModel {
	var models []mongo.IndexModel

	for _, c := range spec.Collections {
		if c.Name != collection {
			continue
		}

		for _, idx := range c.Indexes {
			keys, err := workload.IndexKeys(idx.Keys.Node(), "")
			if err != nil {
				continue
			}

			name := idx.Name
			if name == "" {
				name = workload.DefaultIndexName(keys)
			}

			if len(names) > 0 && !slices.Contains(names, name) {
				continue
			}

			kd := make(bson.D, 0, len(keys))
			for _, k := range keys {
				kd = append(kd, bson.E{Key: k.Field, Value: k.Value})
			}

			opts := options.Index().SetName(name)
			if idx.Unique {
				opts.SetUnique(true)
			}

			if idx.Sparse {
				opts.SetSparse(true)
			}

			if idx.ExpireAfter != nil {
				opts.SetExpireAfterSeconds(int32(idx.ExpireAfter.D().Seconds())) //nolint:gosec // TTLs are far below 68 years
			}

			models = append(models, mongo.IndexModel{Keys: kd, Options: opts})
		}
	}

	return models
}

// CreateSchema creates the declared collections with their options and
// indexes in db, which must be empty of them (the caller resets it first).
func CreateSchema(ctx context.Context, db *mongo.Database, spec *workload.Spec) error {
	for _, c := range spec.Collections {
		opts := options.CreateCollection()
		if c.Capped {
			opts.SetCapped(true).SetSizeInBytes(c.Size)
			if c.Max > 0 {
				opts.SetMaxDocuments(c.Max)
			}
		}

		if err := db.CreateCollection(ctx, c.Name, opts); err != nil {
			return fmt.Errorf("creating collection %q: %w", c.Name, err)
		}

		models := IndexModels(spec, c.Name, nil)
		if len(models) == 0 {
			continue
		}

		if _, err := db.Collection(c.Name).Indexes().CreateMany(ctx, models); err != nil {
			return fmt.Errorf("creating indexes of collection %q: %w", c.Name, err)
		}
	}

	return nil
}
