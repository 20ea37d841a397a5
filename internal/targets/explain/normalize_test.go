package explain

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/results/result"
)

// loadReply reads an explain reply kept as relaxed extended JSON.
func loadReply(t testing.TB, path string) bson.Raw {
	t.Helper()

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	return fromJSON(t, string(b))
}

// fromJSON parses relaxed extended JSON into a document.
func fromJSON(t testing.TB, s string) bson.Raw {
	t.Helper()

	var raw bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &raw); err != nil {
		t.Fatalf("parse %.60q: %v", s, err)
	}

	return raw
}

// summary is the part of result.Explain a test compares.
type summary struct {
	Format         string
	Stages         []string
	Index          string
	CollectionScan bool
	KeysExamined   int64
	DocsExamined   int64
	DocsReturned   int64
	ExecutionMS    float64
	Pushdown       map[string]bool
	Warnings       []string
	Error          string
}

func summarize(e result.Explain) summary {
	return summary{
		Format: e.Format, Stages: e.Stages, Index: e.Index, CollectionScan: e.CollectionScan,
		KeysExamined: e.KeysExamined, DocsExamined: e.DocsExamined, DocsReturned: e.DocsReturned,
		ExecutionMS: e.ExecutionMS, Pushdown: e.Pushdown, Warnings: e.Warnings, Error: e.Error,
	}
}

// equal compares summaries, treating nil and empty slices and maps alike.
func (s summary) equal(o summary) bool {
	mapsEqual := len(s.Pushdown) == len(o.Pushdown)
	for k, v := range s.Pushdown {
		if w, ok := o.Pushdown[k]; !ok || w != v {
			mapsEqual = false
		}
	}

	return s.Format == o.Format && slices.Equal(s.Stages, o.Stages) && s.Index == o.Index &&
		s.CollectionScan == o.CollectionScan && s.KeysExamined == o.KeysExamined &&
		s.DocsExamined == o.DocsExamined && s.DocsReturned == o.DocsReturned &&
		s.ExecutionMS == o.ExecutionMS && mapsEqual && slices.Equal(s.Warnings, o.Warnings) && s.Error == o.Error
}

// checkRaw fails unless e.Raw is the JSON of a document.
func checkRaw(t *testing.T, e result.Explain) {
	t.Helper()

	var m map[string]any
	if err := json.Unmarshal([]byte(e.Raw), &m); err != nil {
		t.Errorf("Raw is not a JSON document: %v: %.200s", err, e.Raw)
	}
}

