package capture

import (
	"fmt"
	"strings"
)

// The profiler's source: documents of a database's system.profile
// collection, converted to the same entries as the log's "Slow query"
// lines, so that they are counted, shaped and written by the same rules.
//
// The conversion follows MongoDB's documented profiler output (Database
// Profiler Output, https://www.mongodb.com/docs/manual/reference/database-profiler/):
// op ("query", "insert", "update", "remove", "getmore", "command"), ns,
// command (the command, or for an update or a remove the statement
// {q, u, multi, upsert} or {q, limit}, as in the log), millis, ts,
// ninserted, client and appName. It has NOT been verified against a
// mongod's profiler here: this project's machines have no mongod, and
// FerretDB has no profiler; the tests convert documents written in that
// documented form.

// ProfileDoc handles one profiler document, given as relaxed extended JSON
// (what a driver writes for a BSON document, and what the log holds); n
// numbers it in messages. It returns why the document is bad, or "".
func (c *Capture) ProfileDoc(doc []byte, n int) string {
	c.stats.Lines++
	c.stats.Profile++

	v, err := parseJSON(doc)
	if err != nil {
		return err.Error()
	}

	op := v.getString("op")
	if op == "" {
		return "no op: not a profiler document"
	}

	cmd, ok := v.Get("command")
	if !ok || cmd.Kind != KindDoc {
		return fmt.Sprintf("op %q without a command", op)
	}

	typ := "command"
	if op == "update" || op == "remove" {
		typ = op
	}

	attr := &Value{Kind: KindDoc}
	attr.Doc = append(attr.Doc,
		Field{Key: "type", Val: Value{Kind: KindString, Str: typ}},
		Field{Key: "ns", Val: Value{Kind: KindString, Str: v.getString("ns")}},
		Field{Key: "command", Val: *cmd})

	if m, ok := v.Get("millis"); ok && m.Kind == KindInt {
		attr.Doc = append(attr.Doc, Field{Key: "durationMillis", Val: *m})
	}

	if ni, ok := v.Get("ninserted"); ok && ni.Kind == KindInt {
		attr.Doc = append(attr.Doc, Field{Key: "ninserted", Val: *ni})
	}

	e := entry{line: n, attr: attr}
	if t, ok := v.Get("ts"); ok && t.Kind == KindDate {
		e.time, e.hasTime = t.Int, true
	}

	// The profiler names no connection; the client's address and port
	// with the application's name stand for one (a driver's pool holds
	// several connections from one address, each with a port of its own).
	e.conn = strings.TrimSpace(v.getString("client") + " " + v.getString("appName"))

	c.stats.SlowQueries++

	return c.slowQuery(&e)
}

// ProfileBad counts a bad profiler document and quotes the first few.
func (c *Capture) ProfileBad(source string, n int, why string) {
	c.stats.Bad++
	if len(c.stats.BadLines) < maxBadLines {
		c.stats.BadLines = append(c.stats.BadLines, fmt.Sprintf("%s document %d: %s", source, n, why))
	}
}
