package wiretest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The framing below is exported for tools that watch traffic between a
// client and a server they do not implement (the recording proxy of
// `mongobench record`): the same parser the test server trusts with its
// own requests also reads what passes through them, requests and replies.

// Opcodes a watcher meets besides OP_MSG and OP_QUERY.
const (
	// OpReply is the legacy reply to an OP_QUERY (the first hello).
	OpReply = opReply
	// OpQuery is the legacy query, used by drivers for the first hello.
	OpQuery = opQuery
	// OpMsg is the message of every modern command and its reply.
	OpMsg = opMsg
	// OpCompressed wraps another message compressed with snappy, zlib or
	// zstd, once a hello negotiated a compressor.
	OpCompressed = 2012
)

// HeaderLen is the length of the standard message header.
const HeaderLen = headerLen

// Frame is one message as read from the wire. Its slices point into the
// buffer it was parsed from.
type Frame struct {
	RequestID  int32
	ResponseTo int32
	OpCode     int32

	// MoreToCome is OP_MSG's flag: a request that expects no reply, or a
	// reply that more replies (to the same request) follow.
	MoreToCome bool

	// Body is the command (OP_MSG's kind-0 section, OP_QUERY's query with
	// a $query wrapper removed) or the reply's document (OP_MSG's kind-0
	// section, OP_REPLY's first document).
	Body bson.Raw

	// Sequences are OP_MSG's kind-1 sections (insert's documents, update's
	// updates, ...), by identifier, in order.
	Sequences []Sequence

	// LegacyNS is OP_QUERY's fullCollectionName.
	LegacyNS string

	// BodyOffset is where Body starts in the message, and QueryOffset where
	// OP_QUERY's query document (Body itself, or its $query wrapper)
	// starts (0 for other opcodes): a watcher that edits the body
	// (removes a field) patches the lengths that enclose it.
	BodyOffset, QueryOffset int
}

// Sequence is one kind-1 section of an OP_MSG.
type Sequence struct {
	Identifier string
	Documents  []bson.Raw
}

// Command returns the name of the command a request's Body holds: its first
// key.
func (f *Frame) Command() string {
	e, err := f.Body.IndexErr(0)
	if err != nil {
		return ""
	}

	return e.Key()
}

// ReadFrame reads one whole message from r into buf (grown as needed) and
// returns it, header included. A length outside the protocol's bounds is an
// error: the stream cannot be framed any more.
func ReadFrame(r io.Reader, buf []byte) ([]byte, error) {
	var hb [headerLen]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		return nil, err
	}

	h, err := parseHeader(hb[:])
	if err != nil {
		return nil, err
	}

	if cap(buf) < int(h.length) {
		buf = make([]byte, h.length)
	}

	buf = buf[:h.length]
	copy(buf, hb[:])

	if _, err := io.ReadFull(r, buf[headerLen:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}

		return nil, err
	}

	return buf, nil
}

// ParseFrame decodes a whole message (as ReadFrame returns it): OP_MSG,
// OP_QUERY and OP_REPLY. Other opcodes (OP_COMPRESSED, removed legacy
// ones) are an error wrapping errMalformed; a watcher forwards them
// unread.
func ParseFrame(msg []byte) (*Frame, error) {
	if len(msg) < headerLen {
		return nil, fmt.Errorf("%w: message shorter than its header", errMalformed)
	}

	h, err := parseHeader(msg)
	if err != nil {
		return nil, err
	}

	if int(h.length) != len(msg) {
		return nil, fmt.Errorf("%w: message length %d, %d bytes given", errMalformed, h.length, len(msg))
	}

	f := &Frame{RequestID: h.requestID, ResponseTo: h.responseTo, OpCode: h.opCode}

	if h.opCode == opReply {
		return f, parseReplyFrame(f, msg)
	}

	req, err := parseMessage(h, msg[headerLen:])
	if err != nil {
		return nil, err
	}

	f.MoreToCome, f.Body, f.LegacyNS = req.moreToCome, req.body, req.legacyNS
	// The body is a subslice of msg (parsing only reslices), so its offset
	// is the difference of the capacities.
	f.BodyOffset = cap(msg) - cap(req.body)

	if h.opCode == opQuery {
		// The query follows flags, the namespace and two counts.
		f.QueryOffset = headerLen + 4 + len(req.legacyNS) + 1 + 8
	}

	for _, s := range req.seqs {
		docs := make([]bson.Raw, 0, s.count)

		for b := s.raw; len(b) > 0; {
			doc, rest, err := readDocument(b)
			if err != nil {
				return nil, err
			}

			docs, b = append(docs, doc), rest
		}

		f.Sequences = append(f.Sequences, Sequence{Identifier: s.identifier, Documents: docs})
	}

	return f, nil
}

// parseReplyFrame decodes an OP_REPLY: flags, cursor id, starting point,
// count, then the documents, of which a command reply has one.
func parseReplyFrame(f *Frame, msg []byte) error {
	b := msg[headerLen:]
	if len(b) < 20 {
		return fmt.Errorf("%w: OP_REPLY shorter than its fixed fields", errMalformed)
	}

	if n := int32(binary.LittleEndian.Uint32(b[16:20])); n < 1 {
		return nil // no document: nothing to read
	}

	doc, _, err := readDocument(b[20:])
	if err != nil {
		return err
	}

	if err := doc.Validate(); err != nil {
		return fmt.Errorf("%w: OP_REPLY document: %w", errMalformed, err)
	}

	f.Body, f.BodyOffset = doc, headerLen+20

	return nil
}
