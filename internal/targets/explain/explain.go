// Package explain asks the server how it runs one representative instance of
// an operation and turns the answer into result.Explain, a summary that
// reads the same whichever server answered: the plan's stages, the index
// used, whether the whole collection is read, how many keys and documents
// were examined for how many returned, and plain-language warnings.
//
// Servers answer explain in their own formats. MongoDB (and servers that
// copy it, such as Percona Server for MongoDB) answer with a tree of plan
// stages and executionStats. FerretDB v1.x answers with its backend's own
// plan: SQLite's EXPLAIN QUERY PLAN lines or PostgreSQL's EXPLAIN (FORMAT
// JSON) tree, plus whether the filter, sort and limit were pushed down to
// the backend, and no execution statistics. Run detects the format by
// the reply's shape and keeps the reply itself in Explain.Raw for anything
// the summary leaves out.
package explain

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/results/result"
)

// Formats Explain.Format takes.
const (
	// FormatMongoDB is MongoDB's explain output: queryPlanner.winningPlan
	// and executionStats.
	FormatMongoDB = "mongodb"

	// FormatFerretDBSQLite is FerretDB's explain on its SQLite backend:
	// queryPlanner.Plan holds SQLite's EXPLAIN QUERY PLAN lines.
	FormatFerretDBSQLite = "ferretdb-sqlite"

	// FormatFerretDBPostgreSQL is FerretDB's explain on its PostgreSQL
	// backend: queryPlanner holds PostgreSQL's EXPLAIN (FORMAT JSON) plan.
	FormatFerretDBPostgreSQL = "ferretdb-postgresql"

	// FormatUnknown is any other reply, or FerretDB's empty plan for a
	// missing collection; only Raw (and FerretDB's Pushdown) is filled in
	// then.
	FormatUnknown = "unknown"
)

// Verbosities Run asks for, the richer first.
const (
	// VerbosityExecutionStats runs the winning plan and reports its
	// counters. Write commands are not applied when explained.
	VerbosityExecutionStats = "executionStats"

	// VerbosityQueryPlanner only plans, for servers that refuse to
	// execute an explained command.
	VerbosityQueryPlanner = "queryPlanner"
)

const (
	// MaxRawBytes bounds Explain.Raw and Explain.Command, so that a huge
	// plan (a $or over hundreds of branches, say) cannot bloat a result
	// file. Longer texts are cut and end with TruncatedSuffix.
	MaxRawBytes = 64 << 10

	// TruncatedSuffix ends a Raw or Command text that was cut to
	// MaxRawBytes, which makes it invalid JSON on purpose.
	TruncatedSuffix = "…(truncated)"

	// manyExamined and examinedRatio define "many documents examined per
	// document returned" for the warning: at least manyExamined, and more
	// than examinedRatio times the documents returned.
	manyExamined  = 1000
	examinedRatio = 10

	// maxDepth bounds how deep plan trees are followed, so that a hostile
	// or broken reply cannot exhaust the stack.
	maxDepth = 128
)

// Run explains cmd, a command document as built by op.Operation's
// ExplainCommand, in db with verbosity executionStats, falling back to
// queryPlanner when the server rejects executionStats, and returns the
// normalized summary labelled with operation and collection. It never
// returns an error: a failure is described in Explain.Error, because an
// operation that cannot be explained must not fail a benchmark run. ctx
// bounds the explain (executionStats runs the query, which may take as long
// as the query does).
func Run(ctx context.Context, db *mongo.Database, operation, collection string, cmd bson.D) result.Explain {
	e := newExplain()

	raw, err := runExplain(ctx, db, cmd, VerbosityExecutionStats)

	var ce mongo.CommandError
	if err != nil && errors.As(err, &ce) && ctx.Err() == nil {
		var qpErr error

		raw, qpErr = runExplain(ctx, db, cmd, VerbosityQueryPlanner)
		if qpErr != nil {
			err = fmt.Errorf("%w (with verbosity %s: %w)", err, VerbosityQueryPlanner, qpErr)
		} else {
			err = nil
		}
	}

	if err == nil {
		var d details

		e, d = normalize(raw)

		if e.Format == FormatFerretDBPostgreSQL && d.sqlIndex != "" {
			e.Index = ferretPGIndexFromList(ctx, db.Collection(collection), d.sqlIndex, e.Index)
		}
	} else {
		e.Error = "explain: " + err.Error()
	}

	e.Operation = operation
	e.Collection = collection
	e.Command = truncateCommand(cmd)
	e.Warnings = warnings(e, commandName(cmd))

	return e
}

