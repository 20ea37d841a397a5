package wiretest_test

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// A server that holds every reply for 10 ms, pinged through the driver.
func ExampleStart() {
	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(10 * time.Millisecond)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = client.Disconnect(context.Background()) }()

	if err := client.Ping(context.Background(), nil); err != nil {
		fmt.Println(err)
		return
	}

	fmt.Println("pinged; pings seen:", srv.Stats().Requests["ping"])
	// Output: pinged; pings seen: 1
}
