package datagen

import (
	"errors"
	"reflect"
	"testing"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

func TestCompileErrors(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name string
		src  string
		want []string
	}{
		{
			"unknown generator",
			"doc:\n  age: {^integer: {min: 1}}\n",
			[]string{"2:9: t.doc.age: unknown generator ^integer (known: ^array, ^bool, ^choice, ^date, ^email, " +
				"^exponential, ^field, ^fields, ^float, ^format, ^hotspot, ^int, ^key, ^keyname, ^latest, ^name, ^now, ^objectId, ^pool, ^sentence, ^seq, ^sequential, ^string, ^uniform, ^uuid, ^var, ^words, ^ycsbBytes, ^zipf, ^zipfian)"},
		},
		{
			"unknown argument",
			"doc:\n  age:\n    ^int: {min: 1, mx: 5}\n",
			[]string{`3:20: t.doc.age: ^int: unknown argument "mx" (known: min, max)`},
		},
		{
			"format verbs and args disagree",
			"{^format: {pattern: 'e-%d-%s', args: [1]}}",
			[]string{"1:21: t: ^format: pattern has 2 verbs but args has 1 values"},
		},
		{
			"missing argument",
			"{^int: {min: 1}}",
			[]string{"1:2: t: ^int: missing argument max"},
		},
		{
			"argument of a generator without arguments",
			"{^name: {first: x}}",
			[]string{`1:10: t: ^name: unknown argument "first" (this generator takes none)`},
		},
		{
			"min > max",
			"doc:\n  age: {^int: {min: 9, max: 1}}\n",
			[]string{"2:21: t.doc.age: ^int: min must be <= max"},
		},
		{
			"float min > max",
			"{^float: {min: 2.5, max: 1}}",
			[]string{"1:16: t: ^float: min must be <= max"},
		},
		{
			"weights length mismatch",
			"pick:\n  ^choice:\n    values: [a, b]\n    weights: [1, 2, 3]\n",
			[]string{"4:14: t.pick: ^choice: weights has 3 entries but values has 2"},
		},
		{
			"negative weight",
			"{^choice: {values: [a, b], weights: [1, -2]}}",
			[]string{`1:41: t: ^choice: weights[1] must be a finite number >= 0, got "-2"`},
		},
		{
			"zero weights",
			"{^choice: {values: [a, b], weights: [0, 0]}}",
			[]string{"1:37: t: ^choice: weights must have a finite sum > 0"},
		},
		{
			"generator with siblings",
			"doc: {^int: {min: 1, max: 2}, other: 1}\n",
			[]string{"1:7: t.doc: ^int: a generator must be the only key in its mapping"},
		},
		{
			"error in a nested template",
			"{^choice: {values: [1, {^int: {min: 2, max: 1}}]}}",
			[]string{"1:37: t.^choice.values[1]: ^int: min must be <= max"},
		},
		{
			"error in array items",
			"{^array: {length: 2, of: {x: {^bool: {p: 2}}}}}",
			[]string{"1:42: t.^array.of.x: ^bool: p must be >= 0 and <= 1, got 2"},
		},
		{
			"unknown var",
			"{a: {^var: nope}}",
			[]string{`1:12: t.a: ^var: unknown variable "nope" (known: k, v)`},
		},
		{
			"var with arguments",
			"{^var: {name: v}}",
			[]string{"1:8: t: ^var: must be the name of a variable, got a mapping"},
		},
		{
			"not an integer",
			"{^int: {min: one, max: 2.5}}",
			[]string{
				`1:14: t: ^int: min must be an integer, got "one"`,
				`1:24: t: ^int: max must be an integer, got "2.5"`,
			},
		},
		{
			"arguments not a mapping",
			"{^int: [1, 2]}",
			[]string{`1:8: t: ^int: arguments must be a mapping (known: min, max), got a sequence`},
		},
		{
			"shorthand out of range",
			"{^words: 0}",
			[]string{`1:10: t: ^words: count must be between 1 and 10000, got 0`},
		},
		{
			"bad date",
			"{^date: {from: yesterday, to: 2020-01-01}}",
			[]string{`1:16: t: ^date: from must be a date such as "2024-01-31T12:00:00Z" or "2024-01-31", got "yesterday"`},
		},
		{
			"empty date range",
			"{^date: {from: 2020-01-01, to: 2020-01-01}}",
			[]string{`1:16: t: ^date: from must be before to`},
		},
		{
			"zipf exponent",
			"{^zipf: {max: 10, s: 1}}",
			[]string{`1:22: t: ^zipf: s must be > 1, got 1`},
		},
		{
			"pool size",
			"{^pool: {size: 0, of: {^name: {}}}}",
			[]string{`1:16: t: ^pool: size must be between 1 and 1000000, got 0`},
		},
		{
			"pool too large",
			"{^pool: {size: 1000000, of: {^array: {length: 100, of: {^int: {min: 0, max: 1}}}}}}",
			[]string{`1:16: t: ^pool: size × the values of one item may reach 1.01e+08, more than the limit of 16777216`},
		},
		{
			"array length not an integer",
			"{^array: {length: x, of: 1}}",
			[]string{`1:19: t: ^array: length must be an integer or a generator of integers, got "x"`},
		},
		{
			"array length may be negative",
			"{^array: {length: {^int: {min: -1, max: 3}}, of: 1}}",
			[]string{`1:19: t: ^array: length may be negative (-1)`},
		},
		{
			"array too long",
			"{^array: {length: 2000000, of: 1}}",
			[]string{`1:19: t: ^array: length may be 2000000, more than the limit of 1000000`},
		},
		{
			"value too large",
			"{^array: {length: 1000000, of: {^array: {length: 10, of: 1}}}}",
			[]string{`1:1: t: may generate up to 1.1e+07 values, more than the limit of 4194304 ` +
				`(a BSON document is at most 16 MiB); lower array lengths or string sizes`},
		},
		{
			"duplicate key",
			"{a: 1, b: 2, a: 3}",
			[]string{`1:14: t: duplicate key "a" (first at line 1)`},
		},
		{
			"anchor inside itself",
			"&x {a: *x}",
			[]string{"1:1: t.a: YAML anchor &x is used inside itself"},
		},
		{
			"merge of itself",
			"&m {a: 1, <<: [*m, *m]}",
			[]string{"1:1: t: merge key (<<) includes the mapping that contains it"},
		},
		{
			"merge of a scalar",
			"{a: 1, <<: x}",
			[]string{"1:12: t: merge key (<<) value must be a mapping or a sequence of mappings"},
		},
		{
			"unsupported tag",
			"{a: !custom 1}",
			[]string{"1:5: t.a: unsupported YAML tag !custom"},
		},
		{
			"integer overflow",
			"{a: 9223372036854775808}",
			[]string{`1:5: t.a: cannot parse "9223372036854775808" as a 64-bit integer`},
		},
		{
			"errors are sorted",
			"b: {^int: {min: 2, max: 1}}\na: {^bogus: 1}\n",
			[]string{
				"1:17: t.b: ^int: min must be <= max",
				"2:5: t.a: unknown generator ^bogus (known: ^array, ^bool, ^choice, ^date, ^email, " +
					"^exponential, ^field, ^fields, ^float, ^format, ^hotspot, ^int, ^key, ^keyname, ^latest, ^name, ^now, ^objectId, ^pool, ^sentence, ^seq, ^sequential, ^string, ^uniform, ^uuid, ^var, ^words, ^ycsbBytes, ^zipf, ^zipfian)",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			e := newEnv(t, 1, "{v: 1, k: 2}")

			tmpl, errs := e.Compile(parseYAML(t, tc.src), "t")
			if tmpl != nil {
				t.Errorf("Compile returned a template despite errors")
			}

			if got := errStrings(errs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tc.want)
			}

			for _, err := range errs {
				if pe := (*yamlpos.Error)(nil); !errors.As(err, &pe) {
					t.Errorf("%v is a %T, not a *yamlpos.Error", err, err)
				}
			}
		})
	}
}

