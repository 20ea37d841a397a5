package client

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/spec/datagen"
)

// framingWorkload draws arguments of every kind and of the generators'
// value types.
const framingWorkload = `name: f
database: d
collections:
  - name: c
operations:
  - name: one
    op: findOne
    collection: c
    filter: {_id: {^format: {pattern: "u%05d", args: [{^int: {min: 1, max: 1000}}]}}, q: "a \"quoted\" \\ back"}
    projection: {name: 1, _id: 0}
    sort: {age: -1}
  - name: many
    op: find
    collection: c
    filter: {age: {$gte: {^int: {min: 18, max: 90}}}, score: {$lt: {^float: {min: -1e6, max: 1e6}}}}
    limit: 10
    skip: 2
    batch_size: 5
  - name: put
    op: insertOne
    collection: c
    document: {_id: {^objectId: {}}, name: {^name: {}}, age: {^int: {min: 18, max: 90}}, at: {^now: {}}, ok: {^bool: {}}, tags: {^array: {of: {^words: {count: 2}}, length: {^int: {min: 0, max: 3}}}}, addr: {city: {^string: {length: 8}}, n: 1.0, z: null}}
  - name: batch
    op: insertMany
    collection: c
    batch_size: 3
    document: {v: {^int: {min: 1, max: 9}}, s: {^sentence: {}}}
    ordered: false
  - name: up
    op: updateOne
    collection: c
    filter: {_id: {^int: {min: 1, max: 10}}}
    update: {$set: {n: {^float: {min: 0, max: 1}}}, $inc: {c: 1}}
    upsert: true
  - name: agg
    op: aggregate
    collection: c
    pipeline: [{$match: {age: {^int: {min: 1, max: 9}}}}, {$limit: 5}]
run:
  duration: 1s
`

// TestAppendArgsMatchesDriver checks that the protocol's own encoder of
// arguments writes exactly what op.Args.AppendJSON (the driver's Extended
// JSON writer) writes, for generated arguments of every kind above and
// for edge values, and that it declines, rather than guesses, a value it
// does not know.
func TestAppendArgsMatchesDriver(t *testing.T) {
	t.Parallel()

	spec := parseSpec(t, framingWorkload)

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	ops, errs := op.Compile(spec, env)
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	var all []op.Args

	s := env.NewScope(0)
	for range 200 {
		s.NextIteration()

		for _, o := range ops {
			a, err := o.Args(s)
			if err != nil {
				t.Fatal(err)
			}

			all = append(all, a)
		}
	}

	yes := true
	for _, v := range []any{
		"plain", `q"uote`, `back\slash`, "", "tab\t", "naïve", "\u2028", int32(-5), int64(math.MaxInt64),
		0.0, math.Copysign(0, -1), 1.0, 1.5, 1e21, 1e-7, 123456789012345678.0, math.NaN(), math.Inf(1), math.Inf(-1),
		true, nil, bson.NewObjectID(), bson.DateTime(-62135596800000), time.Date(2024, 2, 29, 12, 0, 0, 999_999_999, time.UTC),
		bson.D{},
		bson.A{},
		[]any{int32(1), "x"},
		bson.D{{Key: "a.b", Value: bson.D{{Key: "$in", Value: bson.A{1.25, int64(2)}}}}},
		bson.D{{Key: "ké", Value: int32(1)}},
		bson.Binary{Data: []byte("hi")},
		7,
		map[string]any{"a": int32(1)},
	} {
		all = append(all, op.Args{Filter: bson.D{{Key: "v", Value: v}}, Ordered: &yes, Limit: 3})
	}

	fast := 0

	for i, a := range all {
		want, err := a.AppendJSON([]byte("prefix"))
		if err != nil {
			t.Fatalf("args %d: %v", i, err)
		}

		got, ok := appendArgs([]byte("prefix"), &a)
		if !ok {
			if string(got) != "prefix" {
				t.Errorf("args %d: declined but appended %q", i, got)
			}

			continue
		}

		fast++

		if string(got) != string(want) {
			t.Errorf("args %d:\n got %s\nwant %s", i, got, want)
		}
	}

	// The generated arguments are all of known types: the fast path must
	// be the one taken, or this test checks nothing.
	if fast < 200*len(ops) {
		t.Errorf("the encoder took %d of %d arguments, want at least the %d generated", fast, len(all), 200*len(ops))
	}
}

