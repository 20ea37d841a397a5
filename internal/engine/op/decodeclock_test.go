package op

import (
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestDecodeClockTimesTheDecodeAlone runs the reads of the document-load
// study against the wire-protocol test server, which answers every find
// with 200 template documents (ObjectId _id, strings, dates, a nested
// document, an array): each decode mode maps all of them (struct into the
// type derived from the study's template, which the server's documents
// once failed), the decode clock advances only for the modes that decode,
// and an operation run without a clock decodes all the same.
func TestDecodeClockTimesTheDecodeAlone(t *testing.T) {
	t.Parallel()

	src, err := os.ReadFile("../../../workloads/studies/document-load.yaml")
	if err != nil {
		t.Fatal(err)
	}

	spec, errs := workload.Parse("document-load.yaml", src)
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	ops, errs := Compile(spec, env)
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	srv, err := wiretest.Start(wiretest.Config{FindDocs: 200})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()))
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = client.Disconnect(t.Context()) })

	db := client.Database("d")
	seen := map[string]bool{}

	for _, o := range ops {
		seen[o.Name()] = true
		call := o.Bind(db)

		var clock DecodeClock

		docs, err := call(WithDecodeClock(t.Context(), &clock), env.NewScope(0))
		if err != nil || docs != 200 {
			t.Fatalf("%s: %d documents, %v; want 200, no error", o.Name(), docs, err)
		}

		decodes := o.Spec.Decode != "none"
		if o.Decodes() != decodes {
			t.Errorf("%s: Decodes() = %v, want %v", o.Name(), o.Decodes(), decodes)
		}

		if got := clock.Elapsed() > 0; got != decodes {
			t.Errorf("%s: decode clock %v, want it to advance only when decoding", o.Name(), clock.Elapsed())
		}

		clock.Reset()

		if clock.Elapsed() != 0 {
			t.Errorf("%s: Reset left %v", o.Name(), clock.Elapsed())
		}

		if docs, err := call(t.Context(), env.NewScope(0)); err != nil || docs != 200 {
			t.Errorf("%s without a clock: %d documents, %v", o.Name(), docs, err)
		}
	}

	for _, name := range []string{"none", "raw", "map", "struct"} {
		if !seen[name] {
			t.Errorf("the study has no %s read", name)
		}
	}
}
