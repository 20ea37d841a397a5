package workload

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// nodeDecoder is implemented by field types that read themselves from a YAML
// node (durations, write concern w), so their messages carry positions too.
type nodeDecoder interface {
	decodeNode(n *yaml.Node, path string) *yamlpos.Error
}

var (
	templateType    = reflect.TypeFor[*Template]()
	nodeDecoderType = reflect.TypeFor[nodeDecoder]()
)

// decoder maps YAML nodes onto the spec types strictly: unknown fields,
// duplicate keys and wrong scalar types are errors, and it keeps going after
// an error so that a user sees all problems of a file at once.
//
// The YAML library's own decoder is not used because its messages carry no column and
// no field path, and its KnownFields mode stops at the first problem.
type decoder struct {
	nodes map[string]*yaml.Node
	errs  []error
}

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	d.errs = append(d.errs, yamlpos.At(n, path, format, args...))
}

// decode reads n into v, which must be settable.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	n = yamlpos.Resolve(n)
	if n == nil {
		return
	}

	if path != "" {
		d.nodes[path] = n
	}

	if v.Type() == templateType {
		if !isNull(n) {
			v.Set(reflect.ValueOf((*Template)(n)))
		}

		return
	}

	if v.Kind() == reflect.Pointer {
		if isNull(n) {
			return
		}

		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}

		d.decode(n, v.Elem(), path)

		return
	}

	if v.CanAddr() && v.Addr().Type().Implements(nodeDecoderType) {
		if err := v.Addr().Interface().(nodeDecoder).decodeNode(n, path); err != nil {
			d.errs = append(d.errs, err)
		}

		return
	}

	switch v.Kind() { //nolint:exhaustive // other kinds are not used by the spec types
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
			d.errorf(n, path, "must be a string, not %s", describe(n))
			return
		}

		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
			d.errorf(n, path, "must be true or false, not %s", describe(n))
			return
		}

		v.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		var i int64
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
			d.errorf(n, path, "must be an integer, not %s", describe(n))
			return
		}

		if v.OverflowInt(i) {
			d.errorf(n, path, "%d is out of range", i)
			return
		}

		v.SetInt(i)
	case reflect.Float64:
		var f float64
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil {
			d.errorf(n, path, "must be a number, not %s", describe(n))
			return
		}

		// NaN and infinities pass no comparison a rule makes, and cannot
		// be written to the results file (JSON has no such numbers).
		if math.IsNaN(f) || math.IsInf(f, 0) {
			d.errorf(n, path, "must be a finite number, not %s", n.Value)
			return
		}

		v.SetFloat(f)
	default:
		d.errorf(n, path, "internal error: cannot decode into %s", v.Type())
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		return
	}

	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "must be a mapping, not %s", describe(n))
		return
	}

	fields := structFields(v.Type())
	seen := make(map[string]bool, len(n.Content)/2)

	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, "keys must be plain names")
			continue
		}

		key := k.Value
		fieldPath := yamlpos.Field(path, key)

		if seen[key] {
			d.errorf(k, fieldPath, "duplicate field")
			continue
		}

		seen[key] = true

		idx, ok := fields[key]
		if !ok {
			d.errorf(k, fieldPath, "unknown field %q%s", key, suggest(key, fields))
			continue
		}

		d.decode(val, v.FieldByIndex(idx), fieldPath)
	}
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		return
	}

	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "must be a list, not %s", describe(n))
		return
	}

	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.decode(item, s.Index(i), yamlpos.Index(path, i))
	}

	v.Set(s)
}

// decodeMap reads a mapping with string keys, such as target settings.
func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		return
	}

	if n.Kind != yaml.MappingNode || v.Type().Key().Kind() != reflect.String {
		d.errorf(n, path, "must be a mapping, not %s", describe(n))
		return
	}

	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)

	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, "keys must be plain names")
			continue
		}

		val := yamlpos.Resolve(n.Content[i+1])
		elem := reflect.New(v.Type().Elem()).Elem()

		// Settings are strings to the server: accept numbers and booleans
		// as written (shared_buffers: 128MB, fsync: off).
		if elem.Kind() == reflect.String && val.Kind == yaml.ScalarNode && !isNull(val) {
			elem.SetString(val.Value)
			d.nodes[yamlpos.Field(path, k.Value)] = val
		} else {
			d.decode(val, elem, yamlpos.Field(path, k.Value))
		}

		m.SetMapIndex(reflect.ValueOf(k.Value), elem)
	}

	v.Set(m)
}

// structFields maps yaml tag names to field index paths; fields tagged
// ",inline" contribute their own fields, as in the YAML library.
func structFields(t reflect.Type) map[string][]int {
	m := make(map[string][]int, t.NumField())

	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}

		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" && f.Type.Kind() == reflect.Struct {
			for k, sub := range structFields(f.Type) {
				m[k] = append([]int{i}, sub...)
			}

			continue
		}

		if name == "" || name == "-" {
			continue
		}

		m[name] = []int{i}
	}

	return m
}

// suggest names the closest known field, or lists them all, so that a typo
// is fixed without opening the docs.
func suggest(key string, fields map[string][]int) string {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}

	sort.Strings(names)

	best, bestDist := "", 3
	for _, name := range names {
		if dist := Levenshtein(key, name); dist < bestDist {
			best, bestDist = name, dist
		}
	}

	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}

	return " (known fields: " + strings.Join(names, ", ") + ")"
}

// Levenshtein is the edit distance between a and b, by which an unknown
// field name (or a mistyped flag, in the command line) finds its
// suggestion.
func Levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)

	for j := range prev {
		prev[j] = j
	}

	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}

			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}

		prev, cur = cur, prev
	}

	return prev[len(b)]
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// describe names a node's type the way a user wrote it.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!null":
			return "null"
		default:
			// A value of a custom tag can span lines: quoted, the
			// message stays one line.
			v := n.Value
			if strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsPrint(r) }) {
				v = strconv.Quote(v)
			}

			return fmt.Sprintf("%s %s", strings.TrimPrefix(n.Tag, "!!"), v)
		}
	case yaml.DocumentNode, yaml.AliasNode:
		return "a document"
	}

	return "an unknown node"
}
