package workload

import (
	"encoding/json"
	"testing"
)

func TestTemplateJSONKeepsOrder(t *testing.T) {
	t.Parallel()

	s, errs := Parse("w.yaml", []byte(base+`    write_concern: {w: majority}
  - name: f
    op: find
    collection: c
    filter: {z: {^int: {min: 1, max: 2}}, a: [1, 2.5, true, null, "x"]}
    sort: {b: -1, a: 1}
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	for _, tc := range []struct {
		v    any
		want string
	}{
		{s.Operations[1].Filter, `{"z":{"^int":{"min":1,"max":2}},"a":[1,2.5,true,null,"x"]}`},
		{s.Operations[1].Sort, `{"b":-1,"a":1}`},
		{s.Operations[0].WriteConcern, `{"w":"majority"}`},
		{s.Run.Timeout, `"10s"`},
	} {
		got, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}

		if string(got) != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}

	// The whole spec must be JSON-encodable: it goes into results files.
	if _, err := json.Marshal(s); err != nil {
		t.Fatal(err)
	}
}
