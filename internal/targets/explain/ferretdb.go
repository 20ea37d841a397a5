package explain

import (
	"context"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/results/result"
)

// FerretDB v1.x keeps each collection in a table named after it plus a
// hash ("errors_fa17ba86") and names the SQL index of a MongoDB index:
//   - on SQLite, "<table>_<index name>", verbatim;
//   - on PostgreSQL, "<table, cut to 30 bytes>_<index name, lower-cased,
//     other characters replaced by '_', cut to 18 bytes>_<FNV-1a hash of
//     the index name, 8 hex digits>_idx", e.g.
//     index "code_1" of collection "errors" → "errors_fa17ba86_code___cd64c300_idx".
//
// Both schemes are FerretDB's internals (backends/*/metadata/registry.go);
// names that do not fit them are reported as the backend gives them.
const (
	pgIndexNameMax = 63                   // PostgreSQL's identifier limit
	pgTablePartMax = pgIndexNameMax/2 - 1 // table part of an index name
	pgSuffixLen    = len("_00000000_idx") // hash suffix of an index name
	pgIndexPartMax = pgIndexNameMax/2 - pgSuffixLen
)

var (
	// sqliteDetail finds the detail text of one EXPLAIN QUERY PLAN line,
	// as FerretDB formats it: "id=2 parent=0 notused=0 detail=SCAN t".
	sqliteDetail = regexp.MustCompile(`^id=-?\d+ parent=-?\d+ notused=-?\d+ detail=(.*)$`)

	// sqliteTableIndex parses SCAN and SEARCH lines: table, and the index
	// when one is used ("SEARCH t USING INDEX t_code_1 (<expr>=?)").
	sqliteTableIndex = regexp.MustCompile(`^(?:SCAN|SEARCH) (\S+)(?: AS \S+)?(?: USING (?:COVERING )?INDEX (.+?)(?: \(.*\))?)?$`)

	// pgHashSuffix is the hash suffix of FerretDB's PostgreSQL index names.
	pgHashSuffix = regexp.MustCompile(`_[0-9a-f]{8}_idx$`)

	// pgSpecial is FerretDB's pattern of characters it replaces in
	// PostgreSQL names.
	pgSpecial = regexp.MustCompile(`[^a-z][^a-z0-9_]*`)
)

// sqlitePlan returns the detail texts of FerretDB's SQLite plan lines in
// qp.Plan, or nil when qp does not hold such lines.
func sqlitePlan(qp bson.Raw) []string {
	var details []string

	for _, v := range values(qp.Lookup("Plan")) {
		line, ok := v.StringValueOK()
		if !ok {
			return nil
		}

		m := sqliteDetail.FindStringSubmatch(line)
		if m == nil {
			return nil
		}

		details = append(details, m[1])
	}

	return details
}

// normalizeSQLite fills e from SQLite plan details and returns the SQL name
// of the index used, if any. A "SCAN <table>" without an index reads the
// whole table; SEARCH, or SCAN USING INDEX (a full index scan, for order),
// does not count as a collection scan.
func normalizeSQLite(e *result.Explain, details []string) string {
	e.Stages = details

	var sqlIndex string

	for _, d := range details {
		m := sqliteTableIndex.FindStringSubmatch(d)
		if m == nil {
			continue
		}

		table, index := m[1], m[2]

		if index == "" {
			if strings.HasPrefix(d, "SCAN ") {
				e.CollectionScan = true
			}

			continue
		}

		if sqlIndex == "" {
			sqlIndex = index
			e.Index = strings.TrimPrefix(index, table+"_")
		}
	}

	return sqlIndex
}

// pgPlanRoot returns the root node of a PostgreSQL EXPLAIN (FORMAT JSON)
// plan held in v (FerretDB's queryPlanner). PostgreSQL prints an array of
// {"Plan": node}; FerretDB v1.24 keeps {"Plan": node} of the first element
// only. Both forms, and a bare node, are accepted.
func pgPlanRoot(v bson.RawValue) bson.Raw {
	for range 3 {
		if vals := values(v); len(vals) > 0 {
			v = vals[0]
		}

		doc, ok := v.DocumentOK()
		if !ok {
			return nil
		}

		if _, ok := lookupString(doc, "Node Type"); ok {
			return doc
		}

		v = doc.Lookup("Plan")
	}

	return nil
}