// runExplain runs the explain command with the given verbosity.
func runExplain(ctx context.Context, db *mongo.Database, cmd bson.D, verbosity string) (bson.Raw, error) {
	return db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: verbosity}}).Raw()
}

// truncateCommand returns cmd as relaxed extended JSON, cut to MaxRawBytes,
// or "" when it cannot be marshalled.
func truncateCommand(cmd bson.D) string {
	b, err := bson.MarshalExtJSON(cmd, false, false)
	if err != nil {
		return ""
	}

	return truncate(string(b))
}

// details are what normalize learns beyond result.Explain.
type details struct {
	collection string // from the reply's echo of the command or namespace
	command    string // the explained command's name, e.g. "find"
	sqlIndex   string // the backend's own name of the index used
}

// newExplain returns an Explain with every counter unknown.
func newExplain() result.Explain {
	return result.Explain{
		Format:       FormatUnknown,
		KeysExamined: -1,
		DocsExamined: -1,
		DocsReturned: -1,
		ExecutionMS:  -1,
	}
}

// normalize detects the format of an explain reply and fills in what it
// tells (see Normalize in the tests), without warnings.
func normalize(raw bson.Raw) (result.Explain, details) {
	e := newExplain()

	var d details

	if err := raw.Validate(); err != nil {
		e.Error = "explain reply is not a valid BSON document: " + err.Error()
		return e, d
	}

	if b, err := bson.MarshalExtJSON(raw, false, false); err == nil {
		e.Raw = truncate(string(b))
	}

	d.collection, d.command = echoedCommand(raw)

	qp, hasQP := lookupDoc(raw, "queryPlanner")
	ferret := isFerretDB(raw)

	if ferret {
		e.Pushdown = pushdown(raw)
	}

	switch {
	case hasQP && sqlitePlan(qp) != nil:
		e.Format = FormatFerretDBSQLite
		d.sqlIndex = normalizeSQLite(&e, sqlitePlan(qp))

	case pgPlanRoot(raw.Lookup("queryPlanner")) != nil:
		e.Format = FormatFerretDBPostgreSQL
		d.sqlIndex = normalizePostgreSQL(&e, pgPlanRoot(raw.Lookup("queryPlanner")))

	case !ferret && normalizeMongoDB(&e, raw):
		e.Format = FormatMongoDB

		if d.collection == "" {
			d.collection = namespaceCollection(raw)
		}

	case ferret:
		e.Warnings = append(e.Warnings, "FerretDB returned no plan, as it does when the database or collection does not exist")
	}

	return e, d
}

// isFerretDB reports whether the reply carries FerretDB's extensions.
func isFerretDB(raw bson.Raw) bool {
	for _, key := range []string{"filterPushdown", "sortPushdown", "limitPushdown"} {
		if _, err := raw.LookupErr(key); err == nil {
			return true
		}
	}

	if si, ok := lookupDoc(raw, "serverInfo"); ok {
		if _, err := si.LookupErr("ferretdbVersion"); err == nil {
			return true
		}
	}

	return false
}

// pushdown collects FerretDB's top-level *Pushdown flags, keyed by what was
// pushed down ("filter", "sort", "limit", ...).
func pushdown(raw bson.Raw) map[string]bool {
	elems, err := raw.Elements()
	if err != nil {
		return nil
	}

	m := make(map[string]bool)

	for _, el := range elems {
		what, ok := strings.CutSuffix(el.Key(), "Pushdown")
		if !ok || what == "" {
			continue
		}

		if b, ok := el.Value().BooleanOK(); ok {
			m[what] = b
		}
	}

	if len(m) == 0 {
		return nil
	}

	return m
}

