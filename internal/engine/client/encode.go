package client

import (
	"math"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/engine/op"
)

// appendArgs appends an operation's arguments as op.Args.AppendJSON does,
// byte for byte, without the driver's reflection: the driver's Extended
// JSON writer costs about a microsecond per findOne, as much as the rest
// of the protocol's Go side (BenchmarkGoSide). It knows the types the
// generators produce; on any other value (or a string it would have to
// escape beyond `"` and `\`) it reports false, having appended nothing,
// and the caller uses AppendJSON. TestAppendArgsMatchesDriver holds the
// two equal.
func appendArgs(dst []byte, a *op.Args) ([]byte, bool) {
	mark := len(dst)
	dst = append(dst, '{')
	sep := false
	ok := true

	key := func(name string) {
		if sep {
			dst = append(dst, ',')
		}

		sep = true
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
	}

	for _, f := range a.DocumentFields() {
		if f.Value != nil && ok {
			key(f.Key)
			dst, ok = appendValue(dst, f.Value)
		}
	}

	if a.Documents != nil && ok {
		key("documents")
		dst, ok = appendArray(dst, a.Documents)
	}

	if !ok {
		return dst[:mark], false
	}

	dst = a.AppendPlain(dst, sep)

	return append(dst, '}'), true
}

// appendValue appends v in canonical Extended JSON v2, or reports false.
func appendValue(dst []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, x), true
	case string:
		return appendString(dst, x)
	case int32:
		dst = append(dst, `{"$numberInt":"`...)
		return append(strconv.AppendInt(dst, int64(x), 10), `"}`...), true
	case int64:
		dst = append(dst, `{"$numberLong":"`...)
		return append(strconv.AppendInt(dst, x, 10), `"}`...), true
	case float64:
		return appendDouble(dst, x), true
	case bson.ObjectID:
		dst = append(dst, `{"$oid":"`...)
		return append(append(dst, x.Hex()...), `"}`...), true
	case bson.DateTime:
		return appendDate(dst, int64(x)), true
	case time.Time:
		return appendDate(dst, int64(bson.NewDateTimeFromTime(x))), true
	case bson.D:
		dst = append(dst, '{')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}

			var ok bool
			if dst, ok = appendString(dst, e.Key); !ok {
				return dst, false
			}

			dst = append(dst, ':')
			if dst, ok = appendValue(dst, e.Value); !ok {
				return dst, false
			}
		}

		return append(dst, '}'), true
	case bson.A:
		return appendArray(dst, x)
	case []any:
		return appendArray(dst, x)
	}

	return dst, false
}

func appendArray(dst []byte, a []any) ([]byte, bool) {
	dst = append(dst, '[')

	for i, v := range a {
		if i > 0 {
			dst = append(dst, ',')
		}

		var ok bool
		if dst, ok = appendValue(dst, v); !ok {
			return dst, false
		}
	}

	return append(dst, ']'), true
}

// appendString appends s quoted when its bytes are printable ASCII (`"`
// and `\` escaped); anything else is left to the driver's escaping.
func appendString(dst []byte, s string) ([]byte, bool) {
	dst = append(dst, '"')

	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b == '"' || b == '\\':
			dst = append(dst, '\\', b)
		case b < 0x20 || b >= 0x7f:
			return dst, false
		default:
			dst = append(dst, b)
		}
	}

	return append(dst, '"'), true
}

// appendDouble writes a double as the driver's canonical writer does: the
// shortest exact form, with ".0" on integers.
func appendDouble(dst []byte, f float64) []byte {
	dst = append(dst, `{"$numberDouble":"`...)

	switch {
	case math.IsInf(f, 1):
		dst = append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		dst = append(dst, "-Infinity"...)
	case math.IsNaN(f):
		dst = append(dst, "NaN"...)
	default:
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'G', -1, 64)

		plain := true
		for _, c := range dst[start:] {
			if c == 'E' || c == '.' {
				plain = false
				break
			}
		}

		if plain {
			dst = append(dst, '.', '0')
		}
	}

	return append(dst, `"}`...)
}

func appendDate(dst []byte, ms int64) []byte {
	dst = append(dst, `{"$date":{"$numberLong":"`...)
	return append(strconv.AppendInt(dst, ms, 10), `"}}`...)
}