// normalizePostgreSQL fills e from a PostgreSQL plan tree and returns the
// SQL name of the first index used, if any. A Seq Scan reads the whole
// table.
func normalizePostgreSQL(e *result.Explain, root bson.Raw) string {
	var sqlIndex string

	var walk func(node bson.Raw, relation string, depth int)

	walk = func(node bson.Raw, relation string, depth int) {
		if depth > maxDepth {
			return
		}

		nodeType, _ := lookupString(node, "Node Type")
		e.Stages = append(e.Stages, nodeType)

		if nodeType == "Seq Scan" {
			e.CollectionScan = true
		}

		if r, ok := lookupString(node, "Relation Name"); ok {
			relation = r
		}

		if name, ok := lookupString(node, "Index Name"); ok && sqlIndex == "" {
			sqlIndex = name
			e.Index = pgIndexFromName(name, relation)
		}

		for _, v := range values(node.Lookup("Plans")) {
			if child, ok := v.DocumentOK(); ok {
				// A Bitmap Index Scan does not name its relation;
				// its Bitmap Heap Scan parent does.
				walk(child, relation, depth+1)
			}
		}
	}

	walk(root, "", 0)

	return sqlIndex
}

// pgIndexFromName recovers what it can of the MongoDB index name from
// FerretDB's PostgreSQL index name: the lower-cased, sanitized (and maybe
// cut) name between the table part and the hash suffix. Names that do not
// follow FerretDB's scheme, such as a capped collection's "<table>_pkey",
// are returned unchanged. Run maps the result back to the real name with
// the collection's index list.
func pgIndexFromName(sqlName, relation string) string {
	loc := pgHashSuffix.FindStringIndex(sqlName)
	if loc == nil {
		return sqlName
	}

	rest := sqlName[:loc[0]]

	tablePart := relation
	if len(tablePart) > pgTablePartMax {
		tablePart = tablePart[:pgTablePartMax]
	}

	if relation == "" || !strings.HasPrefix(rest, tablePart+"_") {
		return sqlName
	}

	return strings.TrimPrefix(rest, tablePart+"_")
}

// pgIndexPart is the part of a PostgreSQL index name FerretDB derives from
// the MongoDB index name.
func pgIndexPart(name string) string {
	part := pgSpecial.ReplaceAllString(strings.ToLower(name), "_")
	if len(part) > pgIndexPartMax {
		part = part[:pgIndexPartMax]
	}

	return part
}

// pgHash is the hash suffix FerretDB gives the PostgreSQL index of the
// MongoDB index name (when no other index of the database has it already).
func pgHash(name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))

	return fmt.Sprintf("_%08x_idx", h.Sum32())
}

// matchPGIndex returns the MongoDB index among names whose FerretDB
// PostgreSQL index is sqlName: by hash suffix first, then, for the rare
// names FerretDB had to re-hash to avoid a clash, by the sanitized name
// when only one index matches that way. It returns "" when none does.
func matchPGIndex(sqlName string, names []string) string {
	for _, n := range names {
		if strings.HasSuffix(sqlName, pgHash(n)) {
			return n
		}
	}

	loc := pgHashSuffix.FindStringIndex(sqlName)
	if loc == nil {
		return ""
	}

	var found []string

	for _, n := range names {
		if strings.HasSuffix(sqlName[:loc[0]], "_"+pgIndexPart(n)) {
			found = append(found, n)
		}
	}

	if len(found) == 1 {
		return found[0]
	}

	return ""
}

// ferretPGIndexFromList maps sqlName back to its MongoDB index name with
// the collection's index list, or returns fallback when it cannot.
func ferretPGIndexFromList(ctx context.Context, coll *mongo.Collection, sqlName, fallback string) string {
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		return fallback
	}

	names := make([]string, 0, len(specs))
	for _, s := range specs {
		names = append(names, s.Name)
	}

	if n := matchPGIndex(sqlName, names); n != "" {
		return n
	}

	return fallback
}