// TestNormalizeMongoDBDocumented checks Normalize on MongoDB explain
// replies written from MongoDB's documentation, not captured from a mongod
// (none can be installed here; see testdata/README.md). It shows that the
// documented shapes are read as intended, not that a real server's replies
// are: the MongoDB path is not verified against mongod here.
func TestNormalizeMongoDBDocumented(t *testing.T) {
	tests := []struct {
		file string
		want summary
	}{
		{"find_collscan.json", summary{
			Format: FormatMongoDB, Stages: []string{"COLLSCAN"}, CollectionScan: true,
			KeysExamined: 0, DocsExamined: 100000, DocsReturned: 1, ExecutionMS: 41,
			Warnings: []string{"collection scan on errors (examined 100000, returned 1)"},
		}},
		{"find_ixscan_fetch.json", summary{
			Format: FormatMongoDB, Stages: []string{"FETCH", "IXSCAN"}, Index: "customer_id_1",
			KeysExamined: 12, DocsExamined: 12, DocsReturned: 12, ExecutionMS: 0,
		}},
		{"find_sort_collscan.json", summary{
			Format: FormatMongoDB, Stages: []string{"SORT", "COLLSCAN"}, CollectionScan: true,
			KeysExamined: 0, DocsExamined: 250000, DocsReturned: 20, ExecutionMS: 187,
			Warnings: []string{"collection scan on events (examined 250000, returned 20)"},
		}},
		{"find_ixscan_limit.json", summary{
			Format: FormatMongoDB, Stages: []string{"LIMIT", "FETCH", "IXSCAN"}, Index: "status_1_created_at_-1",
			KeysExamined: 1, DocsExamined: 1, DocsReturned: 1, ExecutionMS: 1,
		}},
		{"aggregate_cursor.json", summary{
			Format: FormatMongoDB, Stages: []string{"$group", "PROJECTION_COVERED", "IXSCAN"}, Index: "code_1",
			KeysExamined: 4210, DocsExamined: 0, DocsReturned: 4210, ExecutionMS: 9,
		}},
		{"update_ixscan.json", summary{
			Format: FormatMongoDB, Stages: []string{"UPDATE", "FETCH", "IXSCAN"}, Index: "email_1",
			KeysExamined: 1, DocsExamined: 1, DocsReturned: 0, ExecutionMS: 0,
		}},
		{"delete_collscan.json", summary{
			Format: FormatMongoDB, Stages: []string{"DELETE", "COLLSCAN"}, CollectionScan: true,
			KeysExamined: 0, DocsExamined: 50000, DocsReturned: 0, ExecutionMS: 25,
			Warnings: []string{"collection scan on sessions (examined 50000, returned 0)"},
		}},
		{"find_queryplanner_only.json", summary{
			Format: FormatMongoDB, Stages: []string{"FETCH", "IXSCAN"}, Index: "status_1",
			KeysExamined: -1, DocsExamined: -1, DocsReturned: -1, ExecutionMS: -1,
		}},
		{"find_sbe_ixscan.json", summary{
			Format: FormatMongoDB, Stages: []string{"FETCH", "IXSCAN"}, Index: "status_1",
			KeysExamined: 3125, DocsExamined: 3125, DocsReturned: 3125, ExecutionMS: 14,
		}},
		{"find_idhack.json", summary{
			Format: FormatMongoDB, Stages: []string{"IDHACK"}, Index: "_id_",
			KeysExamined: 1, DocsExamined: 1, DocsReturned: 1, ExecutionMS: 0,
		}},
		{"find_ixscan_poor.json", summary{
			Format: FormatMongoDB, Stages: []string{"FETCH", "IXSCAN"}, Index: "level_1",
			KeysExamined: 18000, DocsExamined: 18000, DocsReturned: 3, ExecutionMS: 22.5,
			Warnings: []string{"examined 18000 documents to return 3 on logs using index level_1"},
		}},
		{"find_sharded.json", summary{
			Format: FormatMongoDB, Stages: []string{"SHARD_MERGE", "SHARDING_FILTER", "COLLSCAN", "SHARDING_FILTER", "COLLSCAN"},
			CollectionScan: true, KeysExamined: 0, DocsExamined: 40000, DocsReturned: 980, ExecutionMS: 35,
			Warnings: []string{"collection scan on orders (examined 40000, returned 980)"},
		}},
	}

	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			e := Normalize(loadReply(t, filepath.Join("testdata", "mongodb", tt.file)))

			if got := summarize(e); !got.equal(tt.want) {
				t.Errorf("Normalize =\n%+v\nwant\n%+v", got, tt.want)
			}

			checkRaw(t, e)
		})
	}
}

// ferretWrite is the warning for FerretDB's explain of a write.
func ferretWrite(command string) string {
	return "FerretDB explains " + command + " without its filter, so the plan shown reads the whole collection " +
		"whatever the filter; it says nothing about the index the write may use"
}

