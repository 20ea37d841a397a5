package wireproxy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// pending is a request awaiting its reply, with what its line needs. Its
// documents are copies: the read buffer is reused for the next message.
type pending struct {
	start    time.Time
	name     string
	db       string
	protocol string
	// cmd is the command as it will be written: cleaned of credentials,
	// with its document sequences folded in as arrays.
	cmd bson.Raw
	// statements are an update's or delete's statements, cleaned, each
	// written as a line of its own as mongod does.
	statements []bson.Raw
}

// Limits on what one line carries of an insert's documents. mongod itself
// leaves an OP_MSG's document sequences out of its log line and truncates
// each attribute at 10 KB (maxLogSizeKB); the proxy keeps a sample of the
// documents so that capture can summarise them into a template.
const (
	maxFoldedDocs  = 100
	maxFoldedBytes = 256 << 10
)

// authCommands are the commands whose arguments carry credentials (SCRAM
// and PLAIN payloads, X.509 subjects, nonces): only their name, mechanism
// and database are recorded.
var authCommands = map[string]bool{
	"saslstart": true, "saslcontinue": true, "authenticate": true,
	"getnonce": true, "copydbsaslstart": true, "copydbgetnonce": true, "logout": true,
}

// droppedKeys are fields left out wherever they appear, besides those
// redact.IsSecretKey names: hello's speculative authentication (a
// saslStart in disguise) and the user name it asks mechanisms for.
var droppedKeys = map[string]bool{"speculativeAuthenticate": true, "saslSupportedMechs": true}

// newPending reads what a request's line needs.
func newPending(f *wiretest.Frame, now time.Time) *pending {
	req := &pending{start: now, name: f.Command(), protocol: "op_msg"}

	if f.OpCode == wiretest.OpQuery {
		req.protocol = "op_query"
		req.db, _, _ = strings.Cut(f.LegacyNS, ".")
	} else {
		req.db, _ = f.Body.Lookup("$db").StringValueOK()
	}

	if authCommands[strings.ToLower(req.name)] {
		req.cmd = authOnly(f.Body)
		return req
	}

	var folded []bson.RawElement

	switch req.name {
	case "update", "delete":
		id := "updates"
		if req.name == "delete" {
			id = "deletes"
		}

		for _, d := range statementsOf(f, id) {
			req.statements = append(req.statements, clean(d))
		}

		// As mongod logs it: the command without its statements.
		req.cmd = clean(without(f.Body, id))

		return req
	}

	for _, s := range f.Sequences {
		docs := s.Documents
		if s.Identifier == "documents" {
			docs = sample(docs)
		}

		folded = append(folded, arrayElement(s.Identifier, docs))
	}

	req.cmd = clean(appendElements(f.Body, folded))

	return req
}

// statementsOf returns the documents under id, from a kind-1 section (as
// drivers send them) or an array in the body.
func statementsOf(f *wiretest.Frame, id string) []bson.Raw {
	var out []bson.Raw

	for _, s := range f.Sequences {
		if s.Identifier == id {
			out = append(out, s.Documents...)
		}
	}

	if arr, ok := f.Body.Lookup(id).ArrayOK(); ok {
		vals, _ := arr.Values()
		for _, v := range vals {
			if d, ok := v.DocumentOK(); ok {
				out = append(out, d)
			}
		}
	}

	return out
}

// sample keeps the first documents of an insert, within the limits.
func sample(docs []bson.Raw) []bson.Raw {
	size := 0

	for i, d := range docs {
		size += len(d)
		if i == maxFoldedDocs || (size > maxFoldedBytes && i > 0) {
			return docs[:i]
		}
	}

	return docs
}

// authOnly keeps an authentication command's name, mechanism and database.
func authOnly(doc bson.Raw) bson.Raw {
	elems, _ := doc.Elements()
	out := []byte{0, 0, 0, 0}

	for i, e := range elems {
		switch k := e.Key(); {
		case i == 0:
			// The command's own value (1, or a mechanism name) is no
			// secret; anything else in its place is left out.
			if v := e.Value(); v.Type == bson.TypeInt32 || v.Type == bson.TypeDouble || v.Type == bson.TypeInt64 || v.Type == bson.TypeBoolean {
				out = append(out, e...)
			} else {
				out = appendInt32(out, k, 1)
			}
		case k == "mechanism" || k == "$db":
			out = append(out, e...)
		}
	}

	return finish(out)
}

