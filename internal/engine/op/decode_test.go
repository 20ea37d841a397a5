package op

import (
	"reflect"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestStructOfTemplateDocument(t *testing.T) {
	t.Parallel()

	id := bson.NewObjectID()
	now := time.Now().UTC().Truncate(time.Millisecond)
	doc := bson.D{
		{Key: "_id", Value: id},
		{Key: "name", Value: "ada"},
		{Key: "age", Value: int64(36)},
		{Key: "birthday", Value: now},
		{Key: "score.total", Value: 1.5},
		{Key: "tags", Value: bson.A{"a", "b"}},
		{Key: "address", Value: bson.D{{Key: "city", Value: "x"}}},
	}

	typ := structOf(doc, 0)

	wantFields := map[string]reflect.Kind{
		"Id": reflect.Array, "Name": reflect.String, "Age": reflect.Int64, "Birthday": reflect.Struct,
		"ScoreTotal": reflect.Float64, "Tags": reflect.Slice, "Address": reflect.Struct,
	}
	for name, kind := range wantFields {
		f, ok := typ.FieldByName(name)
		if !ok || f.Type.Kind() != kind {
			t.Errorf("field %s: %v (present %v), want kind %s", name, f.Type, ok, kind)
		}
	}

	raw, err := bson.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}

	v := reflect.New(typ)
	if err := bson.Unmarshal(raw, v.Interface()); err != nil {
		t.Fatal(err)
	}

	got := v.Elem()
	if got.FieldByName("Name").String() != "ada" || got.FieldByName("Age").Int() != 36 ||
		!got.FieldByName("Birthday").Interface().(time.Time).Equal(now) ||
		got.FieldByName("Id").Interface().(bson.ObjectID) != id {
		t.Errorf("decoded %+v", got.Interface())
	}

	for _, mode := range []string{"raw", "map", "struct"} {
		if err := newDecoder(mode, typ)(raw); err != nil {
			t.Errorf("%s: %v", mode, err)
		}
	}

	if newDecoder("none", nil) != nil || newDecoder("", nil) != nil {
		t.Error("none and empty must not decode")
	}

	if err := newDecoder("map", nil)(bson.Raw{1, 2, 3}); err == nil {
		t.Error("decoding garbage should fail")
	}
}