func TestNormalizeFerretDB(t *testing.T) {
	pushed := func(filter, sort, limit bool) map[string]bool {
		return map[string]bool{"filter": filter, "sort": sort, "limit": limit}
	}

	sqliteScan := []string{"SCAN errors_fa17ba86"}
	pgSeq := []string{"Seq Scan"}

	unknown := func(s summary) summary {
		s.KeysExamined, s.DocsExamined, s.DocsReturned, s.ExecutionMS = -1, -1, -1, -1
		return s
	}

	// These replies were captured from FerretDB v1.24 (see live_test.go):
	// with 3000 documents and an index on code, it reads the whole table
	// for every filter, even on _id, because its SQL never matches its
	// indexes' expressions.
	tests := []struct {
		file string
		want summary
	}{
		{"sqlite_find_by_id.json", unknown(summary{
			Format: FormatFerretDBSQLite, Stages: sqliteScan, CollectionScan: true, Pushdown: pushed(true, false, false),
			Warnings: []string{"collection scan on errors"},
		})},
		{"sqlite_find_by_indexed_field.json", unknown(summary{
			Format: FormatFerretDBSQLite, Stages: sqliteScan, CollectionScan: true, Pushdown: pushed(false, false, false),
			Warnings: []string{"collection scan on errors"},
		})},
		{"sqlite_find_by_unindexed_field.json", unknown(summary{
			Format: FormatFerretDBSQLite, Stages: sqliteScan, CollectionScan: true, Pushdown: pushed(false, false, false),
			Warnings: []string{"collection scan on errors"},
		})},
		{"sqlite_find_sort_limit.json", unknown(summary{
			Format: FormatFerretDBSQLite, Stages: sqliteScan, CollectionScan: true, Pushdown: pushed(false, false, false),
			Warnings: []string{"collection scan on errors"},
		})},
		{"sqlite_aggregate_count.json", unknown(summary{
			Format: FormatFerretDBSQLite, Stages: sqliteScan, CollectionScan: true, Pushdown: pushed(false, false, false),
			Warnings: []string{"collection scan on errors"},
		})},
		{"sqlite_update.json", unknown(summary{
			Format: FormatFerretDBSQLite, Stages: sqliteScan, CollectionScan: true, Pushdown: pushed(false, false, false),
			Warnings: []string{"collection scan on errors", ferretWrite("update")},
		})},
		{"sqlite_delete.json", unknown(summary{
			Format: FormatFerretDBSQLite, Stages: sqliteScan, CollectionScan: true, Pushdown: pushed(false, false, false),
			Warnings: []string{"collection scan on errors", ferretWrite("delete")},
		})},
		{"sqlite_find_capped_limit.json", unknown(summary{
			Format: FormatFerretDBSQLite, Stages: []string{"SCAN capped_5d69fae8"}, CollectionScan: true, Pushdown: pushed(false, true, true),
			Warnings: []string{"collection scan on capped"},
		})},
		{"sqlite_find_missing_collection.json", unknown(summary{
			Format: FormatUnknown, Pushdown: pushed(false, false, false),
			Warnings: []string{"FerretDB returned no plan, as it does when the database or collection does not exist"},
		})},
		{"postgresql_find_by_id.json", unknown(summary{
			Format: FormatFerretDBPostgreSQL, Stages: pgSeq, CollectionScan: true, Pushdown: pushed(true, false, false),
			Warnings: []string{"collection scan on errors"},
		})},
		{"postgresql_find_by_indexed_field.json", unknown(summary{
			Format: FormatFerretDBPostgreSQL, Stages: pgSeq, CollectionScan: true, Pushdown: pushed(true, false, false),
			Warnings: []string{"collection scan on errors"},
		})},
		{"postgresql_aggregate_count.json", unknown(summary{
			Format: FormatFerretDBPostgreSQL, Stages: pgSeq, CollectionScan: true, Pushdown: pushed(true, false, false),
			Warnings: []string{"collection scan on errors"},
		})},
		{"postgresql_delete.json", unknown(summary{
			Format: FormatFerretDBPostgreSQL, Stages: pgSeq, CollectionScan: true, Pushdown: pushed(false, false, false),
			Warnings: []string{"collection scan on errors", ferretWrite("delete")},
		})},
		{"postgresql_find_capped_limit.json", unknown(summary{
			Format: FormatFerretDBPostgreSQL, Stages: []string{"Limit", "Index Scan"}, Index: "capped_5d69fae8_pkey",
			Pushdown: pushed(false, true, true),
		})},
		{"postgresql_find_capped_natural.json", unknown(summary{
			Format: FormatFerretDBPostgreSQL, Stages: []string{"Sort", "Seq Scan"}, CollectionScan: true, Pushdown: pushed(true, true, false),
			Warnings: []string{"collection scan on capped"},
		})},
		{"postgresql_find_missing_collection.json", unknown(summary{
			Format: FormatUnknown, Pushdown: pushed(false, false, false),
			Warnings: []string{"FerretDB returned no plan, as it does when the database or collection does not exist"},
		})},
	}

	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			e := Normalize(loadReply(t, filepath.Join("testdata", "ferretdb", tt.file)))

			if got := summarize(e); !got.equal(tt.want) {
				t.Errorf("Normalize =\n%+v\nwant\n%+v", got, tt.want)
			}

			checkRaw(t, e)
		})
	}
}

