package capture

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxLine bounds one log line. mongod truncates each attribute at
// maxLogSizeKB (10 KB by default), so a real line is far shorter; a longer
// one is counted as bad and skipped without being held in memory.
const maxLine = 16 << 20

// The messages read from a log, found by a byte search before any parsing:
// most lines of a log are neither, and are not parsed at all.
var (
	slowQueryMsg  = []byte(`"msg":"Slow query"`)
	indexBuildMsg = []byte(`"msg":"Index build: starting"`)
	gzipMagic     = []byte{0x1f, 0x8b}
)

// FileError is a file that cannot be read as a log: its one line names the
// file and the line.
type FileError struct {
	File string
	Line int
	Msg  string
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}

	return e.File + ": " + e.Msg
}

// ReadFile reads one mongod log file, plain or gzip-compressed, line by
// line: memory does not grow with the file's length.
func (c *Capture) ReadFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &FileError{File: path, Msg: strings.TrimPrefix(err.Error(), "open "+path+": ")}
	}
	defer f.Close()

	return c.Read(path, f)
}

// Read reads one log from r; name is the file's name in messages.
func (c *Capture) Read(name string, r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<20)

	if head, _ := br.Peek(2); bytes.Equal(head, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return &FileError{File: name, Msg: "gzip: " + err.Error()}
		}
		defer zr.Close()

		br = bufio.NewReaderSize(zr, 1<<20)
	}

	c.stats.Files++
	lr := lineReader{r: br}
	seen := false

	for {
		line, tooLong, err := lr.next()
		if err != nil && !errors.Is(err, io.EOF) {
			return &FileError{File: name, Line: lr.n, Msg: "reading stopped: " + err.Error()}
		}

		if line == nil && errors.Is(err, io.EOF) {
			return nil
		}

		line = bytes.TrimSpace(line)
		if len(line) == 0 && !tooLong {
			continue
		}

		c.stats.Lines++

		var bad string

		switch {
		case tooLong:
			bad = fmt.Sprintf("line longer than %d MiB", maxLine>>20)
		case line[0] != '{':
			bad = "not a JSON object"
		default:
			bad = c.line(line, lr.n)
		}

		if bad != "" && !seen {
			// The first line says what the file is: a legacy text log, a
			// binary file or another program's log is refused at once.
			return &FileError{File: name, Line: lr.n, Msg: "not a MongoDB JSON log (logv2, MongoDB 4.4 or later): " + bad}
		}

		seen = true

		if bad != "" {
			c.stats.Bad++
			if len(c.stats.BadLines) < maxBadLines {
				c.stats.BadLines = append(c.stats.BadLines, fmt.Sprintf("%s:%d: %s", name, lr.n, bad))
			}
		}

		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// maxBadLines is how many bad lines the summary quotes.
const maxBadLines = 5

// lineReader returns lines of at most maxLine bytes, numbering them.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
	n   int
}

// next returns the next line without its newline (nil at the end), and
// whether it was longer than maxLine (then its content is dropped).
func (lr *lineReader) next() ([]byte, bool, error) {
	lr.buf = lr.buf[:0]
	tooLong := false

	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !tooLong {
			if len(lr.buf)+len(chunk) > maxLine {
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}

		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}

		if err != nil && (len(lr.buf) > 0 || tooLong) {
			lr.n++

			return lr.buf, tooLong, err
		}

		if err != nil {
			return nil, false, err
		}

		lr.n++

		return bytes.TrimSuffix(lr.buf, []byte("\n")), tooLong, nil
	}
}

// line handles one log line and returns why it is bad, or "".
func (c *Capture) line(line []byte, n int) string {
	slow := bytes.Contains(line, slowQueryMsg)
	index := !slow && bytes.Contains(line, indexBuildMsg)

	if !slow && !index {
		if !bytes.HasSuffix(line, []byte("}")) {
			return "not a JSON object"
		}

		return ""
	}

	v, err := parseJSON(line)
	if err != nil {
		return err.Error()
	}

	attr, ok := v.Get("attr")
	if !ok || attr.Kind != KindDoc {
		return "no attr"
	}

	if index {
		c.indexBuild(attr)

		return ""
	}

	c.stats.SlowQueries++

	e := entry{line: n, attr: attr}
	if t, ok := v.Get("t"); ok && t.Kind == KindDate {
		e.time, e.hasTime = t.Int, true
	}

	if ctx, ok := v.Get("ctx"); ok {
		e.conn = ctx.String()
	}

	return c.slowQuery(&e)
}

// entry is one "Slow query" line.
type entry struct {
	line    int
	time    int64
	hasTime bool
	conn    string
	attr    *Value
}

// internalDBs are MongoDB's own databases: their data operations (the
// session cache's updates of config.system.sessions, replication's reads of
// local) are the server's, not the application's.
func internalDB(db string) bool { return db == "admin" || db == "local" || db == "config" }

// splitNS splits "db.coll" at its first dot.
func splitNS(ns string) (string, string) {
	db, coll, _ := strings.Cut(ns, ".")

	return db, coll
}

