package op

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/opkind"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// decoder maps one returned document the way an application would, so that
// its cost is part of the measured latency. A nil decoder only counts.
type decoder func(raw bson.Raw) error

// newDecoder returns the decoder of a decode mode; typ is the struct type for
// "struct".
func newDecoder(mode string, typ reflect.Type) decoder {
	switch mode {
	case "raw":
		return func(raw bson.Raw) error {
			elems, err := raw.Elements()
			for _, e := range elems {
				_ = e.Value()
			}

			return err
		}
	case "map":
		return func(raw bson.Raw) error {
			var m bson.M
			return bson.Unmarshal(raw, &m)
		}
	case "struct":
		return func(raw bson.Raw) error {
			return bson.Unmarshal(raw, reflect.New(typ).Interface())
		}
	}

	return nil
}

// Decodes reports whether the operation maps the documents it returns (a
// decode mode other than none): only such an operation has a decode time.
func (o *Operation) Decodes() bool { return o.decode != nil }

// DecodeClock sums the time one operation spends decoding its documents,
// timed around each decode alone, so that the client's cost per document
// is measured where it is spent rather than read off an end-to-end latency
// in which the server's share drowns it. A worker owns one and resets it
// before each operation; it is not safe for concurrent use.
type DecodeClock struct {
	elapsed time.Duration
}

// Reset zeroes the clock before an operation.
func (c *DecodeClock) Reset() { c.elapsed = 0 }

// Elapsed is the decode time summed since the last Reset.
func (c *DecodeClock) Elapsed() time.Duration { return c.elapsed }

// decodeClockKey is the context key of an operation's DecodeClock.
type decodeClockKey struct{}

// WithDecodeClock returns a context under which the operations of this
// package add their decode time to c. The clock travels in the context
// (not in Func's results) because only the operations that decode have
// one, and the hot path of every other operation must not pay for it.
func WithDecodeClock(ctx context.Context, c *DecodeClock) context.Context {
	return context.WithValue(ctx, decodeClockKey{}, c)
}

// decodeClockOf is the context's clock, nil when none.
func decodeClockOf(ctx context.Context) *DecodeClock {
	c, _ := ctx.Value(decodeClockKey{}).(*DecodeClock)
	return c
}

// timed decodes raw with dec, adding the time it took to c (nil: untimed).
// Two clock readings per document are the timer's own cost, paid alike by
// every decode mode.
func (dec decoder) timed(c *DecodeClock, raw bson.Raw) error {
	if c == nil {
		return dec(raw)
	}

	t0 := time.Now()
	err := dec(raw)
	c.elapsed += time.Since(t0)

	return err
}

// documentTemplate finds the template of the documents of a collection: a
// load step's, else an insert operation's.
func documentTemplate(spec *workload.Spec, coll string) *workload.Template {
	for _, l := range spec.Load {
		if l.Collection == coll {
			return l.Document
		}
	}

	for _, o := range spec.Operations {
		if o.Collection == coll && opkind.Inserts(o.Op) && o.Document != nil {
			return o.Document
		}
	}

	return nil
}

// structTypeFor derives a Go struct type from the collection's document
// template, as an application would declare it, by generating one sample
// document in an environment of its own (so that counters of the run are
// not advanced).
func structTypeFor(spec *workload.Spec, coll, path string) (reflect.Type, error) {
	tpl := documentTemplate(spec, coll)
	if tpl == nil {
		return nil, yamlpos.At(nil, path, "decode: struct needs the documents' template: a load step or an insert operation for collection %q", coll)
	}

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		return nil, errs[0]
	}

	t, errs := env.Compile(tpl.Node(), path)
	if len(errs) > 0 {
		return nil, errs[0]
	}

	doc, ok := t.Value(env.NewScope(0)).(bson.D)
	if !ok {
		return nil, yamlpos.At(nil, path, "decode: struct needs a document template (a mapping) for collection %q", coll)
	}

	return structOf(doc, 0), nil
}

// maxStructDepth bounds nesting of derived struct types.
const maxStructDepth = 8

// structOf builds a struct type with one field per key of doc.
func structOf(doc bson.D, depth int) reflect.Type {
	fields := make([]reflect.StructField, 0, len(doc))
	seen := map[string]bool{}

	for i, e := range doc {
		name := exportedName(e.Key, i)
		if seen[name] {
			name = fmt.Sprintf("%s%d", name, i)
		}

		seen[name] = true

		fields = append(fields, reflect.StructField{
			Name: name,
			Type: goType(e.Value, depth),
			Tag:  reflect.StructTag(fmt.Sprintf(`bson:%q`, e.Key+",omitempty")),
		})
	}

	return reflect.StructOf(fields)
}

func goType(v any, depth int) reflect.Type {
	switch v := v.(type) {
	case bson.D:
		if depth < maxStructDepth {
			return structOf(v, depth+1)
		}

		return reflect.TypeFor[bson.M]()
	case bson.A:
		if len(v) > 0 {
			if _, nested := v[0].(bson.D); !nested {
				return reflect.SliceOf(goType(v[0], depth))
			}
		}

		return reflect.TypeFor[[]any]()
	case int64:
		return reflect.TypeFor[int64]()
	case float64:
		return reflect.TypeFor[float64]()
	case string:
		return reflect.TypeFor[string]()
	case bool:
		return reflect.TypeFor[bool]()
	case time.Time:
		return reflect.TypeFor[time.Time]()
	case bson.ObjectID:
		return reflect.TypeFor[bson.ObjectID]()
	}

	return reflect.TypeFor[any]()
}

// exportedName turns a document key into an exported Go identifier.
func exportedName(key string, i int) string {
	var b strings.Builder

	upper := true

	for _, r := range key {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if upper {
				r = unicode.ToUpper(r)
				upper = false
			}

			b.WriteRune(r)
		default:
			upper = true
		}
	}

	s := b.String()
	if s == "" || !unicode.IsLetter([]rune(s)[0]) {
		s = fmt.Sprintf("F%d%s", i, s)
	}

	return s
}
