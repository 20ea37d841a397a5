package datagen

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	"unicode"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// draws is how many values the range tests generate per template.
const draws = 2000

func TestGeneratorRanges(t *testing.T) {
	t.Parallel()

	from := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)

	for _, tc := range []struct {
		name  string
		src   string
		check func(v any) error
	}{
		{"int", "{^int: {min: -3, max: 3}}", intIn(-3, 3)},
		{"int full range", "{^int: {min: -9223372036854775808, max: 9223372036854775807}}", intIn(math.MinInt64, math.MaxInt64)},
		{"float", "{^float: {min: 1.5, max: 2.5}}", func(v any) error {
			if f, ok := v.(float64); !ok || f < 1.5 || f >= 2.5 {
				return fmt.Errorf("want float64 in [1.5, 2.5)")
			}

			return nil
		}},
		{"bool", "{^bool: {p: 0.5}}", isType[bool]},
		{"bool never", "{^bool: {p: 0}}", equals(false)},
		{"bool always", "{^bool: 1}", equals(true)},
		{"zipf", "{^zipf: {min: 10, max: 20, s: 1.5}}", intIn(10, 20)},
		{"zipf default min", "{^zipf: {max: 5}}", intIn(0, 5)},
		{"hotspot", "{^hotspot: {min: 100, max: 199}}", intIn(100, 199)},
		{"hotspot all hot", "{^hotspot: {min: 0, max: 9, hot_fraction: 1}}", intIn(0, 9)},
		{"hotspot full range", "{^hotspot: {min: -9223372036854775808, max: 9223372036854775807}}", isType[int64]},
		{"choice", "{^choice: {values: [a, {^int: {min: 1, max: 2}}]}}", func(v any) error {
			if v == "a" || v == int64(1) || v == int64(2) {
				return nil
			}

			return fmt.Errorf("want a, 1 or 2")
		}},
		{"choice with zero weight", "{^choice: {values: [a, b, c], weights: [0, 1, 0]}}", equals("b")},
		{"pool", "{^pool: {size: 3, of: {^int: {min: 0, max: 1000000}}}}", intIn(0, 1000000)},
		{"array", "{^array: {length: 3, of: {^int: {min: 0, max: 9}}}}", func(v any) error {
			a, ok := v.(bson.A)
			if !ok || len(a) != 3 {
				return fmt.Errorf("want bson.A of length 3")
			}

			for _, x := range a {
				if err := intIn(0, 9)(x); err != nil {
					return err
				}
			}

			return nil
		}},
		{"array of generated length", "{^array: {length: {^int: {min: 0, max: 4}}, of: x}}", func(v any) error {
			if a, ok := v.(bson.A); !ok || len(a) > 4 {
				return fmt.Errorf("want bson.A of length <= 4")
			}

			return nil
		}},
		{"words", "{^words: {count: 4}}", wordCount(4)},
		{"words shorthand", "{^words: 2}", wordCount(2)},
		{"sentence", "{^sentence: {words: 5}}", func(v any) error {
			s, _ := v.(string)
			if !strings.HasSuffix(s, ".") || !unicode.IsUpper([]rune(s)[0]) {
				return fmt.Errorf("want a capitalized sentence ending with a full stop")
			}

			return wordCount(5)(s)
		}},
		{"sentence shorthand", "{^sentence: 1}", wordCount(1)},
		{"string", "{^string: {length: 33}}", func(v any) error {
			s, _ := v.(string)
			if len(s) != 33 || strings.Trim(s, alnum) != "" {
				return fmt.Errorf("want 33 letters and digits")
			}

			return nil
		}},
		{"empty string", "{^string: 0}", equals("")},
		{"name", "{^name: {}}", func(v any) error {
			if s, _ := v.(string); len(strings.Fields(s)) < 2 {
				return fmt.Errorf("want a first and a last name")
			}

			return nil
		}},
		{"email", "{^email: }", func(v any) error {
			if s, _ := v.(string); !strings.Contains(s, "@") {
				return fmt.Errorf("want an e-mail address")
			}

			return nil
		}},
		{"uuid", "{^uuid: {}}", func(v any) error {
			if s, _ := v.(string); len(s) != 36 || strings.Count(s, "-") != 4 {
				return fmt.Errorf("want a UUID string")
			}

			return nil
		}},
		{"date", `{^date: {from: "2020-01-01T00:00:00Z", to: 2020-01-02}}`, func(v any) error {
			d, ok := v.(time.Time)
			if !ok || d.Before(from) || !d.Before(to) || d.Location() != time.UTC || d.Nanosecond()%1e6 != 0 {
				return fmt.Errorf("want a UTC time.Time in [%v, %v) with millisecond precision", from, to)
			}

			return nil
		}},
		{
			"date literal", `{^date: "2024-03-04T05:06:07.123456+01:00"}`,
			equals(time.Date(2024, 3, 4, 4, 6, 7, 123e6, time.UTC)),
		},
		{"now", "{^now: {}}", func(v any) error {
			d, ok := v.(time.Time)
			if !ok || time.Since(d) > time.Minute || d.Nanosecond()%1e6 != 0 {
				return fmt.Errorf("want the current time with millisecond precision")
			}

			return nil
		}},
		{"objectId", "{^objectId: {}}", isType[bson.ObjectID]},
		{"seq", "{^seq: {start: -5, step: -2}}", func(v any) error {
			if i, ok := v.(int64); !ok || i > -5 || i%2 == 0 {
				return fmt.Errorf("want -5, -7, ...")
			}

			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			e := newEnv(t, 42, "")
			tmpl := compileYAML(t, e, tc.src)
			s := e.NewScope(3)

			for range draws {
				v := tmpl.Value(s)
				if err := tc.check(v); err != nil {
					t.Fatalf("got %#v: %v", v, err)
				}
			}
		})
	}
}

