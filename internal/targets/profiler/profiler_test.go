package profiler

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/spec/capture"
	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/embeddedtest"
)

// fixture is capture's profiler fixture: the shop log's operations as the
// profiler documents them.
const fixture = "../../spec/capture/testdata/shop.profile.jsonl"

func table(t *testing.T, c *capture.Capture) string {
	t.Helper()

	var b bytes.Buffer
	if err := c.WriteTable(&b); err != nil {
		t.Fatal(err)
	}

	return b.String()
}

// fixtureDocs reads the fixture's documents as BSON.
func fixtureDocs(t *testing.T) []bson.D {
	t.Helper()

	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}

	var docs []bson.D

	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var d bson.D
		if err := bson.UnmarshalExtJSON(sc.Bytes(), false, &d); err != nil {
			t.Fatalf("fixture document %d: %v", len(docs)+1, err)
		}

		docs = append(docs, d)
	}

	return docs
}

// TestBSONToRecords converts every fixture document to BSON and back to
// extended JSON as Read does, and checks that capture finds the same shape
// table as from the fixture's own text: dates, UUIDs, timestamps and
// numbers survive the driver's encoding.
func TestBSONToRecords(t *testing.T) {
	direct, viaBSON := capture.New(capture.Options{}), capture.New(capture.Options{})

	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}

	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		if bad := direct.ProfileDoc(sc.Bytes(), n); bad != "" {
			t.Fatalf("fixture document %d: %s", n, bad)
		}
	}

	for i, d := range fixtureDocs(t) {
		raw, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}

		doc, err := extJSON(raw)
		if err != nil {
			t.Fatal(err)
		}

		if bad := viaBSON.ProfileDoc(doc, i+1); bad != "" {
			t.Errorf("document %d through BSON: %s\n%s", i+1, bad, doc)
		}
	}

	if got, want := table(t, viaBSON), table(t, direct); got != want {
		t.Errorf("shape table through BSON:\n%s\nwant:\n%s", got, want)
	}
}

// storable drops a profiler document's command's top-level $-fields (the
// driver's $db, $clusterTime, $readPreference) and reports whether what is
// left can be stored in FerretDB, which refuses field names starting with
// $ (query operators included) at any depth.
func storable(d bson.D) (bson.D, bool) {
	out := bson.D{}

	for _, e := range d {
		if cmd, ok := e.Value.(bson.D); ok && e.Key == "command" {
			kept := bson.D{}

			for _, f := range cmd {
				if !strings.HasPrefix(f.Key, "$") {
					kept = append(kept, f)
				}
			}

			e.Value = kept
		}

		out = append(out, e)
	}

	return out, !hasDollar(out)
}

func hasDollar(v any) bool {
	switch x := v.(type) {
	case bson.D:
		for _, e := range x {
			if strings.HasPrefix(e.Key, "$") || hasDollar(e.Value) {
				return true
			}
		}
	case bson.A:
		for _, e := range x {
			if hasDollar(e) {
				return true
			}
		}
	}

	return false
}

// TestReadThroughServer writes the fixture's profiler documents that
// FerretDB can store (see storable) into a collection of the embedded
// server, which has no profiler: the collection stands in for
// system.profile through Options.Coll. Read reads them back, and capture
// must find the same shape table as from the same documents directly.
// Then it checks the message for a database without system.profile,
// which is FerretDB's case.
func TestReadThroughServer(t *testing.T) {
	e := embeddedtest.Start(t, targets.EmbeddedOptions{Memory: true})
	ctx := t.Context()

	client, err := targets.Connect(ctx, e.URI(), targets.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}

	defer func() { _ = client.Disconnect(context.Background()) }()

	direct := capture.New(capture.Options{})

	var docs []any

	for _, d := range fixtureDocs(t) {
		d, ok := storable(d)
		if !ok {
			continue
		}

		raw, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}

		doc, err := extJSON(raw)
		if err != nil {
			t.Fatal(err)
		}

		if bad := direct.ProfileDoc(doc, len(docs)+1); bad != "" {
			t.Fatalf("document %d: %s", len(docs)+1, bad)
		}

		docs = append(docs, d)
	}

	// The inserts, the findOnes by _id, the getMore and the monitoring
	// commands have no operator.
	if len(docs) < 15 {
		t.Fatalf("only %d fixture documents can be stored", len(docs))
	}

	if _, err := client.Database("shop").Collection("profile_copy").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}

	read := capture.New(capture.Options{})

	n, err := Read(ctx, e.URI(), Options{DB: "shop", Coll: "profile_copy"}, func(doc []byte, n int) error {
		if bad := read.ProfileDoc(doc, n); bad != "" {
			t.Errorf("document %d read back: %s\n%s", n, bad, doc)
		}

		return nil
	})
	if err != nil || n != len(docs) {
		t.Fatalf("read %d of %d documents: %v", n, len(docs), err)
	}

	if got, want := table(t, read), table(t, direct); got != want {
		t.Errorf("shape table read through the server:\n%s\nwant, from the documents themselves:\n%s", got, want)
	} else {
		t.Logf("%d documents through the server:\n%s", n, got)
	}

	_, err = Read(ctx, e.URI(), Options{DB: "shop"}, func([]byte, int) error { return nil })

	var missing *MissingError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "database shop has no system.profile collection: the profiler is off") {
		t.Errorf("reading system.profile on FerretDB: %v, want the MissingError explaining it", err)
	}
}

// TestDatabaseFromURI: the database comes from --db or the URI's path.
func TestDatabaseFromURI(t *testing.T) {
	if got := Database("mongodb://127.0.0.1:27017/shop?directConnection=true"); got != "shop" {
		t.Errorf("Database = %q, want shop", got)
	}

	if _, err := Read(t.Context(), "mongodb://127.0.0.1:1/", Options{}, nil); err == nil || !strings.Contains(err.Error(), "no database") {
		t.Errorf("no database named: %v", err)
	}
}
