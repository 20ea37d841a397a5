package datagen_test

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/spec/datagen"
)

// mustParse returns the YAML node of src.
func mustParse(src string) *yaml.Node {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		panic(err)
	}

	return &n
}

// printJSON prints v as relaxed MongoDB Extended JSON.
func printJSON(v any) {
	b, err := bson.MarshalExtJSON(v, false, false)
	if err != nil {
		panic(err)
	}

	fmt.Println(string(b))
}

// A template for insert documents: plain fields are copied, generators make
// fresh values for every document.
func ExampleEnv_Compile() {
	env, errs := datagen.NewEnv(42, nil, "vars")
	if errs != nil {
		panic(errs)
	}

	tmpl, errs := env.Compile(mustParse(`
_id: {^seq: {start: 1}}
kind: user
age: {^int: {min: 18, max: 90}}
status: {^choice: {values: [active, idle], weights: [9, 1]}}
tags: {^array: {length: 2, of: {^words: 1}}}
created: {^date: {from: 2024-01-01, to: 2025-01-01}}
`), "document")
	if errs != nil {
		panic(errs)
	}

	s := env.NewScope(0)
	for range 3 {
		printJSON(tmpl.Value(s))
	}
	// Output:
	// {"_id":1,"kind":"user","age":25,"status":"active","tags":["our","down"],"created":{"$date":"2024-12-21T07:54:12.924Z"}}
	// {"_id":2,"kind":"user","age":86,"status":"active","tags":["punch","why"],"created":{"$date":"2024-09-20T01:49:26.561Z"}}
	// {"_id":3,"kind":"user","age":27,"status":"idle","tags":["lots","today"],"created":{"$date":"2024-12-04T20:33:08.746Z"}}
}

// Iteration variables tie operations together: within one iteration every
// ^var: msg is the same message, so a find can look for the error that the
// insert just logged. Most messages repeat one of a pool of three.
func ExampleNewEnv() {
	env, errs := datagen.NewEnv(7, mustParse(`
msg:
  ^choice:
    values: [{^pool: {size: 3, of: {^sentence: 3}}}, {^sentence: 5}]
    weights: [9, 1]
`), "vars")
	if errs != nil {
		panic(errs)
	}

	insert, _ := env.Compile(mustParse(`{level: error, message: {^var: msg}}`), "insert")
	find, _ := env.Compile(mustParse(`{message: {$eq: {^var: msg}}}`), "find")

	s := env.NewScope(0)
	for range 4 {
		s.NextIteration()
		printJSON(insert.Value(s))
		printJSON(find.Value(s))
	}
	// Output:
	// {"level":"error","message":"Fortnightly another because."}
	// {"message":{"$eq":"Fortnightly another because."}}
	// {"level":"error","message":"Those wow mine."}
	// {"message":{"$eq":"Those wow mine."}}
	// {"level":"error","message":"What his Alaskan."}
	// {"message":{"$eq":"What his Alaskan."}}
	// {"level":"error","message":"What his Alaskan."}
	// {"message":{"$eq":"What his Alaskan."}}
}

// Errors name the line, column and field path of the problem.
func ExampleEnv_Compile_errors() {
	env, _ := datagen.NewEnv(1, nil, "vars")

	_, errs := env.Compile(mustParse(`
name: {^name: {}}
age: {^int: {min: 90, max: 18}}
score: {^flaot: {min: 0, max: 1}}
`), "operations[0].document")
	for _, err := range errs {
		fmt.Println(err)
	}
	// Output:
	// 3:19: operations[0].document.age: ^int: min must be <= max
	// 4:9: operations[0].document.score: unknown generator ^flaot (known: ^array, ^bool, ^choice, ^date, ^email, ^exponential, ^field, ^fields, ^float, ^format, ^hotspot, ^int, ^key, ^keyname, ^latest, ^name, ^now, ^objectId, ^pool, ^sentence, ^seq, ^sequential, ^string, ^uniform, ^uuid, ^var, ^words, ^ycsbBytes, ^zipf, ^zipfian)
}
