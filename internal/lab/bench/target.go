package bench

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// openedTarget is a connected server, embedded or not.
type openedTarget struct {
	// kind is a target kind of package target's registry.
	kind string

	// uri is the raw connection string: it may hold a password, so it is
	// only ever printed through redact.
	uri string

	// name labels a launched target.
	name string

	client   *mongo.Client
	embedded *targets.Embedded
	launched *targets.Launched
	unhook   func()

	// selection is the client's server selection timeout: how long an
	// operation waits for an unreachable server before it fails.
	selection time.Duration
}

// openTarget starts the embedded server when no URI is given, and connects.
func (r *run) openTarget(ctx context.Context) (*openedTarget, error) {
	t := &openedTarget{kind: targets.KindURI, uri: r.opts.URI}

	opts := targets.ConnectOptions{Timeout: r.opts.ServerSelection}

	if r.opts.URI == "" {
		e, err := targets.StartEmbedded(ctx, targets.EmbeddedOptions{Logger: r.hooks.Logger})
		if err != nil {
			return nil, failed("%v", err)
		}

		t.kind, t.uri, t.embedded = targets.KindEmbedded, e.URI(), e
		t.unhook = r.hooks.OnHardExit(func() { _ = e.RemoveDir() })
		opts.MaxPoolSize = e.MaxPoolSize()

		r.msg.Printf("No --uri given: started %s (use --uri to measure a real deployment).\n", e.Description())
	}

	if err := t.connect(ctx, r.msg, opts); err != nil {
		return nil, err
	}

	return t, nil
}

// connect connects the client, stopping the target if that fails; a bad URI
// is bad input, anything else a failed run.
func (t *openedTarget) connect(ctx context.Context, msg Messages, opts targets.ConnectOptions) error {
	client, err := targets.Connect(ctx, t.uri, opts)
	if err != nil {
		t.close(msg)

		var ue *targets.URIError
		if errors.As(err, &ue) {
			return badInput("%v", err)
		}

		return failed("%s", redact.Error(err, t.uri))
	}

	t.client = client
	t.selection = targets.SelectionTimeout(t.uri, opts)

	return nil
}

// close disconnects and stops the embedded server, removing its directory.
func (t *openedTarget) close(msg Messages) {
	if t.client != nil {
		msg.Step("closing the connections to the server")

		// Bounded: against a dead server the driver's endSessions waits
		// for server selection until the deadline.
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		if err := t.client.Disconnect(ctx); err != nil && ctx.Err() != nil {
			msg.Printf("Warning: gave up disconnecting from the server after %s\n", cleanupTimeout)
		}

		cancel()
	}

	if t.embedded != nil {
		msg.Step("stopping the embedded server")

		if err := t.embedded.Close(); err != nil {
			msg.Printf("Warning: stopping the embedded server: %v\n", err)
		}
	}

	if t.launched != nil {
		msg.Step("stopping target %s", t.name)

		if err := t.launched.Stop(); err != nil {
			msg.Printf("Warning: stopping target %s: %v\n", t.name, err)
		}
	}

	if t.unhook != nil {
		t.unhook()
	}
}

// redactedURI is the connection string safe to print and save.
func (t *openedTarget) redactedURI() string { return redact.URI(t.uri) }

// createSchema creates the declared collections and indexes, explaining the
// failures users meet on servers that lack a feature.
func createSchema(ctx context.Context, db *mongo.Database, spec *workload.Spec) error {
	err := op.CreateSchema(ctx, db, spec)
	if err == nil {
		return nil
	}

	return schemaFailure(spec, err)
}

// schemaFailure explains a failure to create the workload's collections and
// indexes, naming the missing feature users meet on some servers.
func schemaFailure(spec *workload.Spec, err error) error {
	msg := err.Error()

	var se mongo.ServerError
	if errors.As(err, &se) && (se.HasErrorCode(238) || se.HasErrorCode(115) || strings.Contains(msg, "not implemented")) {
		msg += "\nThis server does not support a collection option or index type the workload declares " +
			"(FerretDB v1 has no text or TTL indexes, for example): remove it from the workload or use another server."
	}

	return failed("setting up database %q: %s", spec.Database, msg)
}
