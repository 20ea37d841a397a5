package capture

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Kind is the type of a Value: JSON's types, plus the BSON types that
// MongoDB's relaxed Extended JSON writes as one-key documents ({"$oid": …}).
type Kind uint8

// The kinds of a Value.
const (
	KindNull Kind = iota
	KindBool
	KindInt
	KindFloat
	KindString
	KindDoc
	KindArray
	KindDate
	KindObjectID
	KindBinary
	KindUUID
	KindDecimal
	KindOther
)

// Value is one parsed JSON value with its documents' keys in the order
// written: a sort, a pipeline and a query shape depend on that order, which
// Go's maps would lose.
type Value struct {
	Kind Kind
	// Str is a string's text, an ObjectId's hex, a decimal's digits, or
	// the wrapper key of an Extended JSON type mongobench does not model.
	Str string
	// Int is an integer, a date in milliseconds since the epoch, or a
	// bool as 0 or 1.
	Int int64
	// Num is a float's value.
	Num float64
	// Doc holds a document's fields, Arr an array's elements.
	Doc []Field
	Arr []Value
}

// Field is one key and its value in a document.
type Field struct {
	Key string
	Val Value
}

// Get returns the value of key in a document, and whether it is there.
func (v *Value) Get(key string) (*Value, bool) {
	for i := range v.Doc {
		if v.Doc[i].Key == key {
			return &v.Doc[i].Val, true
		}
	}

	return nil, false
}

// String returns a string value's text, "" for any other kind.
func (v *Value) String() string {
	if v == nil || v.Kind != KindString {
		return ""
	}

	return v.Str
}

// Number returns a numeric value as a float64, and whether it is numeric.
func (v *Value) Number() (float64, bool) {
	switch {
	case v == nil:
		return 0, false
	case v.Kind == KindInt:
		return float64(v.Int), true
	case v.Kind == KindFloat:
		return v.Num, true
	}

	return 0, false
}

// parser reads one JSON text. It is a small hand-written recursive descent
// parser rather than encoding/json because it keeps key order, recognises
// Extended JSON wrappers while it builds, and allocates little: a log of
// millions of lines is read in seconds.
type parser struct {
	data  []byte
	pos   int
	depth int
}

// maxDepth bounds nesting: BSON allows 100 levels, and a line nested deeper
// is not a MongoDB log line (and would otherwise exhaust the stack).
const maxDepth = 200

// errSyntax is the parser's error; its message names the byte offset.
type syntaxError struct {
	pos int
	msg string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.pos+1, e.msg)
}

// parseJSON parses data, which must hold exactly one JSON value.
func parseJSON(data []byte) (Value, error) {
	p := &parser{data: data}

	v, err := p.value()
	if err != nil {
		return Value{}, err
	}

	p.space()

	if p.pos != len(p.data) {
		return Value{}, p.fail("text after the value")
	}

	return v, nil
}

func (p *parser) fail(msg string) error { return &syntaxError{pos: p.pos, msg: msg} }

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\r', '\n':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (Value, error) {
	p.space()

	if p.pos >= len(p.data) {
		return Value{}, p.fail("unexpected end")
	}

	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()

		return Value{Kind: KindString, Str: s}, err
	case c == 't':
		return p.literal("true", Value{Kind: KindBool, Int: 1})
	case c == 'f':
		return p.literal("false", Value{Kind: KindBool})
	case c == 'n':
		return p.literal("null", Value{Kind: KindNull})
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return Value{}, p.fail(fmt.Sprintf("unexpected %q", c))
	}
}

func (p *parser) literal(word string, v Value) (Value, error) {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return Value{}, p.fail("bad literal")
	}

	p.pos += len(word)

	return v, nil
}

func (p *parser) number() (Value, error) {
	start := p.pos
	isFloat := false

	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '.' || c == 'e' || c == 'E' {
			isFloat = true
		} else if (c < '0' || c > '9') && c != '-' && c != '+' {
			break
		}

		p.pos++
	}

	text := string(p.data[start:p.pos])
	if !isFloat {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return Value{Kind: KindInt, Int: n}, nil
		}
	}

	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		p.pos = start

		return Value{}, p.fail("bad number " + strconv.Quote(text))
	}

	return Value{Kind: KindFloat, Num: f}, nil
}