// clean returns doc without the fields that may hold credentials, at any
// depth.
func clean(doc bson.Raw) bson.Raw {
	elems, err := doc.Elements()
	if err != nil {
		return bson.Raw{5, 0, 0, 0, 0}
	}

	out := make([]byte, 4, len(doc))

	for _, e := range elems {
		k := e.Key()
		if droppedKeys[k] || redact.IsSecretKey(k) {
			continue
		}

		switch v := e.Value(); v.Type {
		case bson.TypeEmbeddedDocument, bson.TypeArray:
			out = append(out, byte(v.Type))
			out = append(out, k...)
			out = append(out, 0)
			out = append(out, clean(v.Value)...)
		default:
			out = append(out, e...)
		}
	}

	return finish(out)
}

// without returns doc without its top-level field key.
func without(doc bson.Raw, key string) bson.Raw {
	elems, _ := doc.Elements()
	out := make([]byte, 4, len(doc))

	for _, e := range elems {
		if e.Key() != key {
			out = append(out, e...)
		}
	}

	return finish(out)
}

// appendElements returns doc with extra elements at its end.
func appendElements(doc bson.Raw, extra []bson.RawElement) bson.Raw {
	if len(extra) == 0 {
		return doc
	}

	out := append([]byte(nil), doc[:len(doc)-1]...)
	for _, e := range extra {
		out = append(out, e...)
	}

	return finish(out)
}

// arrayElement is the element key: [docs...].
func arrayElement(key string, docs []bson.Raw) bson.RawElement {
	arr := []byte{0, 0, 0, 0}
	for i, d := range docs {
		arr = append(arr, byte(bson.TypeEmbeddedDocument))
		arr = strconv.AppendInt(arr, int64(i), 10)
		arr = append(arr, 0)
		arr = append(arr, d...)
	}

	arr = finish(arr)

	e := []byte{byte(bson.TypeArray)}
	e = append(e, key...)
	e = append(e, 0)

	return append(e, arr...)
}

// finish terminates a document whose first four bytes are its length.
func finish(b []byte) bson.Raw {
	b = append(b, 0)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))

	return b
}

func appendInt32(b []byte, key string, v int32) []byte {
	b = append(b, byte(bson.TypeInt32))
	b = append(b, key...)
	b = append(b, 0)

	return binary.LittleEndian.AppendUint32(b, uint32(v))
}

// stripCompression removes the compressors a hello offers, so that the
// server negotiates none and the traffic stays readable. It returns the
// message unchanged (and false) when there is nothing to remove.
func stripCompression(msg []byte, f *wiretest.Frame) ([]byte, bool) {
	switch strings.ToLower(f.Command()) {
	case "hello", "ismaster":
	default:
		return msg, false
	}

	if _, err := f.Body.LookupErr("compression"); err != nil {
		return msg, false
	}

	body := without(f.Body, "compression")
	delta := len(f.Body) - len(body)
	end := f.BodyOffset + len(f.Body)

	out := make([]byte, 0, len(msg))
	out = append(out, msg[:f.BodyOffset]...)
	out = append(out, body...)
	out = append(out, msg[end:]...)

	if f.OpCode == wiretest.OpMsg {
		// A checksum would no longer match: drop it and its flag.
		if flags := binary.LittleEndian.Uint32(out[16:20]); flags&1 != 0 {
			binary.LittleEndian.PutUint32(out[16:20], flags&^1)
			out = out[:len(out)-4]
		}
	}

	if f.OpCode == wiretest.OpQuery && f.QueryOffset != f.BodyOffset {
		// The hello is wrapped in {$query: ...}: the wrapper shrinks too.
		n := binary.LittleEndian.Uint32(out[f.QueryOffset:])
		binary.LittleEndian.PutUint32(out[f.QueryOffset:], n-uint32(delta))
	}

	binary.LittleEndian.PutUint32(out[0:4], uint32(len(out)))

	return out, true
}

// recorder writes the lines of a recording.
type recorder struct {
	mu      sync.Mutex
	w       *bufio.Writer
	err     error
	secrets redact.Known

	commands atomic.Int64

	// cursors maps an open cursor to the command that opened it, for the
	// originatingCommand of its getMores.
	cursors map[int64]bson.Raw
}

// maxCursors bounds the cursors remembered for their getMores; beyond it a
// getMore is written without its originating command.
const maxCursors = 10000

func newRecorder(w *bufio.Writer, secrets redact.Known) *recorder {
	return &recorder{w: w, secrets: secrets, cursors: map[int64]bson.Raw{}}
}

func (r *recorder) flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()

	if err := r.w.Flush(); err != nil && r.err == nil {
		r.err = err
	}

	return r.err
}

// timeLayout is mongod's: milliseconds and a numeric offset (UTC here).
const timeLayout = "2006-01-02T15:04:05.000-07:00"