func TestNormalizeShapes(t *testing.T) {
	// Replies FerretDB v1.24 cannot be made to give (it never uses its own
	// indexes), written the way its code would format them, and replies of
	// unknown servers.
	tests := []struct {
		name  string
		reply string
		want  summary
	}{
		{
			name: "SQLite search using an index",
			reply: `{"queryPlanner": {"Plan": ["id=3 parent=0 notused=0 detail=SEARCH errors_fa17ba86 USING INDEX errors_fa17ba86_code_1 (<expr>=?)"]},
				"filterPushdown": true, "sortPushdown": false, "limitPushdown": false, "ok": 1}`,
			want: summary{
				Format: FormatFerretDBSQLite, Stages: []string{"SEARCH errors_fa17ba86 USING INDEX errors_fa17ba86_code_1 (<expr>=?)"},
				Index: "code_1", Pushdown: map[string]bool{"filter": true, "sort": false, "limit": false},
			},
		},
		{
			name: "SQLite scan in index order with a temporary B-tree",
			reply: `{"queryPlanner": {"Plan": [
					"id=2 parent=0 notused=0 detail=SCAN t_1 USING COVERING INDEX t_1_a_1_b_-1",
					"id=9 parent=0 notused=0 detail=USE TEMP B-TREE FOR ORDER BY"]},
				"serverInfo": {"ferretdbVersion": "v1.24.0"}, "ok": 1}`,
			want: summary{
				Format: FormatFerretDBSQLite, Stages: []string{"SCAN t_1 USING COVERING INDEX t_1_a_1_b_-1", "USE TEMP B-TREE FOR ORDER BY"},
				Index: "a_1_b_-1",
			},
		},
		{
			name: "SQLite search by rowid",
			reply: `{"queryPlanner": {"Plan": ["id=2 parent=0 notused=0 detail=SEARCH t USING INTEGER PRIMARY KEY (rowid=?)"]},
				"filterPushdown": true}`,
			want: summary{
				Format: FormatFerretDBSQLite, Stages: []string{"SEARCH t USING INTEGER PRIMARY KEY (rowid=?)"},
				Pushdown: map[string]bool{"filter": true},
			},
		},
		{
			name: "PostgreSQL bitmap scan of a FerretDB index",
			reply: `{"queryPlanner": {"Plan": {"Node Type": "Bitmap Heap Scan", "Relation Name": "errors_fa17ba86", "Plans": [
					{"Node Type": "Bitmap Index Scan", "Index Name": "errors_fa17ba86_code___0fa2c7c8_idx", "Parent Relationship": "Outer"}]}},
				"filterPushdown": true, "sortPushdown": false, "limitPushdown": false}`,
			want: summary{
				Format: FormatFerretDBPostgreSQL, Stages: []string{"Bitmap Heap Scan", "Bitmap Index Scan"}, Index: "code__",
				Pushdown: map[string]bool{"filter": true, "sort": false, "limit": false},
			},
		},
		{
			name: "PostgreSQL EXPLAIN array as PostgreSQL prints it",
			reply: `{"queryPlanner": [{"Plan": {"Node Type": "Limit", "Plans": [
					{"Node Type": "Index Scan", "Relation Name": "t_00000001", "Index Name": "t_00000001_status_1a2b3c4d_idx"}]}}]}`,
			want: summary{Format: FormatFerretDBPostgreSQL, Stages: []string{"Limit", "Index Scan"}, Index: "status"},
		},
		{
			name:  "empty document",
			reply: `{}`,
			want:  summary{Format: FormatUnknown},
		},
		{
			name:  "a server that answers only ok",
			reply: `{"ok": 1}`,
			want:  summary{Format: FormatUnknown},
		},
		{
			name:  "queryPlanner of the wrong type",
			reply: `{"queryPlanner": 5, "executionStats": [], "stages": "x"}`,
			want:  summary{Format: FormatUnknown},
		},
		{
			name:  "winningPlan of the wrong types",
			reply: `{"queryPlanner": {"winningPlan": {"stage": 7, "inputStage": "x", "inputStages": {"a": 1}}}, "executionStats": {"nReturned": "many", "totalDocsExamined": -3, "executionTimeMillis": {"$numberDouble": "Infinity"}}}`,
			want:  summary{Format: FormatMongoDB},
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Normalize(fromJSON(t, tt.reply))

			want := tt.want
			want.KeysExamined, want.DocsExamined, want.DocsReturned, want.ExecutionMS = -1, -1, -1, -1

			if got := summarize(e); !got.equal(want) {
				t.Errorf("Normalize =\n%+v\nwant\n%+v", got, want)
			}

			checkRaw(t, e)
		})
	}
}

