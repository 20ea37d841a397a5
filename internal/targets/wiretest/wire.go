package wiretest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Opcodes of the messages the server understands or sends.
const (
	opReply = 1
	opQuery = 2004
	opMsg   = 2013
)

// OP_MSG flag bits. The low 16 bits are "required": a receiver must reject
// a message with a required bit it does not know.
const (
	flagChecksumPresent = 1 << 0
	flagMoreToCome      = 1 << 1
	requiredFlagsMask   = 0xffff
)

const (
	// headerLen is the size of the standard message header.
	headerLen = 16

	// maxMessageSize caps what the server reads, equal to the
	// maxMessageSizeBytes it advertises, so a corrupt length cannot make it
	// allocate gigabytes.
	maxMessageSize = 48_000_000
)

// errMalformed marks a message the server cannot parse; the connection that
// sent it is closed, as a real server does.
var errMalformed = errors.New("malformed message")

// request is one parsed command, whichever opcode carried it.
type request struct {
	requestID  int32
	opCode     int32
	moreToCome bool

	// body is the command document (validated BSON); its first key names the
	// command.
	body bson.Raw

	// seqs counts the documents of each OP_MSG kind-1 section by identifier
	// (e.g. "documents" of an insert). The documents themselves are not
	// kept: the server stores nothing.
	seqs []docSequence

	// legacyNS is OP_QUERY's fullCollectionName; empty for OP_MSG.
	legacyNS string
}

// docSequence is the summary of one OP_MSG kind-1 section.
type docSequence struct {
	identifier string
	count      int
	raw        []byte // the documents, back to back, in the read buffer
}

// recorded returns the request as Config.Record sees it.
func (r *request) recorded(cmd string) *Command {
	c := &Command{Name: cmd, Body: r.body}

	for _, sq := range r.seqs {
		if c.Sequences == nil {
			c.Sequences = make(map[string][]bson.Raw, len(r.seqs))
		}

		docs := make([]bson.Raw, 0, sq.count)

		for b := sq.raw; len(b) > 0; {
			doc, rest, err := readDocument(b)
			if err != nil {
				break // checked when the request was read
			}

			docs, b = append(docs, doc), rest
		}

		c.Sequences[sq.identifier] = docs
	}

	return c
}

// command returns the command's name: the body's first key.
func (r *request) command() string {
	e, err := r.body.IndexErr(0)
	if err != nil {
		return ""
	}

	return e.Key()
}

// db returns the database the command targets: $db for OP_MSG, the
// namespace's prefix for OP_QUERY.
func (r *request) db() string {
	if r.opCode == opQuery {
		db, _, _ := strings.Cut(r.legacyNS, ".")
		return db
	}

	s, _ := r.body.Lookup("$db").StringValueOK()

	return s
}

// countDocs returns how many documents the command carries under name,
// whether as a kind-1 document sequence or as an array in the body (drivers
// use the former, hand-written commands the latter).
func (r *request) countDocs(name string) int {
	n := 0

	for _, s := range r.seqs {
		if s.identifier == name {
			n += s.count
		}
	}

	if arr, ok := r.body.Lookup(name).ArrayOK(); ok {
		vals, err := arr.Values()
		if err == nil {
			n += len(vals)
		}
	}

	return n
}

// header is the standard message header.
type header struct {
	length     int32
	requestID  int32
	responseTo int32
	opCode     int32
}

// parseHeader decodes a header and checks the length against the cap.
func parseHeader(b []byte) (header, error) {
	h := header{
		length:     int32(binary.LittleEndian.Uint32(b[0:4])),
		requestID:  int32(binary.LittleEndian.Uint32(b[4:8])),
		responseTo: int32(binary.LittleEndian.Uint32(b[8:12])),
		opCode:     int32(binary.LittleEndian.Uint32(b[12:16])),
	}

	if h.length < headerLen || h.length > maxMessageSize {
		return h, fmt.Errorf("%w: message length %d outside [%d, %d]", errMalformed, h.length, headerLen, maxMessageSize)
	}

	return h, nil
}

// parseMessage decodes the message that follows h. The returned request
// references body, which must not be reused until the request is done with.
func parseMessage(h header, body []byte) (*request, error) {
	switch h.opCode {
	case opMsg:
		return parseMsg(h, body)
	case opQuery:
		return parseQuery(h, body)
	default:
		// OP_COMPRESSED is never negotiated (the server advertises no
		// compressors) and the other legacy opcodes were removed from
		// MongoDB, which also closes the connection on them.
		return nil, fmt.Errorf("%w: unsupported opcode %d", errMalformed, h.opCode)
	}
}