func intIn(lo, hi int64) func(any) error {
	return func(v any) error {
		if i, ok := v.(int64); !ok || i < lo || i > hi {
			return fmt.Errorf("want int64 in [%d, %d]", lo, hi)
		}

		return nil
	}
}

func isType[T any](v any) error {
	if _, ok := v.(T); !ok {
		return fmt.Errorf("want %T", *new(T))
	}

	return nil
}

func equals(want any) func(any) error {
	return func(v any) error {
		if v != want {
			return fmt.Errorf("want %#v", want)
		}

		return nil
	}
}

func wordCount(n int) func(any) error {
	return func(v any) error {
		if s, ok := v.(string); !ok || len(strings.Fields(s)) != n {
			return fmt.Errorf("want %d words", n)
		}

		return nil
	}
}

// counts draws n values of template src and counts them.
func counts(t *testing.T, src string, n int) map[any]int {
	t.Helper()

	e := newEnv(t, 7, "")
	tmpl := compileYAML(t, e, src)
	s := e.NewScope(0)
	c := make(map[any]int)

	for range n {
		c[tmpl.Value(s)]++
	}

	return c
}

func TestDistributions(t *testing.T) {
	t.Parallel()

	const n = 10_000

	for _, tc := range []struct {
		name   string
		src    string
		hit    func(v any) bool
		lo, hi float64 // accepted fraction of hits
	}{
		{"choice 9:1", "{^choice: {values: [a, b], weights: [9, 1]}}", eq("a"), 0.85, 0.95},
		{"choice equal", "{^choice: {values: [a, b, c, d]}}", eq("a"), 0.20, 0.30},
		{"choice fractional weights", "{^choice: {values: [a, b], weights: [0.2, 0.6]}}", eq("a"), 0.20, 0.30},
		{"bool", "{^bool: {p: 0.3}}", eq(true), 0.25, 0.35},
		{
			"hotspot", "{^hotspot: {min: 0, max: 999, hot_fraction: 0.1, hot_probability: 0.9}}",
			func(v any) bool { return v.(int64) < 100 }, 0.85, 0.95,
		},
		{
			"hotspot cold part", "{^hotspot: {min: 0, max: 999, hot_fraction: 0.1, hot_probability: 0.9}}",
			func(v any) bool { return v.(int64) >= 100 }, 0.05, 0.15,
		},
		{"zipf favors min", "{^zipf: {min: 0, max: 999, s: 2}}", eq(int64(0)), 0.5, 0.7},
		{"int uniform", "{^int: {min: 1, max: 4}}", eq(int64(4)), 0.20, 0.30},
		{"float uniform", "{^float: {min: 0, max: 10}}", func(v any) bool { return v.(float64) < 5 }, 0.45, 0.55},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			hits := 0
			for v, c := range counts(t, tc.src, n) {
				if tc.hit(v) {
					hits += c
				}
			}

			if f := float64(hits) / n; f < tc.lo || f > tc.hi {
				t.Errorf("fraction of hits %.3f, want in [%.2f, %.2f]", f, tc.lo, tc.hi)
			}
		})
	}
}

func eq(want any) func(any) bool { return func(v any) bool { return v == want } }

// TestZipfOrder checks that smaller values are more frequent.
func TestZipfOrder(t *testing.T) {
	t.Parallel()

	c := counts(t, "{^zipf: {min: 10, max: 999, s: 1.1}}", 10_000)
	for v := int64(10); v < 13; v++ {
		if c[v] <= c[v+1] {
			t.Errorf("count of %d is %d, not more than the count of %d (%d)", v, c[v], v+1, c[v+1])
		}
	}
}

func BenchmarkValue(b *testing.B) {
	e := newEnv(b, 1, "")
	tmpl := compileYAML(b, e, `
_id: {^seq: {}}
user: {^pool: {size: 1000, of: {^name: {}}}}
age: {^int: {min: 18, max: 90}}
score: {^float: {min: 0, max: 100}}
status: {^choice: {values: [active, idle, banned], weights: [8, 3, 1]}}
created: {^date: {from: 2020-01-01, to: 2025-01-01}}
tags: {^array: {length: {^int: {min: 0, max: 3}}, of: {^zipf: {max: 99}}}}
meta: {source: bench, version: 2}
`)
	s := e.NewScope(0)

	b.ReportAllocs()

	for b.Loop() {
		s.NextIteration()
		_ = tmpl.Value(s)
	}
}
