package target_test

import (
	"context"
	"fmt"

	"github.com/mongobench/mongobench/internal/target"
)

// Example shows the life of a self-contained run: start the embedded server,
// connect, find out what it is, claim a database, start from a clean slate,
// and clean up.
func Example() {
	ctx := context.Background()

	srv, err := target.StartEmbedded(ctx, target.EmbeddedOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	client, err := target.Connect(ctx, srv.URI(), target.ConnectOptions{MaxPoolSize: srv.MaxPoolSize()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = client.Disconnect(ctx) }()

	info, err := target.Describe(ctx, client)
	if err != nil {
		fmt.Println(err)
		return
	}

	info = srv.Annotate(info)
	fmt.Println("product:", info.Product, "backend:", info.Backend)

	// A run loads the user's key with LoadOwnerKey(OwnerKeyPath(os.Getenv));
	// the example keeps its own in memory.
	key, err := target.NewOwnerKey([]byte("an example key of thirty-two byt"))
	if err != nil {
		fmt.Println(err)
		return
	}

	own, err := target.Claim(ctx, client, "example", false, key)
	if err != nil {
		fmt.Println(err)
		return
	}

	fmt.Println("owned:", own.Owned, "created:", own.Created)

	if err := target.Reset(ctx, client, "example", own, []string{"items"}); err != nil {
		fmt.Println(err)
		return
	}

	// ... run the workload ...

	if err := target.Drop(ctx, client, "example", own); err != nil {
		fmt.Println(err)
		return
	}

	// Output:
	// product: FerretDB backend: SQLite
	// owned: true created: true
}