// echoedCommand returns the collection and command name from the "command"
// document that MongoDB (4.4+) and FerretDB echo in their replies.
func echoedCommand(raw bson.Raw) (collection, name string) {
	cmd, ok := lookupDoc(raw, "command")
	if !ok {
		return "", ""
	}

	elems, err := cmd.Elements()
	if err != nil || len(elems) == 0 {
		return "", ""
	}

	name = elems[0].Key()
	collection, _ = elems[0].Value().StringValueOK()

	return collection, name
}

// namespaceCollection returns the collection of MongoDB's
// queryPlanner.namespace ("db.collection").
func namespaceCollection(raw bson.Raw) string {
	for _, path := range [][]string{
		{"queryPlanner", "namespace"},
		{"stages", "0", "$cursor", "queryPlanner", "namespace"},
	} {
		v, err := raw.LookupErr(path...)
		if err != nil {
			continue
		}

		if ns, ok := v.StringValueOK(); ok {
			if _, coll, found := strings.Cut(ns, "."); found {
				return coll
			}
		}
	}

	return ""
}

// commandName returns the first key of cmd, e.g. "find" or "update".
func commandName(cmd bson.D) string {
	if len(cmd) == 0 {
		return ""
	}

	return cmd[0].Key
}

// warnings returns e's existing warnings plus the findings its numbers call
// for: a collection scan (with the counts when known), or else many
// documents examined per document returned. command is the explained
// command's name, for FerretDB's blind spot on writes.
func warnings(e result.Explain, command string) []string {
	w := e.Warnings

	where := ""
	if e.Collection != "" {
		where = " on " + e.Collection
	}

	switch {
	case e.CollectionScan:
		msg := "collection scan" + where
		if e.DocsExamined >= 0 && e.DocsReturned >= 0 {
			msg += fmt.Sprintf(" (examined %d, returned %d)", e.DocsExamined, e.DocsReturned)
		}

		w = append(w, msg)

	case e.DocsExamined >= manyExamined && e.DocsExamined > examinedRatio*max(1, e.DocsReturned):
		msg := fmt.Sprintf("examined %d documents to return %d%s", e.DocsExamined, max(0, e.DocsReturned), where)
		if e.Index != "" {
			msg += " using index " + e.Index
		}

		w = append(w, msg)
	}

	if strings.HasPrefix(e.Format, "ferretdb-") {
		switch strings.ToLower(command) {
		case "update", "delete", "findandmodify":
			w = append(w, "FerretDB explains "+command+" without its filter, so the plan shown reads the whole collection "+
				"whatever the filter; it says nothing about the index the write may use")
		}
	}

	return w
}

// truncate cuts s to at most MaxRawBytes, on a UTF-8 boundary, marking the
// cut with TruncatedSuffix.
func truncate(s string) string {
	if len(s) <= MaxRawBytes {
		return s
	}

	cut := MaxRawBytes - len(TruncatedSuffix)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}

	return s[:cut] + TruncatedSuffix
}

// lookupDoc returns raw[key] when it is a document.
func lookupDoc(raw bson.Raw, key ...string) (bson.Raw, bool) {
	v, err := raw.LookupErr(key...)
	if err != nil {
		return nil, false
	}

	return v.DocumentOK()
}

// lookupString returns raw[key] when it is a string.
func lookupString(raw bson.Raw, key string) (string, bool) {
	v, err := raw.LookupErr(key)
	if err != nil {
		return "", false
	}

	return v.StringValueOK()
}

// lookupCount returns raw[key] as an integer when it is a number, else -1.
func lookupCount(raw bson.Raw, key string) int64 {
	v, err := raw.LookupErr(key)
	if err != nil {
		return -1
	}

	if n, ok := v.AsInt64OK(); ok && n >= 0 {
		return n
	}

	return -1
}

// lookupNumber returns raw[key] as a float when it is a number, else -1.
func lookupNumber(raw bson.Raw, key string) float64 {
	v, err := raw.LookupErr(key)
	if err != nil {
		return -1
	}

	if f, ok := v.AsFloat64OK(); ok && f >= 0 && !math.IsInf(f, 0) {
		return f
	}

	return -1
}

// values returns the elements of an array value, or nil.
func values(v bson.RawValue) []bson.RawValue {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil
	}

	vals, err := arr.Values()
	if err != nil {
		return nil
	}

	return vals
}