// slowQuery turns a "Slow query" entry into an operation, or counts why it
// is left out.
//
// The rule for writes follows MongoDB's log format (4.4 and later): an
// update or delete command logs each slow statement on its own ("type":
// "update" or "remove", with the statement as "command": {q, u, multi,
// upsert} or {q, limit}), and then, when the whole command was slow, the
// command itself ("type": "command", {update: coll, ordered, …}) without
// its statements, which drivers send as a document sequence. A statement
// is one operation. The command entry that follows statements of the same
// collection on the same connection is the same work again and is not
// counted; a command entry with no statement before it (a batch of fast
// statements that was slow as a whole) is counted once, as an operation
// whose filter and update the log does not show.
func (c *Capture) slowQuery(e *entry) string {
	typ := e.attr.getString("type")
	db, coll := splitNS(e.attr.getString("ns"))

	cmd, ok := e.attr.Get("command")
	if !ok || cmd.Kind != KindDoc {
		return "Slow query without a command"
	}

	r := Record{Line: e.line, Time: e.time, HasTime: e.hasTime, Conn: e.conn, DB: db, Coll: coll, Cmd: cmd}
	if d, ok := e.attr.Get("durationMillis"); ok && d.Kind == KindInt {
		r.Millis = d.Int
	}

	// A recording's durationMicros (not a mongod field) gives the time
	// finer than the whole milliseconds, for the load model's busy time.
	if d, ok := e.attr.Get("durationMicros"); ok && d.Kind == KindInt {
		r.Micros = d.Int
	}

	switch typ {
	case "update", "remove":
		r.Op = OpUpdate
		if typ == "remove" {
			r.Op = OpDelete
		}

		if internalDB(db) {
			c.stats.Internal++

			return ""
		}

		c.pending[c.pendingKey(e.conn, db, coll)] = pendingStatement{time: e.time, timed: e.hasTime}
		c.add(&r)

		return ""
	}

	if len(cmd.Doc) == 0 {
		return "Slow query with an empty command"
	}

	name := cmd.Doc[0].Key
	if dbv, ok := cmd.Get("$db"); ok && dbv.Kind == KindString {
		r.DB = dbv.Str
	}

	if cn := cmd.Doc[0].Val; cn.Kind == KindString {
		r.Coll = cn.Str
	}

	switch name {
	case "update", "delete":
		key := c.pendingKey(e.conn, r.DB, r.Coll)
		if st, ok := c.pending[key]; ok {
			delete(c.pending, key)

			// The command's statements ran within it: a statement that
			// ended before the command started was a command of its own
			// (fast as a whole, so not logged).
			if !st.timed || !e.hasTime || st.time >= e.time-r.Millis {
				c.stats.Covered++

				return ""
			}
		}

		r.Op = OpUpdate
		if name == "delete" {
			r.Op = OpDelete
		}

		r.Cmd = nil
	case "insert":
		r.Op = OpInsert
		r.NInserted = 1

		if n, ok := e.attr.Get("ninserted"); ok && n.Kind == KindInt {
			r.NInserted = n.Int
		}
	case "find", "count", "distinct":
		r.Op = Op(name)
	case "findAndModify", "findandmodify":
		r.Op = OpFindAndModify
	case "aggregate":
		if cmd.Doc[0].Val.Kind != KindString {
			// A database aggregate ({aggregate: 1}: $currentOp, …).
			return c.admin(name, &r)
		}

		r.Op = OpAggregate
	case "getMore":
		// A getMore continues the find or aggregate it names (its
		// "originatingCommand"), and mongobench's find and aggregate
		// iterate every cursor to its end: it is part of that operation.
		c.stats.GetMore++

		return ""
	case "createIndexes":
		c.createIndexes(r.DB, r.Coll, cmd)

		return c.admin(name, &r)
	default:
		return c.admin(name, &r)
	}

	if internalDB(r.DB) {
		c.stats.Internal++

		return ""
	}

	c.add(&r)

	return ""
}

// pendingStatement is the last update or delete statement logged on a
// connection for a collection, not yet matched with its command.
type pendingStatement struct {
	time  int64
	timed bool
}

// admin counts an administration or monitoring command, and keeps it as an
// operation only when asked to.
func (c *Capture) admin(name string, r *Record) string {
	if !c.opts.IncludeAdmin {
		c.stats.Admin[name]++

		return ""
	}

	r.Op = OpCommand
	c.add(r)

	return ""
}

func (c *Capture) pendingKey(conn, db, coll string) string { return conn + "\x00" + db + "\x00" + coll }

// getString returns the string at key, "" when absent or not a string.
func (v *Value) getString(key string) string {
	s, _ := v.Get(key)

	return s.String()
}

// indexBuild records the index of an "Index build: starting" entry.
func (c *Capture) indexBuild(attr *Value) {
	db, coll := splitNS(attr.getString("namespace"))
	if p, ok := attr.Get("properties"); ok && p.Kind == KindDoc {
		c.addIndex(db, coll, p)
	}
}

// createIndexes records the indexes of a createIndexes command.
func (c *Capture) createIndexes(db, coll string, cmd *Value) {
	if ix, ok := cmd.Get("indexes"); ok && ix.Kind == KindArray {
		for i := range ix.Arr {
			c.addIndex(db, coll, &ix.Arr[i])
		}
	}
}
