package datagen

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestKeyPicksDistribution(t *testing.T) {
	t.Parallel()

	// ^key with distribution zipfian is the scrambled ^zipfian: same seed,
	// same draws.
	a := gofCounts(t, "{^key: {distribution: zipfian, min: 0, max: 99}}", 0, gofKeys)
	b := gofCounts(t, "{^zipfian: {min: 0, max: 99, scrambled: true}}", 0, gofKeys)

	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("key %d: ^key zipfian drew it %v times, scrambled ^zipfian %v", i, a[i], b[i])
		}
	}

	for _, d := range []string{"uniform", "latest", "hotspot", "exponential", "sequential"} {
		e := newEnv(t, 1, "")
		if _, errs := e.Compile(parseYAML(t, "{^key: {distribution: "+d+", min: 0, max: 9}}"), "t"); errs != nil {
			t.Errorf("%s: %v", d, errs)
		}
	}
}

func TestKeyErrors(t *testing.T) {
	t.Parallel()

	for src, want := range map[string]string{
		"{^key: {distribution: uniform, max: 9, theta: 0.5}}": "theta does not apply to distribution uniform",
		"{^key: {distribution: gaussian, max: 9}}":            "distribution must be one of exponential, hotspot, latest, sequential, uniform, zipfian",
		"{^keyname: {key: 1, order: random}}":                 "order must be hashed or ordered",
		"{^fields: {count: 0, of: 1}}":                        "count must be between 1 and 1024",
	} {
		e := newEnv(t, 1, "")

		_, errs := e.Compile(parseYAML(t, src), "t")
		if len(errs) == 0 || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%s: errors %v, want one containing %q", src, errs, want)
		}
	}
}

func TestRecordGenerators(t *testing.T) {
	t.Parallel()

	e := newEnv(t, 1, "")
	s := e.NewScope(0)

	if got := compileYAML(t, e, "{^keyname: {key: 42, order: ordered}}").Value(s); got != "user42" {
		t.Errorf("ordered keyname = %v, want user42", got)
	}

	if got := compileYAML(t, e, "{^keyname: {key: 42}}").Value(s); got != KeyName("user", 42, true, 1) || got == "user42" {
		t.Errorf("hashed keyname = %v", got)
	}

	rec := compileYAML(t, e, "{^fields: {count: 3, of: {^string: 5}}}").Value(s).(bson.D)
	if len(rec) != 3 || rec[0].Key != "field0" || rec[2].Key != "field2" || len(rec[1].Value.(string)) != 5 {
		t.Errorf("^fields = %v", rec)
	}

	rec = compileYAML(t, e, "{^fields: {count: 2, of: 1, id: {^keyname: {key: 7, order: ordered}}}}").Value(s).(bson.D)
	if len(rec) != 3 || rec[0].Key != "_id" || rec[0].Value != "user7" || rec[1].Key != "field0" {
		t.Errorf("^fields with id = %v", rec)
	}

	seen := map[string]bool{}
	one := compileYAML(t, e, "{^field: {count: 4, of: x}}")

	for range 200 {
		d := one.Value(s).(bson.D)
		if len(d) != 1 || d[0].Value != "x" {
			t.Fatalf("^field = %v", d)
		}

		seen[d[0].Key] = true
	}

	if len(seen) != 4 || !seen["field0"] || !seen["field3"] {
		t.Errorf("^field named %v in 200 draws, want field0 to field3", seen)
	}
}
