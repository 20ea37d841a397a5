package serverstats

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/targets"
)

// connect connects a client to e with at most pool connections (0: no cap)
// and disconnects it when the test ends, before the server is closed.
func connect(t *testing.T, e *targets.Embedded, pool uint64) *mongo.Client {
	t.Helper()

	client, err := targets.Connect(t.Context(), e.URI(), targets.ConnectOptions{MaxPoolSize: pool})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}

	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()

		if err := client.Disconnect(ctx); err != nil {
			t.Errorf("Disconnect: %v", err)
		}
	})

	return client
}
