package datagen

import (
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestPlainTemplates(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name string
		src  string
		want any
	}{
		{"int", "42", int64(42)},
		{"hex int", "0x1F", int64(31)},
		{"float", "1.5", 1.5},
		{"bool", "true", true},
		{"null", "~", nil},
		{"empty document", "", nil},
		{"string", "hello", "hello"},
		{"quoted number is a string", `"42"`, "42"},
		{"explicit string tag", "!!str 42", "42"},
		{"implicit date stays a string", "2024-01-01", "2024-01-01"},
		{"explicit timestamp stays a string", "!!timestamp 2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"},
		{"binary", "!!binary aGk=", bson.Binary{Data: []byte("hi")}},
		{"sequence", "[1, a, [true]]", bson.A{int64(1), "a", bson.A{true}}},
		{
			"mapping keeps key order",
			"{z: 1, a: 2, m: {y: 3, b: 4}}",
			bson.D{{Key: "z", Value: int64(1)}, {Key: "a", Value: int64(2)}, {Key: "m", Value: bson.D{
				{Key: "y", Value: int64(3)}, {Key: "b", Value: int64(4)},
			}}},
		},
		{
			"operators are plain keys",
			"{age: {$gt: 30}, $or: [{a: 1}], pipeline: [{$match: {x: 1}}]}",
			bson.D{
				{Key: "age", Value: bson.D{{Key: "$gt", Value: int64(30)}}},
				{Key: "$or", Value: bson.A{bson.D{{Key: "a", Value: int64(1)}}}},
				{Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "x", Value: int64(1)}}}}}},
			},
		},
		{
			"anchors and aliases",
			"{a: &x {k: [1, 2]}, b: *x, c: &s str, d: *s}",
			bson.D{
				{Key: "a", Value: bson.D{{Key: "k", Value: bson.A{int64(1), int64(2)}}}},
				{Key: "b", Value: bson.D{{Key: "k", Value: bson.A{int64(1), int64(2)}}}},
				{Key: "c", Value: "str"},
				{Key: "d", Value: "str"},
			},
		},
		{
			"merge keys",
			"{base: &b {kind: user, n: 1}, other: &o {n: 2, extra: x}, m: {<<: [*b, *o], n: 3, kind2: k}}",
			bson.D{
				{Key: "base", Value: bson.D{{Key: "kind", Value: "user"}, {Key: "n", Value: int64(1)}}},
				{Key: "other", Value: bson.D{{Key: "n", Value: int64(2)}, {Key: "extra", Value: "x"}}},
				{Key: "m", Value: bson.D{
					{Key: "kind", Value: "user"},
					{Key: "extra", Value: "x"},
					{Key: "n", Value: int64(3)},
					{Key: "kind2", Value: "k"},
				}},
			},
		},
		{
			"anchored generator",
			"{a: &g {^int: {min: 7, max: 7}}, b: *g}",
			bson.D{{Key: "a", Value: int64(7)}, {Key: "b", Value: int64(7)}},
		},
		{"quoted merge key is a plain key", `{"<<": 1}`, bson.D{{Key: "<<", Value: int64(1)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			e := newEnv(t, 1, "")
			tmpl := compileYAML(t, e, tc.src)

			if !isConst(tmpl.c) {
				t.Errorf("isConst = false, want true")
			}

			got := tmpl.Value(e.NewScope(0))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Value() = %#v, want %#v", got, tc.want)
			}
		})
	}
}

// TestIsConst checks which templates count as constant (their value
// computed once and reused): generators with a fixed result, such as a
// literal ^date or a ^pool of size 1, count too.
func TestIsConst(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"{a: 1, b: [x, y]}", true},
		{"{a: {^date: 2024-01-01}}", true},
		{"{a: {^pool: {size: 1, of: {^int: {min: 0, max: 9}}}}}", true},
		{"{a: {^array: {length: 2, of: 1}}}", true},
		{"{a: {^choice: {values: [1]}}}", true},
		{"{a: 1, b: {^int: {min: 0, max: 9}}}", false},
		{"[1, {^seq: {}}]", false},
		{"{^now: {}}", false},
		{"{a: {^var: v}}", false},
		{"{a: {^var: k}}", true}, // a variable with a static template is a constant
	} {
		e := newEnv(t, 1, "{v: {^int: {min: 0, max: 9}}, k: 5}")
		if got := isConst(compileYAML(t, e, tc.src).c); got != tc.want {
			t.Errorf("%s: isConst = %v, want %v", tc.src, got, tc.want)
		}
	}
}

// TestMixedDocument checks that static fields are shared and generated
// fields are fresh, in key order.
func TestMixedDocument(t *testing.T) {
	t.Parallel()

	e := newEnv(t, 1, "")
	tmpl := compileYAML(t, e, "{kind: user, id: {^seq: {start: 5}}, tags: [a, {^seq: {start: 100}}]}")
	s := e.NewScope(0)

	for i := range int64(3) {
		want := bson.D{
			{Key: "kind", Value: "user"},
			{Key: "id", Value: 5 + i},
			{Key: "tags", Value: bson.A{"a", 100 + i}},
		}
		if got := tmpl.Value(s); !reflect.DeepEqual(got, want) {
			t.Errorf("value %d = %v, want %v", i, got, want)
		}
	}
}