func (p *parser) str() (string, error) {
	p.pos++ // the opening quote
	start := p.pos
	escaped := false

	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; {
		case c == '"':
			raw := p.data[start:p.pos]
			p.pos++

			if !escaped {
				return string(raw), nil
			}

			// Escapes are rare in a log; encoding/json decodes them exactly
			// as JSON defines them (surrogate pairs included).
			var s string
			if err := json.Unmarshal(p.data[start-1:p.pos], &s); err != nil {
				p.pos = start

				return "", p.fail("bad string escape")
			}

			return s, nil
		case c == '\\':
			escaped = true
			p.pos += 2
		case c < 0x20:
			return "", p.fail("control character in string")
		default:
			p.pos++
		}
	}

	return "", p.fail("unterminated string")
}

func (p *parser) array() (Value, error) {
	p.depth++
	if p.depth > maxDepth {
		return Value{}, p.fail("nested too deeply")
	}
	defer func() { p.depth-- }()

	p.pos++
	v := Value{Kind: KindArray}

	p.space()

	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++

		return v, nil
	}

	for {
		e, err := p.value()
		if err != nil {
			return Value{}, err
		}

		v.Arr = append(v.Arr, e)

		p.space()

		if p.pos >= len(p.data) {
			return Value{}, p.fail("unterminated array")
		}

		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++

			return v, nil
		default:
			return Value{}, p.fail("expected , or ]")
		}
	}
}

func (p *parser) object() (Value, error) {
	p.depth++
	if p.depth > maxDepth {
		return Value{}, p.fail("nested too deeply")
	}
	defer func() { p.depth-- }()

	p.pos++
	v := Value{Kind: KindDoc}

	p.space()

	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++

		return v, nil
	}

	for {
		p.space()

		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return Value{}, p.fail("expected a key")
		}

		k, err := p.str()
		if err != nil {
			return Value{}, err
		}

		p.space()

		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return Value{}, p.fail("expected :")
		}

		p.pos++

		e, err := p.value()
		if err != nil {
			return Value{}, err
		}

		v.Doc = append(v.Doc, Field{Key: k, Val: e})

		p.space()

		if p.pos >= len(p.data) {
			return Value{}, p.fail("unterminated object")
		}

		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++

			return extended(v), nil
		default:
			return Value{}, p.fail("expected , or }")
		}
	}
}

// extended turns the one-key documents of MongoDB's relaxed Extended JSON
// (v2, which logv2 writes) into the values they stand for. A document that
// only looks like one (a wrong type inside) stays a document.
func extended(v Value) Value {
	if len(v.Doc) == 0 || len(v.Doc[0].Key) < 2 || v.Doc[0].Key[0] != '$' {
		return v
	}

	in := v.Doc[0].Val

	switch key := v.Doc[0].Key; {
	case len(v.Doc) == 2 && key == "$binary":
		return Value{Kind: KindBinary, Str: "binary"}
	case len(v.Doc) == 2 && key == "$regex":
		// The legacy form of a regular expression.
		return Value{Kind: KindOther, Str: key}
	case len(v.Doc) != 1:
		return v
	case key == "$oid" && in.Kind == KindString:
		return Value{Kind: KindObjectID, Str: in.Str}
	case key == "$date":
		return date(v, in)
	case (key == "$numberLong" || key == "$numberInt") && in.Kind == KindString:
		if n, err := strconv.ParseInt(in.Str, 10, 64); err == nil {
			return Value{Kind: KindInt, Int: n}
		}
	case key == "$numberDouble" && in.Kind == KindString:
		if f, err := strconv.ParseFloat(in.Str, 64); err == nil {
			return Value{Kind: KindFloat, Num: f}
		}
	case key == "$numberDecimal" && in.Kind == KindString:
		return Value{Kind: KindDecimal, Str: in.Str}
	case key == "$uuid" && in.Kind == KindString:
		return Value{Kind: KindUUID}
	case key == "$binary" && in.Kind == KindDoc:
		if st, ok := in.Get("subType"); ok && (st.Str == "4" || st.Str == "04") {
			return Value{Kind: KindUUID}
		}

		return Value{Kind: KindBinary}
	case key == "$regularExpression", key == "$timestamp", key == "$minKey", key == "$maxKey",
		key == "$symbol", key == "$code", key == "$dbPointer", key == "$undefined":
		return Value{Kind: KindOther, Str: key}
	}

	return v
}

// date reads {"$date": "ISO-8601"} or {"$date": {"$numberLong": "ms"}}.
func date(v, in Value) Value {
	switch in.Kind {
	case KindString:
		for _, layout := range []string{"2006-01-02T15:04:05.999Z07:00", time.RFC3339Nano} {
			if t, err := time.Parse(layout, in.Str); err == nil {
				return Value{Kind: KindDate, Int: t.UnixMilli()}
			}
		}
	case KindInt:
		// Already unwrapped from $numberLong.
		return Value{Kind: KindDate, Int: in.Int}
	}

	return v
}
