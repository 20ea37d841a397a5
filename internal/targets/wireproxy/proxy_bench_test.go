package wireproxy_test

import (
	"io"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/targets/wireproxy"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// BenchmarkPing measures what the proxy adds to a round trip: a ping to the
// test server (which answers at once), directly and through the proxy
// recording into io.Discard. Run:
//
//	go test -run '^$' -bench Ping -benchtime 5000x ./internal/targets/wireproxy/
func BenchmarkPing(b *testing.B) {
	srv, err := wiretest.Start(wiretest.Config{})
	if err != nil {
		b.Fatal(err)
	}

	b.Cleanup(func() { _ = srv.Close() })

	addr, err := wireproxy.UpstreamAddr(srv.URI())
	if err != nil {
		b.Fatal(err)
	}

	p, err := wireproxy.Start(wireproxy.Config{Upstream: addr, Out: io.Discard})
	if err != nil {
		b.Fatal(err)
	}

	b.Cleanup(func() { _ = p.Close() })

	for _, tc := range []struct{ name, uri string }{{"direct", srv.URI()}, {"proxied", p.URI()}} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := mongo.Connect(options.Client().ApplyURI(tc.uri).SetMaxPoolSize(1).SetTimeout(10 * time.Second))
			if err != nil {
				b.Fatal(err)
			}

			defer func() { _ = c.Disconnect(b.Context()) }()

			db := c.Database("bench")
			ping := bson.D{{Key: "ping", Value: 1}}

			for b.Loop() {
				if err := db.RunCommand(b.Context(), ping).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