func TestNormalizeInvalid(t *testing.T) {
	tests := []struct {
		name string
		raw  bson.Raw
	}{
		{"nil", nil},
		{"short", bson.Raw{1, 2}},
		{"bad length", bson.Raw{0xff, 0, 0, 0, 0}},
		{"missing terminator", bson.Raw{6, 0, 0, 0, 8, 1}},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Normalize(tt.raw)
			if e.Format != FormatUnknown || !strings.Contains(e.Error, "not a valid BSON document") || e.DocsExamined != -1 {
				t.Errorf("Normalize = %+v", e)
			}
		})
	}
}

func TestNormalizeTruncatesRaw(t *testing.T) {
	// A $in of many long values, as a plan's parsedQuery can echo.
	in := make(bson.A, 0, 3000)
	for range 3000 {
		in = append(in, strings.Repeat("é", 20))
	}

	raw, err := bson.Marshal(bson.D{
		{Key: "queryPlanner", Value: bson.D{
			{Key: "parsedQuery", Value: bson.D{{Key: "k", Value: bson.D{{Key: "$in", Value: in}}}}},
			{Key: "winningPlan", Value: bson.D{{Key: "stage", Value: "COLLSCAN"}}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}

	e := Normalize(raw)

	if len(e.Raw) > MaxRawBytes || !strings.HasSuffix(e.Raw, TruncatedSuffix) {
		t.Errorf("Raw is %d bytes ending %q, want at most %d ending %q", len(e.Raw), e.Raw[len(e.Raw)-20:], MaxRawBytes, TruncatedSuffix)
	}

	if !strings.HasPrefix(e.Raw, `{"queryPlanner":`) || !utf8.ValidString(e.Raw) {
		t.Errorf("Raw was not cut cleanly: %.80q...", e.Raw)
	}

	if e.Format != FormatMongoDB || !e.CollectionScan {
		t.Errorf("the plan was lost: %+v", summarize(e))
	}
}

func TestWarnings(t *testing.T) {
	base := func(mod func(*result.Explain)) result.Explain {
		e := newExplain()
		e.Collection = "errors"
		mod(&e)

		return e
	}

	tests := []struct {
		name    string
		e       result.Explain
		command string
		want    []string
	}{
		{"nothing to say", base(func(e *result.Explain) { e.Format = FormatMongoDB; e.DocsExamined, e.DocsReturned = 5, 5 }), "find", nil},
		{"collection scan with counts", base(func(e *result.Explain) {
			e.CollectionScan, e.DocsExamined, e.DocsReturned = true, 100000, 1
		}), "find", []string{"collection scan on errors (examined 100000, returned 1)"}},
		{"collection scan without counts", base(func(e *result.Explain) { e.CollectionScan = true }), "find", []string{"collection scan on errors"}},
		{"collection scan, no collection", base(func(e *result.Explain) { e.CollectionScan, e.Collection = true, "" }), "find", []string{"collection scan"}},
		{"many examined, none returned", base(func(e *result.Explain) {
			e.Index, e.DocsExamined, e.DocsReturned = "a_1", 1000, 0
		}), "find", []string{"examined 1000 documents to return 0 on errors using index a_1"}},
		{"below the floor", base(func(e *result.Explain) { e.DocsExamined, e.DocsReturned = 999, 0 }), "find", nil},
		{"ratio exactly 10", base(func(e *result.Explain) { e.DocsExamined, e.DocsReturned = 10000, 1000 }), "find", nil},
		{
			"ratio above 10", base(func(e *result.Explain) { e.DocsExamined, e.DocsReturned = 10001, 1000 }), "find",
			[]string{"examined 10001 documents to return 1000 on errors"},
		},
		{
			"returned unknown", base(func(e *result.Explain) { e.DocsExamined = 5000 }), "find",
			[]string{"examined 5000 documents to return 0 on errors"},
		},
		{
			"FerretDB findAndModify", base(func(e *result.Explain) { e.Format = FormatFerretDBPostgreSQL }), "findAndModify",
			[]string{ferretWrite("findAndModify")},
		},
		{"MongoDB update", base(func(e *result.Explain) { e.Format = FormatMongoDB }), "update", nil},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := warnings(tt.e, tt.command); !slices.Equal(got, tt.want) {
				t.Errorf("warnings = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPGIndexNames(t *testing.T) {
	names := []string{"_id_", "code_1", "status_1_created_at_-1", "Code_1"}

	tests := []struct {
		sqlName, relation string
		fromName          string // pgIndexFromName
		matched           string // matchPGIndex
	}{
		{"errors_fa17ba86__id__" + pgHash("_id_")[1:], "errors_fa17ba86", "_id_", "_id_"},
		{"errors_fa17ba86_code__" + pgHash("code_1"), "errors_fa17ba86", "code__", "code_1"},
		{"errors_fa17ba86_code__" + pgHash("Code_1"), "errors_fa17ba86", "code__", "Code_1"},
		{"errors_fa17ba86_status___created_a" + pgHash("status_1_created_at_-1"), "errors_fa17ba86", "status___created_a", "status_1_created_at_-1"},
		// Re-hashed after a clash: the sanitized name decides when unique.
		{"errors_fa17ba86_status___created_a" + pgHash("x"), "errors_fa17ba86", "status___created_a", "status_1_created_at_-1"},
		{"errors_fa17ba86_code__" + pgHash("x"), "errors_fa17ba86", "code__", ""}, // ambiguous: code_1 or Code_1
		{"errors_fa17ba86_pkey", "errors_fa17ba86", "errors_fa17ba86_pkey", ""},
		{"other_12345678_code__" + pgHash("code_1"), "errors_fa17ba86", "other_12345678_code__" + pgHash("code_1"), "code_1"},
		// The table part of an index name is cut to 30 bytes.
		{"a_very_long_collection_name_fo_x" + pgHash("x"), "a_very_long_collection_name_for_tests_0a1b2c3d", "x", ""},
	}

	for _, tt := range tests {
		t.Run(tt.sqlName, func(t *testing.T) {
			if got := pgIndexFromName(tt.sqlName, tt.relation); got != tt.fromName {
				t.Errorf("pgIndexFromName = %q, want %q", got, tt.fromName)
			}

			if got := matchPGIndex(tt.sqlName, names); got != tt.matched {
				t.Errorf("matchPGIndex = %q, want %q", got, tt.matched)
			}
		})
	}
}

func FuzzNormalize(f *testing.F) {
	for _, dir := range []string{"mongodb", "ferretdb"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		for _, file := range files {
			f.Add([]byte(loadReply(f, file)))
		}
	}

	f.Add([]byte{})
	f.Add([]byte{5, 0, 0, 0, 0})

	f.Fuzz(func(t *testing.T, b []byte) {
		e := Normalize(bson.Raw(b))

		if e.Format == "" {
			t.Error("empty format")
		}

		if _, err := json.Marshal(e); err != nil {
			t.Errorf("the summary does not marshal: %v", err)
		}

		if len(e.Raw) > MaxRawBytes {
			t.Errorf("Raw is %d bytes", len(e.Raw))
		}
	})
}