func TestNewEnvErrors(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name string
		src  string
		want []string
	}{
		{
			"cycle",
			"a: {x: {^var: b}}\nb: [{^var: c}]\nc: {^var: a}\n",
			[]string{"3:11: vars.c: ^var: variable cycle a -> b -> c -> a"},
		},
		{
			"self reference",
			"a: {^var: a}\n",
			[]string{"1:11: vars.a: ^var: variable cycle a -> a"},
		},
		{
			"cycle through an anchor",
			"a: &x {^var: b}\nb: *x\n",
			[]string{"1:14: vars.b: ^var: variable cycle b -> b"},
		},
		{
			"unknown var",
			"a: {^var: b}\nc: 1\n",
			[]string{`1:11: vars.a: ^var: unknown variable "b" (known: a, c)`},
		},
		{
			"duplicate",
			"a: 1\na: 2\n",
			[]string{`2:1: vars: variable "a" is already defined at line 1`},
		},
		{
			"not a mapping",
			"[a, b]",
			[]string{`1:1: vars: must be a mapping of variable names to templates, got a sequence`},
		},
		{
			"errors in templates, sorted",
			"a: {^int: {min: 3, max: 1}}\nb: {^var: a, x: 1}\n",
			[]string{
				"1:17: vars.a: ^int: min must be <= max",
				"2:5: vars.b: ^var: a generator must be the only key in its mapping",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			e, errs := NewEnv(1, parseYAML(t, tc.src), "vars")
			if e != nil {
				t.Errorf("NewEnv returned an Env despite errors")
			}

			if got := errStrings(errs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestNewEnvWithoutVars(t *testing.T) {
	t.Parallel()

	for _, src := range []string{"", "~", "{}"} {
		n := parseYAML(t, src)
		if _, errs := NewEnv(1, n, "vars"); errs != nil {
			t.Errorf("%q: %v", src, errs)
		}
	}

	if _, errs := NewEnv(1, nil, "vars"); errs != nil {
		t.Errorf("nil: %v", errs)
	}

	e := newEnv(t, 1, "")
	if _, errs := e.Compile(parseYAML(t, "{^var: x}"), "t"); len(errs) != 1 ||
		errs[0].Error() != `1:8: t: ^var: unknown variable "x" (no variables are defined)` {
		t.Errorf("got %v", errs)
	}
}