// line starts one log line.
func line(t time.Time, component string, id int, ctx, msg string) *bytes.Buffer {
	var b bytes.Buffer

	b.WriteString(`{"t":{"$date":"`)
	b.WriteString(t.UTC().Format(timeLayout))
	b.WriteString(`"},"s":"I","c":"`)
	b.WriteString(component)
	b.WriteString(`","id":`)
	b.WriteString(strconv.Itoa(id))
	b.WriteString(`,"ctx":`)
	writeString(&b, ctx)
	b.WriteString(`,"msg":`)
	writeString(&b, msg)
	b.WriteString(`,"attr":{`)

	return &b
}

func writeString(b *bytes.Buffer, s string) {
	j, _ := json.Marshal(s) // a string always marshals
	b.Write(j)
}

func field(b *bytes.Buffer, name string) {
	if b.Bytes()[b.Len()-1] != '{' {
		b.WriteByte(',')
	}

	writeString(b, name)
	b.WriteByte(':')
}

func intField(b *bytes.Buffer, name string, v int64) {
	field(b, name)
	b.WriteString(strconv.FormatInt(v, 10))
}

func docField(b *bytes.Buffer, name string, doc bson.Raw) {
	field(b, name)

	j, err := bson.MarshalExtJSON(doc, false, false)
	if err != nil {
		b.WriteString("{}")
		return
	}

	b.Write(j)
}

// emit writes one finished line.
func (r *recorder) emit(b *bytes.Buffer) {
	b.WriteString("}}\n")

	out := b.Bytes()
	if !r.secrets.Empty() {
		out = []byte(r.secrets.Mask(string(out)))
	}

	r.mu.Lock()
	defer r.mu.Unlock()

	if r.err != nil {
		return
	}

	if _, err := r.w.Write(out); err != nil {
		r.err = err
	}
}

// connection writes mongod's "Connection accepted" or "Connection ended".
func (r *recorder) connection(t time.Time, c *conn, accepted bool, count int64) {
	var b *bytes.Buffer
	if accepted {
		b = line(t, "NETWORK", 22943, "listener", "Connection accepted")
	} else {
		b = line(t, "NETWORK", 22944, "conn"+strconv.FormatInt(c.id, 10), "Connection ended")
	}

	field(b, "remote")
	writeString(b, c.remote)
	intField(b, "connectionId", c.id)
	intField(b, "connectionCount", count)
	r.emit(b)
}

// reply is what a line takes from a reply document.
type reply struct {
	ok                      bool
	code                    int64
	codeName                string
	n, nModified, nUpserted int64
	hasN, hasModified       bool
	cursorID                int64
	batch                   int64
	hasCursor               bool
	firstBatch              bool
}

func readReply(doc bson.Raw) reply {
	var rp reply

	if v, err := doc.LookupErr("ok"); err == nil {
		if f, ok := v.AsFloat64OK(); ok {
			rp.ok = f == 1
		}
	}

	if v, err := doc.LookupErr("code"); err == nil {
		rp.code, _ = v.AsInt64OK()
	}

	rp.codeName, _ = doc.Lookup("codeName").StringValueOK()

	if v, err := doc.LookupErr("n"); err == nil {
		rp.n, rp.hasN = v.AsInt64OK()
	}

	if v, err := doc.LookupErr("nModified"); err == nil {
		rp.nModified, rp.hasModified = v.AsInt64OK()
	}

	if arr, ok := doc.Lookup("upserted").ArrayOK(); ok {
		vals, _ := arr.Values()
		rp.nUpserted = int64(len(vals))
	}

	if cur, ok := doc.Lookup("cursor").DocumentOK(); ok {
		rp.hasCursor = true
		rp.cursorID, _ = cur.Lookup("id").AsInt64OK()

		for _, name := range []string{"firstBatch", "nextBatch"} {
			if arr, ok := cur.Lookup(name).ArrayOK(); ok {
				vals, _ := arr.Values()
				rp.batch, rp.firstBatch = int64(len(vals)), name == "firstBatch"
			}
		}
	}

	return rp
}

// namespace is the ns of a command's line: the collection it names, or
// $cmd for a command on the database.
func namespace(req *pending) string {
	if req.name == "getMore" {
		if c, ok := req.cmd.Lookup("collection").StringValueOK(); ok {
			return req.db + "." + c
		}
	}

	if e, err := req.cmd.IndexErr(0); err == nil {
		if c, ok := e.Value().StringValueOK(); ok && c != "" && !authCommands[strings.ToLower(req.name)] {
			return req.db + "." + c
		}
	}

	return req.db + ".$cmd"
}

