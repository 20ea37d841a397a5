package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/op"
	"github.com/mongobench/mongobench/internal/redact"
	"github.com/mongobench/mongobench/internal/target"
	"github.com/mongobench/mongobench/internal/workload"
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
	embedded *target.Embedded
	launched *target.Launched
	unhook   func()

	// selection is the client's server selection timeout: how long an
	// operation waits for an unreachable server before it fails.
	selection time.Duration
}

// openTarget starts the embedded server when no URI is given, and connects.
func openTarget(ctx context.Context, st *State, f *runFlags) (*openedTarget, error) {
	t := &openedTarget{kind: target.KindURI, uri: f.uri}

	opts := target.ConnectOptions{Timeout: f.serverSelection}

	if f.uri == "" {
		e, err := target.StartEmbedded(ctx, target.EmbeddedOptions{Logger: ferretDBLogger(st)})
		if err != nil {
			return nil, failed("%v", err)
		}

		t.kind, t.uri, t.embedded = target.KindEmbedded, e.URI(), e
		t.unhook = st.onHardExit(func() { _ = e.RemoveDir() })
		opts.MaxPoolSize = e.MaxPoolSize()

		fmt.Fprintf(st.Stderr, "No --uri given: started %s (use --uri to measure a real deployment).\n", e.Description())
	}

	if err := t.connect(ctx, st, opts); err != nil {
		return nil, err
	}

	return t, nil
}

// connect connects the client, stopping the target if that fails; a bad URI
// is bad input, anything else a failed run.
func (t *openedTarget) connect(ctx context.Context, st *State, opts target.ConnectOptions) error {
	client, err := target.Connect(ctx, t.uri, opts)
	if err != nil {
		t.close(st)

		var ue *target.URIError
		if errors.As(err, &ue) {
			return badInput("%v", err)
		}

		return failed("%s", redact.Error(err, t.uri))
	}

	t.client = client
	t.selection = target.SelectionTimeout(t.uri, opts)

	return nil
}

// close disconnects and stops the embedded server, removing its directory.
func (t *openedTarget) close(st *State) {
	if t.client != nil {
		st.setStep("closing the connections to the server")

		// Bounded: against a dead server the driver's endSessions waits
		// for server selection until the deadline.
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		if err := t.client.Disconnect(ctx); err != nil && ctx.Err() != nil {
			fmt.Fprintf(st.Stderr, "Warning: gave up disconnecting from the server after %s\n", cleanupTimeout)
		}

		cancel()
	}

	if t.embedded != nil {
		st.setStep("stopping the embedded server")

		if err := t.embedded.Close(); err != nil {
			fmt.Fprintf(st.Stderr, "Warning: stopping the embedded server: %v\n", err)
		}
	}

	if t.launched != nil {
		st.setStep("stopping target %s", t.name)

		if err := t.launched.Stop(); err != nil {
			fmt.Fprintf(st.Stderr, "Warning: stopping target %s: %v\n", t.name, err)
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

	msg := err.Error()

	var se mongo.ServerError
	if errors.As(err, &se) && (se.HasErrorCode(238) || se.HasErrorCode(115) || strings.Contains(msg, "not implemented")) {
		msg += "\nThis server does not support a collection option or index type the workload declares " +
			"(FerretDB v1 has no text or TTL indexes, for example): remove it from the workload or use another server."
	}

	return failed("setting up database %q: %s", spec.Database, msg)
}

// ferretDBLogger returns the embedded server's logger: nil (discard) unless
// MONGOBENCH_FERRETDB_LOG names a level (debug, info, warn, error), which
// helps to see what the server did during a surprising run.
func ferretDBLogger(st *State) *slog.Logger {
	level := st.Getenv("MONGOBENCH_FERRETDB_LOG")
	if level == "" {
		return nil
	}

	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}

	return slog.New(slog.NewTextHandler(redact.Writer(st.Stderr), &slog.HandlerOptions{Level: l}))
}
