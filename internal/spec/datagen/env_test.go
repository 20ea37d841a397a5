package datagen

import (
	"reflect"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestVarCaching(t *testing.T) {
	t.Parallel()

	e := newEnv(t, 1, `
msg: {^string: 12}
id: {^int: {min: 0, max: 1000000000}}
doc: {ref: {^var: id}, note: {^var: msg}}
`)
	insert := compileYAML(t, e, "{message: {^var: msg}, again: {^var: msg}, doc: {^var: doc}}")
	find := compileYAML(t, e, "{message: {^var: msg}, id: {^var: id}}")
	s := e.NewScope(0)

	prev := ""

	for i := range 50 {
		s.NextIteration()

		ins := insert.Value(s).(bson.D)
		fnd := find.Value(s).(bson.D)
		msg := ins[0].Value.(string)
		doc := ins[2].Value.(bson.D)

		if ins[1].Value != msg || fnd[0].Value != msg || doc[1].Value != msg {
			t.Fatalf("iteration %d: ^var: msg differs within an iteration: %v, %v", i, ins, fnd)
		}

		if doc[0].Value != fnd[1].Value {
			t.Fatalf("iteration %d: ^var: id differs between a variable and a template: %v, %v", i, doc, fnd)
		}

		if msg == prev {
			t.Fatalf("iteration %d: ^var: msg did not change after NextIteration", i)
		}

		prev = msg
	}
}

func TestVarsInAnyOrder(t *testing.T) {
	t.Parallel()

	e := newEnv(t, 1, "{a: [{^var: b}, {^var: c}], b: {^var: c}, c: 3}")
	got := compileYAML(t, e, "{^var: a}").Value(e.NewScope(0))

	if want := (bson.A{int64(3), int64(3)}); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestPoolShared(t *testing.T) {
	t.Parallel()

	const src = "{^pool: {size: 20, of: {^sentence: {words: 6}}}}"

	values := func(e *Env, tmpl *Template, worker int) map[any]bool {
		s := e.NewScope(worker)
		set := make(map[any]bool)

		for range 2000 {
			set[tmpl.Value(s)] = true
		}

		return set
	}

	e := newEnv(t, 1, "")
	tmpl := compileYAML(t, e, src)
	a, b := values(e, tmpl, 0), values(e, tmpl, 1)

	if len(a) != 20 {
		t.Errorf("%d distinct values, want the 20 of the pool", len(a))
	}

	if !reflect.DeepEqual(a, b) {
		t.Errorf("workers see different pools:\n%v\n%v", a, b)
	}

	// Same seed: same pool, whatever the worker; another seed: another pool.
	e2 := newEnv(t, 1, "")
	if c := values(e2, compileYAML(t, e2, src), 5); !reflect.DeepEqual(a, c) {
		t.Errorf("an Env with the same seed has a different pool")
	}

	e3 := newEnv(t, 2, "")
	if c := values(e3, compileYAML(t, e3, src), 0); reflect.DeepEqual(a, c) {
		t.Errorf("an Env with another seed has the same pool")
	}
}

// TestPoolOfChoice is the "90% of errors repeat one of 100 messages" case.
func TestPoolOfChoice(t *testing.T) {
	t.Parallel()

	c := counts(t, `{^choice: {values: [{^pool: {size: 100, of: {^sentence: {words: 6}}}}, {^sentence: {words: 8}}], weights: [9, 1]}}`, 10_000)

	repeated := 0

	for _, n := range c {
		if n > 1 {
			repeated += n
		}
	}

	if f := float64(repeated) / 10_000; f < 0.85 || f > 0.95 {
		t.Errorf("fraction of repeated messages %.3f, want about 0.9", f)
	}
}

func TestSeqConcurrent(t *testing.T) {
	t.Parallel()

	const workers, each = 8, 1000

	e := newEnv(t, 1, "")
	tmpl := compileYAML(t, e, "{_id: {^seq: {start: 1}}}")
	got := make([][]int64, workers)

	var wg sync.WaitGroup

	for w := range workers {
		wg.Go(func() {
			s := e.NewScope(w)
			for range each {
				got[w] = append(got[w], tmpl.Value(s).(bson.D)[0].Value.(int64))
			}
		})
	}

	wg.Wait()

	seen := make(map[int64]bool)

	for _, ids := range got {
		for _, id := range ids {
			if seen[id] || id < 1 || id > workers*each {
				t.Fatalf("id %d repeated or out of [1, %d]", id, workers*each)
			}

			seen[id] = true
		}
	}

	// A later phase compiling the same node continues the sequence.
	s := e.NewScope(0)
	if v := tmpl.Value(s).(bson.D)[0].Value; v != int64(workers*each+1) {
		t.Errorf("next id %v, want %d", v, workers*each+1)
	}
}

func TestSeqSharedByAliasAndRecompile(t *testing.T) {
	t.Parallel()

	e := newEnv(t, 1, "")
	n := parseYAML(t, "{a: &s {^seq: {}}, b: *s}")

	t1, errs := e.Compile(n, "t")
	if errs != nil {
		t.Fatal(errs)
	}

	t2, errs := e.Compile(n, "t")
	if errs != nil {
		t.Fatal(errs)
	}

	s := e.NewScope(0)
	got := bson.A{t1.Value(s), t2.Value(s)}
	want := bson.A{
		bson.D{{Key: "a", Value: int64(0)}, {Key: "b", Value: int64(1)}},
		bson.D{{Key: "a", Value: int64(2)}, {Key: "b", Value: int64(3)}},
	}

	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestDeterminism(t *testing.T) {
	t.Parallel()

	const src = `
i: {^int: {min: 0, max: 1000000}}
f: {^float: {min: 0, max: 1}}
b: {^bool: {}}
z: {^zipf: {max: 1000}}
h: {^hotspot: {min: 0, max: 1000}}
c: {^choice: {values: [x, y, z], weights: [1, 2, 3]}}
p: {^pool: {size: 10, of: {^words: 2}}}
a: {^array: {length: {^int: {min: 0, max: 3}}, of: {^string: 4}}}
w: {^words: 3}
s: {^sentence: 4}
n: {^name: {}}
e: {^email: {}}
u: {^uuid: {}}
d: {^date: {from: 2000-01-01, to: 2030-01-01}}
v: {^var: x}
`
	const vars = "{x: {^string: 8}}"

	gen := func(seed int64, worker int) []any {
		e := newEnv(t, seed, vars)
		tmpl := compileYAML(t, e, src)
		s := e.NewScope(worker)
		vals := make([]any, 100)

		for i := range vals {
			s.NextIteration()
			vals[i] = tmpl.Value(s)
			vals[i] = append(vals[i].(bson.D), bson.E{Key: "pick", Value: s.Float64()})
		}

		return vals
	}

	a := gen(9, 2)
	if b := gen(9, 2); !reflect.DeepEqual(a, b) {
		t.Errorf("same seed and worker, different values:\n%v\n%v", a[0], b[0])
	}

	if b := gen(9, 3); reflect.DeepEqual(a, b) {
		t.Errorf("another worker generates the same values")
	}

	if b := gen(10, 2); reflect.DeepEqual(a, b) {
		t.Errorf("another seed generates the same values")
	}
}
