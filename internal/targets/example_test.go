package targets_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mongobench/mongobench/internal/targets"
)

// Example shows the life of a self-contained run: start the embedded server,
// connect, find out what it is, claim a database, start from a clean slate,
// and clean up.
func Example() {
	ctx := context.Background()

	srv, err := targets.StartEmbedded(ctx, targets.EmbeddedOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	client, err := targets.Connect(ctx, srv.URI(), targets.ConnectOptions{MaxPoolSize: srv.MaxPoolSize()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = client.Disconnect(ctx) }()

	info, err := targets.Describe(ctx, client)
	if err != nil {
		fmt.Println(err)
		return
	}

	info = srv.Annotate(info)
	fmt.Println("product:", info.Product, "backend:", info.Backend)

	// A run loads the user's key with LoadOwnerKey(OwnerKeyPath(os.Getenv));
	// the example makes one of its own in a temporary directory.
	keyDir, err := os.MkdirTemp("", "mongobench-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(keyDir)

	key, err := targets.LoadOwnerKey(filepath.Join(keyDir, "owner.key"))
	if err != nil {
		fmt.Println(err)
		return
	}

	own, err := targets.Claim(ctx, client, "example", false, key)
	if err != nil {
		fmt.Println(err)
		return
	}

	fmt.Println("owned:", own.Owned, "created:", own.Created)

	if err := targets.Reset(ctx, client, "example", own, []string{"items"}); err != nil {
		fmt.Println(err)
		return
	}

	// ... run the workload ...

	if err := targets.Drop(ctx, client, "example", own); err != nil {
		fmt.Println(err)
		return
	}

	// Output:
	// product: FerretDB backend: SQLite
	// owned: true created: true
}
