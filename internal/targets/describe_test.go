package targets

import (
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestDescribeFerretDB(t *testing.T) {
	e := startEmbedded(t, EmbeddedOptions{})
	client := connect(t, e)

	info, err := Describe(t.Context(), client)
	if err != nil {
		t.Fatal(err)
	}

	if info.Product != ProductFerretDB {
		t.Errorf("Product = %q, want %q", info.Product, ProductFerretDB)
	}

	// FerretDB v1.24 claims MongoDB 7.0.42 for compatibility.
	if info.Version != "7.0.42" {
		t.Errorf("Version = %q, want 7.0.42", info.Version)
	}

	// The embedded build reports ferretdbVersion "unknown".
	if info.FerretDBVersion != "" {
		t.Errorf("FerretDBVersion = %q, want empty for the embedded build", info.FerretDBVersion)
	}

	if info.IsReplicaSet || info.SetName != "" || info.IsMongos {
		t.Errorf("topology = %+v, want standalone", info)
	}

	if info.Raw["buildInfo"] == nil || info.Raw["hello"] == nil {
		t.Errorf("Raw = %v, want buildInfo and hello replies", info.Raw)
	}

	// No database has been opened yet, so FerretDB does not name its backend.
	if info.Backend != "" {
		t.Errorf("Backend = %q before any database exists, want empty", info.Backend)
	}

	notes := info.Notes()
	if !slices.ContainsFunc(notes, func(n string) bool {
		return strings.Contains(n, "numbers describe FerretDB") && strings.HasSuffix(n, "not MongoDB")
	}) {
		t.Errorf("Notes = %q, want a FerretDB-is-not-MongoDB note", notes)
	}

	annotated := e.Annotate(info)
	if annotated.Backend != "SQLite" || annotated.FerretDBVersion != e.FerretDBVersion() {
		t.Errorf("Annotate = %+v, want SQLite backend and version %q", annotated, e.FerretDBVersion())
	}

	if s := annotated.Summary(); !strings.HasPrefix(s, "FerretDB") || !strings.Contains(s, "on SQLite") || !strings.Contains(s, "MongoDB 7.0.42 compatible") {
		t.Errorf("Summary = %q", s)
	}

	// Once a database exists, FerretDB names its backend and version.
	if _, err := client.Database("bench").Collection("items").InsertOne(t.Context(), bson.D{}); err != nil {
		t.Fatal(err)
	}

	info, err = Describe(t.Context(), client)
	if err != nil {
		t.Fatal(err)
	}

	if info.Backend != "SQLite" || info.BackendVersion == "" {
		t.Errorf("Backend = %q %q, want SQLite with a version", info.Backend, info.BackendVersion)
	}

	if n := info.Notes(); len(n) == 0 || !strings.Contains(n[0], "on SQLite") {
		t.Errorf("Notes = %q, want the backend named", n)
	}
}

func TestParsePoweredBy(t *testing.T) {
	for _, tc := range []struct {
		msg, name, version string
		ok                 bool
	}{
		{"Powered by FerretDB v1.24.0 and SQLite 3.46.0.", "SQLite", "3.46.0", true},
		{"Powered by FerretDB unknown and PostgreSQL 16.2.", "PostgreSQL", "16.2", true},
		{"Powered by FerretDB unknown.", "", "", false},
		{"Please star us on GitHub: https://github.com/FerretDB/FerretDB.", "", "", false},
	} {
		name, version, ok := parsePoweredBy(tc.msg)
		if name != tc.name || version != tc.version || ok != tc.ok {
			t.Errorf("parsePoweredBy(%q) = %q, %q, %v; want %q, %q, %v", tc.msg, name, version, ok, tc.name, tc.version, tc.ok)
		}
	}
}

func TestServerInfoWording(t *testing.T) {
	for _, tc := range []struct {
		info    ServerInfo
		summary string
		notes   []string
	}{
		{
			ServerInfo{Product: ProductMongoDB, Version: "8.0.4", Backend: "wiredTiger"},
			"MongoDB 8.0.4 (standalone)", nil,
		},
		{
			ServerInfo{Product: ProductMongoDB, Version: "7.0.12", IsReplicaSet: true, SetName: "rs0"},
			"MongoDB 7.0.12 (replica set rs0)", nil,
		},
		{
			ServerInfo{Product: ProductMongoDB, Version: "7.0.12", IsMongos: true, DebugBuild: true},
			"MongoDB 7.0.12 (mongos)",
			[]string{"the server is a debug build, which is slower than a release build"},
		},
		{
			ServerInfo{Product: ProductFerretDB, Version: "7.0.42", FerretDBVersion: "v1.24.0", Backend: "SQLite", BackendVersion: "3.46.0"},
			"FerretDB v1.24.0 on SQLite 3.46.0 (MongoDB 7.0.42 compatible)",
			[]string{"numbers describe FerretDB v1.24.0 on SQLite, not MongoDB"},
		},
		{
			ServerInfo{Product: ProductFerretDB, Version: "7.0.42"},
			"FerretDB (MongoDB 7.0.42 compatible)",
			[]string{"numbers describe FerretDB, not MongoDB"},
		},
	} {
		if got := tc.info.Summary(); got != tc.summary {
			t.Errorf("Summary = %q, want %q", got, tc.summary)
		}

		if got := tc.info.Notes(); !slices.Equal(got, tc.notes) {
			t.Errorf("Notes = %q, want %q", got, tc.notes)
		}
	}
}