// parseMsg decodes an OP_MSG: flag bits, then sections.
func parseMsg(h header, b []byte) (*request, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: OP_MSG without flag bits", errMalformed)
	}

	flags := binary.LittleEndian.Uint32(b)
	if unknown := flags & requiredFlagsMask &^ (flagChecksumPresent | flagMoreToCome); unknown != 0 {
		return nil, fmt.Errorf("%w: OP_MSG with unknown required flag bits %#x", errMalformed, unknown)
	}

	b = b[4:]

	if flags&flagChecksumPresent != 0 {
		// The CRC-32C is only meaningful on networks that corrupt bytes;
		// over TCP on loopback it is ignored, which the protocol allows.
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: OP_MSG checksum flag without checksum", errMalformed)
		}

		b = b[:len(b)-4]
	}

	req := &request{requestID: h.requestID, opCode: opMsg, moreToCome: flags&flagMoreToCome != 0}

	for len(b) > 0 {
		kind := b[0]
		b = b[1:]

		switch kind {
		case 0:
			if req.body != nil {
				return nil, fmt.Errorf("%w: OP_MSG with more than one body section", errMalformed)
			}

			doc, rest, err := readDocument(b)
			if err != nil {
				return nil, err
			}

			if err := doc.Validate(); err != nil {
				return nil, fmt.Errorf("%w: OP_MSG body: %w", errMalformed, err)
			}

			req.body, b = doc, rest

		case 1:
			seq, rest, err := readSequence(b)
			if err != nil {
				return nil, err
			}

			req.seqs, b = append(req.seqs, seq), rest

		default:
			return nil, fmt.Errorf("%w: OP_MSG section kind %d", errMalformed, kind)
		}
	}

	if req.body == nil {
		return nil, fmt.Errorf("%w: OP_MSG without a body section", errMalformed)
	}

	return req, nil
}

// readSequence decodes a kind-1 section: size, identifier, documents. The
// documents are only counted, so they are checked for framing, not
// validated: a bad one cannot hurt a server that never reads it.
func readSequence(b []byte) (docSequence, []byte, error) {
	if len(b) < 4 {
		return docSequence{}, nil, fmt.Errorf("%w: truncated document sequence", errMalformed)
	}

	size := int(int32(binary.LittleEndian.Uint32(b)))
	if size < 4 || size > len(b) {
		return docSequence{}, nil, fmt.Errorf("%w: document sequence size %d", errMalformed, size)
	}

	seq, rest := b[4:size], b[size:]

	id, seq, err := readCString(seq)
	if err != nil {
		return docSequence{}, nil, err
	}

	out := docSequence{identifier: id, raw: seq}

	for len(seq) > 0 {
		if _, seq, err = readDocument(seq); err != nil {
			return docSequence{}, nil, err
		}

		out.count++
	}

	return out, rest, nil
}

// parseQuery decodes an OP_QUERY, which modern drivers only send for the
// first hello of a connection's handshake.
func parseQuery(h header, b []byte) (*request, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: OP_QUERY without flags", errMalformed)
	}

	ns, b, err := readCString(b[4:])
	if err != nil {
		return nil, err
	}

	if len(b) < 8 {
		return nil, fmt.Errorf("%w: OP_QUERY without numberToSkip/numberToReturn", errMalformed)
	}

	query, _, err := readDocument(b[8:])
	if err != nil {
		return nil, err
	}

	// An optional field selector may follow; commands never need it.

	if err := query.Validate(); err != nil {
		return nil, fmt.Errorf("%w: OP_QUERY query: %w", errMalformed, err)
	}

	// Drivers wrap the command as {$query: cmd, $readPreference: ...} when
	// they send a read preference.
	if first, err := query.IndexErr(0); err == nil && first.Key() == "$query" {
		if inner, ok := first.Value().DocumentOK(); ok {
			query = inner
		}
	}

	return &request{requestID: h.requestID, opCode: opQuery, body: query, legacyNS: ns}, nil
}

// readDocument splits one BSON document off the front of b, checking only
// its framing.
func readDocument(b []byte) (bson.Raw, []byte, error) {
	if len(b) < 5 {
		return nil, nil, fmt.Errorf("%w: truncated BSON document", errMalformed)
	}

	n := int(int32(binary.LittleEndian.Uint32(b)))
	if n < 5 || n > len(b) || b[n-1] != 0 {
		return nil, nil, fmt.Errorf("%w: BSON document length %d", errMalformed, n)
	}

	return bson.Raw(b[:n]), b[n:], nil
}

// readCString splits a NUL-terminated string off the front of b.
func readCString(b []byte) (string, []byte, error) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", nil, fmt.Errorf("%w: unterminated cstring", errMalformed)
	}

	return string(b[:i]), b[i+1:], nil
}

// appendHeader appends a message header; length is the whole message's.
func appendHeader(dst []byte, length int, requestID, responseTo, opCode int32) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(length))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(requestID))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(responseTo))

	return binary.LittleEndian.AppendUint32(dst, uint32(opCode))
}

// appendMsgReply appends an OP_MSG reply: no flags, one kind-0 section.
func appendMsgReply(dst []byte, requestID, responseTo int32, doc []byte) []byte {
	dst = appendHeader(dst, headerLen+4+1+len(doc), requestID, responseTo, opMsg)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = append(dst, 0)

	return append(dst, doc...)
}

// appendOpReply appends an OP_REPLY carrying one document, the answer to an
// OP_QUERY command.
func appendOpReply(dst []byte, requestID, responseTo int32, doc []byte) []byte {
	dst = appendHeader(dst, headerLen+4+8+4+4+len(doc), requestID, responseTo, opReply)
	dst = binary.LittleEndian.AppendUint32(dst, 0) // responseFlags
	dst = binary.LittleEndian.AppendUint64(dst, 0) // cursorID
	dst = binary.LittleEndian.AppendUint32(dst, 0) // startingFrom
	dst = binary.LittleEndian.AppendUint32(dst, 1) // numberReturned

	return append(dst, doc...)
}
