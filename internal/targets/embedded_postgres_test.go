package targets

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/targets/pglaunch"
	"github.com/mongobench/mongobench/internal/targets/pglaunch/pglaunchtest"
)

func TestEmbeddedPostgreSQL(t *testing.T) {
	pg := pglaunchtest.Start(t, pglaunch.Options{Settings: map[string]string{"fsync": "off"}})

	e := startEmbedded(t, EmbeddedOptions{PostgreSQLURL: pg.URL(pglaunch.DefaultDatabase)})
	client := connect(t, e)

	if !e.PostgreSQL() || e.Memory() {
		t.Errorf("PostgreSQL = %v, Memory = %v; want true, false", e.PostgreSQL(), e.Memory())
	}

	desc := e.Description()
	for _, want := range []string{"embedded FerretDB", "PostgreSQL", pg.URL(pglaunch.DefaultDatabase)} {
		if !strings.Contains(desc, want) {
			t.Errorf("Description = %q, want it to contain %q", desc, want)
		}
	}

	if notes := e.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "PostgreSQL") {
		t.Errorf("Notes = %q, want one note about PostgreSQL", notes)
	}

	coll := client.Database("bench").Collection("items")

	docs := []any{
		bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: int32(1)}},
		bson.D{{Key: "_id", Value: "b"}, {Key: "n", Value: int32(2)}},
	}
	if _, err := coll.InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}

	var got struct {
		ID string `bson:"_id"`
		N  int32  `bson:"n"`
	}
	if err := coll.FindOne(t.Context(), bson.D{{Key: "n", Value: int32(2)}}).Decode(&got); err != nil {
		t.Fatal(err)
	}

	if got.ID != "b" || got.N != 2 {
		t.Errorf("found %+v, want {b 2}", got)
	}

	// The data is in PostgreSQL: FerretDB made a schema for the database.
	schema, err := pg.Psql(t.Context(), pglaunch.DefaultDatabase,
		"SELECT schema_name FROM information_schema.schemata WHERE schema_name = 'bench'")
	if err != nil {
		t.Fatal(err)
	}

	if schema != "bench" {
		t.Errorf("PostgreSQL has no schema for database bench (got %q)", schema)
	}

	info, err := Describe(t.Context(), client)
	if err != nil {
		t.Fatal(err)
	}

	if info = e.Annotate(info); info.Product != ProductFerretDB || info.Backend != "PostgreSQL" {
		t.Errorf("Describe+Annotate = %s (backend %q), want FerretDB on PostgreSQL", info.Summary(), info.Backend)
	}

	assertNoData(t, e.Dir())
}

func TestEmbeddedPostgreSQLOptions(t *testing.T) {
	tests := []struct {
		name string
		url  string
		want string // in Description
	}{
		{"URL with password", "postgres://bench:s3cret@db.example:5432/ferretdb", "postgres://bench:xxxxx@db.example:5432/ferretdb"},
		{"postgresql scheme", "postgresql://bench@db.example/ferretdb", "postgresql://bench@db.example/ferretdb"},
		{"key=value string", "host=db.example password=s3cret dbname=ferretdb", "connection string not shown"},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// FerretDB connects lazily, so nothing needs to listen there.
			e := startEmbedded(t, EmbeddedOptions{PostgreSQLURL: tt.url})

			desc := e.Description()
			if !strings.Contains(desc, tt.want) || strings.Contains(desc, "s3cret") {
				t.Errorf("Description = %q, want it to contain %q and no password", desc, tt.want)
			}

			for _, note := range e.Notes() {
				if strings.Contains(note, "s3cret") {
					t.Errorf("note shows the password: %q", note)
				}
			}

			got := e.Annotate(ServerInfo{Product: ProductFerretDB})
			if got.Backend != "PostgreSQL" {
				t.Errorf("Annotate backend = %q, want PostgreSQL", got.Backend)
			}
		})
	}

	t.Run("memory and PostgreSQL", func(t *testing.T) {
		parent := t.TempDir()

		_, err := StartEmbedded(t.Context(), EmbeddedOptions{Memory: true, PostgreSQLURL: "postgres://127.0.0.1/x", TempDir: parent})
		if err == nil {
			t.Fatal("StartEmbedded accepted Memory with a PostgreSQL URL")
		}

		assertEmptyDir(t, parent)
	})
}