// TestParseReplyMatchesJSON checks that the phase lines' parser reads each
// line as encoding/json does, with the spacing and key orders Node.js
// (JSON.stringify) and Python (json.dumps) write, and that it hands every
// other line to encoding/json.
func TestParseReplyMatchesJSON(t *testing.T) {
	t.Parallel()

	parsed := []string{
		`{"type":"done","worker":3,"r":[[0,12,345,1,null],[2,400,7,0,{"code":11000,"name":"MongoServerError","message":"E11000 \"dup\" } ]","labels":["x"],"network":false,"timeout":false}]]}`,
		`{"type": "done", "worker": 0, "r": [[1, 2, 3, 4, null]]}`,
		`{"r":[],"worker":1,"type":"done"}`,
		`{"type":"done","worker":0,"r":[[0,-1,0,0,{"code":null,"name":"X","message":"m","labels":[],"network":true,"timeout":true}]]}`,
		`{"type":"need","worker":7}`,
		`{"type":"stopped","starved":123456789012}`,
	}

	for _, line := range parsed {
		got, ok := parseReply([]byte(line))
		if !ok {
			t.Errorf("not parsed: %s", line)
			continue
		}

		var r reply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}

		want := Reply{Type: r.Type, Worker: r.Worker, Records: r.R, Starved: r.Starved}
		if len(want.Records) == 0 && len(got.Records) == 0 {
			want.Records, got.Records = nil, nil
		}

		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", line, got, want)
		}
	}

	for _, line := range []string{
		`{"type":"ready","stack":"node-driver","versions":{"node":"20"}}`,
		`{"type":"fatal","message":"no"}`,
		`{"type":"done","worker":1,"r":[[0,1.5,3,4,null]]}`,
		`{"type":"done","worker":1,"r":[[0,1e3,3,4,null]]}`,
		`{"type":"done","worker":1,"r":[[0,1,3,4]]}`,
		`{"type":"done","worker":1,"r":[[0,1,3,4,null]]} x`,
		`{"type":"done","worker":1,"r":[[0,99999999999999999999,3,4,null]]}`,
		`{"type":"do\u006ee","worker":1}`,
		`{"type":"done","worker":1,"extra":2}`,
		`{"type":"phase","phase":"run","workers":1}`,
		`{"type":"done","worker":1,"r":[[0,1,3,4,{"code":"x"}]]}`,
		`this is not JSON`,
		``,
		`{}`,
	} {
		if r, ok := parseReply([]byte(line)); ok {
			t.Errorf("parsed %s as %+v; encoding/json must judge it", line, r)
		}
	}
}

// FuzzParseReply checks that whatever the parser accepts, encoding/json
// reads the same way.
func FuzzParseReply(f *testing.F) {
	f.Add(`{"type":"done","worker":3,"r":[[0,12,345,1,null],[2,400,7,0,{"code":11000,"name":"E","message":"m","labels":[],"network":false,"timeout":false}]]}`)
	f.Add(`{"type":"need","worker":7}`)
	f.Add(`{"type":"stopped","starved":1}`)

	f.Fuzz(func(t *testing.T, line string) {
		got, ok := parseReply([]byte(line))
		if !ok {
			return
		}

		var r reply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("parsed %q, which encoding/json refuses: %v", line, err)
		}

		want := Reply{Type: r.Type, Worker: r.Worker, Records: r.R, Starved: r.Starved}
		if len(want.Records) == 0 && len(got.Records) == 0 {
			want.Records, got.Records = nil, nil
		}

		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", line, got, want)
		}
	})
}

// BenchmarkFraming is the protocol's Go side without a process: encoding
// one findOne into an ops line and parsing its record from a done line of
// 128, per operation.
func BenchmarkFraming(b *testing.B) {
	spec := parseSpec(b, benchWorkload)

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		b.Fatal(errs)
	}

	ops, errs := op.Compile(spec, env)
	if len(errs) > 0 {
		b.Fatal(errs)
	}

	s := env.NewScope(0)
	args := make([]op.Args, 128)

	for i := range args {
		s.NextIteration()

		var err error
		if args[i], err = ops[0].Args(s); err != nil {
			b.Fatal(err)
		}
	}

	recs := make([]string, len(args))
	for i := range recs {
		recs[i] = fmt.Sprintf("[0,%d,%d,1,null]", 1000+i*1300, 250000+i)
	}

	done := []byte(`{"type":"done","worker":0,"r":[` + strings.Join(recs, ",") + `]}`)

	var line OpsLine

	b.ReportAllocs()

	for i := 0; b.Loop(); i++ {
		k := i % len(args)
		if k == 0 {
			line.Begin(0)

			r, ok := parseReply(done)
			if !ok || len(r.Records) != len(args) {
				b.Fatal("done line not parsed")
			}
		}

		if err := line.Add(0, &args[k]); err != nil {
			b.Fatal(err)
		}
	}
}