// record writes the lines of one command: its statements' first, then its
// own. f is the reply (nil for a request that expects none) and size its
// length in bytes.
func (r *recorder) record(end time.Time, c *conn, req *pending, f *wiretest.Frame, size int) {
	r.commands.Add(1)

	elapsed := max(end.Sub(req.start), 0)
	ctx := "conn" + strconv.FormatInt(c.id, 10)
	ns := namespace(req)

	var rp reply
	if f != nil {
		rp = readReply(f.Body)
	}

	if len(req.statements) > 0 {
		typ, countField := "update", "nMatched"
		if req.name == "delete" {
			typ, countField = "remove", "ndeleted"
		}

		n := int64(len(req.statements))

		for _, st := range req.statements {
			b := line(end, "WRITE", 51803, ctx, "Slow query")
			field(b, "type")
			writeString(b, typ)
			field(b, "ns")
			writeString(b, ns)
			docField(b, "command", st)

			// The reply counts the whole command; a lone statement's
			// counts are the command's.
			if n == 1 && rp.hasN {
				intField(b, countField, rp.n)
				if typ == "update" && rp.hasModified {
					intField(b, "nModified", rp.nModified)
					intField(b, "nUpserted", rp.nUpserted)
				}
			}

			r.tail(b, c, req, elapsed/time.Duration(n))
		}
	}

	b := line(end, "COMMAND", 51803, ctx, "Slow query")
	field(b, "type")
	writeString(b, "command")
	field(b, "ns")
	writeString(b, ns)
	docField(b, "command", req.cmd)

	if req.name == "getMore" {
		id, _ := req.cmd.Lookup("getMore").AsInt64OK()

		r.mu.Lock()
		orig, ok := r.cursors[id]
		r.mu.Unlock()

		if ok {
			docField(b, "originatingCommand", orig)
		}
	}

	if f != nil {
		r.counts(b, req, &rp, size)
	}

	if req.name == "killCursors" {
		r.forget(req.cmd)
	}

	r.tail(b, c, req, elapsed)
}

// forget drops the cursors a killCursors closes.
func (r *recorder) forget(cmd bson.Raw) {
	arr, ok := cmd.Lookup("cursors").ArrayOK()
	if !ok {
		return
	}

	vals, _ := arr.Values()

	r.mu.Lock()
	defer r.mu.Unlock()

	for _, v := range vals {
		if id, ok := v.AsInt64OK(); ok {
			delete(r.cursors, id)
		}
	}
}

// counts writes what the reply says the command did, as mongod names it.
func (r *recorder) counts(b *bytes.Buffer, req *pending, rp *reply, size int) {
	switch req.name {
	case "insert":
		if rp.hasN {
			intField(b, "ninserted", rp.n)
		}
	case "update":
		if rp.hasN {
			intField(b, "nMatched", rp.n)
		}

		if rp.hasModified {
			intField(b, "nModified", rp.nModified)
			intField(b, "nUpserted", rp.nUpserted)
		}
	case "delete":
		if rp.hasN {
			intField(b, "ndeleted", rp.n)
		}
	}

	if rp.hasCursor {
		if rp.cursorID != 0 {
			intField(b, "cursorid", rp.cursorID)
		}

		intField(b, "nreturned", rp.batch)
		r.trackCursor(req, rp)
	}

	if !rp.ok {
		intField(b, "ok", 0)

		if rp.codeName != "" {
			field(b, "errName")
			writeString(b, rp.codeName)
		}

		intField(b, "errCode", rp.code)
	}

	intField(b, "reslen", int64(size))
}

// trackCursor remembers the command that opened a cursor, and forgets a
// cursor that is exhausted.
func (r *recorder) trackCursor(req *pending, rp *reply) {
	r.mu.Lock()
	defer r.mu.Unlock()

	switch {
	case req.name == "getMore" && rp.cursorID == 0:
		id, _ := req.cmd.Lookup("getMore").AsInt64OK()
		delete(r.cursors, id)
	case rp.firstBatch && rp.cursorID != 0 && len(r.cursors) < maxCursors:
		r.cursors[rp.cursorID] = without(without(req.cmd, "lsid"), "$clusterTime")
	}
}

// tail ends a line with the fields every entry has.
func (r *recorder) tail(b *bytes.Buffer, c *conn, req *pending, elapsed time.Duration) {
	field(b, "remote")
	writeString(b, c.remote)
	field(b, "protocol")
	writeString(b, req.protocol)
	intField(b, "durationMillis", elapsed.Milliseconds())
	// Not a mongod field: the proxy times to the microsecond, which
	// matters against servers that answer in less than a millisecond.
	intField(b, "durationMicros", elapsed.Microseconds())
	r.emit(b)
}
