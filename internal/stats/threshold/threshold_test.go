package threshold

import (
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  Condition
		canon string
	}{
		{"p99 < 20ms", Condition{Metric{Percentile, 99}, Less, 20000}, "p99 < 20ms"},
		{"p99.9<100ms", Condition{Metric{Percentile, 99.9}, Less, 100000}, "p99.9 < 100ms"},
		{"p99.99 <= 1.5s", Condition{Metric{Percentile, 99.99}, LessEq, 1.5e6}, "p99.99 <= 1.5s"},
		{"P50 < 800us", Condition{Metric{Percentile, 50}, Less, 800}, "p50 < 800µs"},
		{"p50 < 800µs", Condition{Metric{Percentile, 50}, Less, 800}, "p50 < 800µs"},
		{"p100 < 2 s", Condition{Metric{Percentile, 100}, Less, 2e6}, "p100 < 2s"},
		{"mean >= 0.5ms", Condition{Metric{Kind: Mean}, GreaterEq, 500}, "mean >= 500µs"},
		{"max < 1s", Condition{Metric{Kind: Max}, Less, 1e6}, "max < 1s"},
		{"throughput > 500", Condition{Metric{Kind: Throughput}, Greater, 500}, "throughput > 500/s"},
		{"throughput >= 12.5/s", Condition{Metric{Kind: Throughput}, GreaterEq, 12.5}, "throughput >= 12.5/s"},
		{"error_rate < 0.1%", Condition{Metric{Kind: ErrorRate}, Less, 0.1}, "error_rate < 0.1%"},
		{"  error_rate <= 100 %  ", Condition{Metric{Kind: ErrorRate}, LessEq, 100}, "error_rate <= 100%"},
		{"mean < 12.345ms", Condition{Metric{Kind: Mean}, Less, 12345}, "mean < 12.345ms"},
		{"p99 < 0.1ms", Condition{Metric{Percentile, 99}, Less, 100}, "p99 < 100µs"},
		{"max < 1e3s", Condition{Metric{Kind: Max}, Less, 1e9}, "max < 1000s"},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}

		if got != tc.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
		}

		if got.String() != tc.canon {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got.String(), tc.canon)
		}
	}
}

func TestParseInvalid(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "want METRIC OP VALUE"},
		{"p99 20ms", "want METRIC OP VALUE"},
		{"p99 =< 20ms", "bad percentile"},
		{"p99 == 20ms", "want METRIC OP VALUE"},
		{"latency < 20ms", `unknown metric "latency"`},
		{"p0 < 20ms", "bad percentile"},
		{"p101 < 20ms", "bad percentile"},
		{"p < 20ms", "unknown metric"},
		{"p99 < 20", "needs a latency unit"},
		{"p99 < 20min", "needs a latency unit"},
		{"p99 < 20 ms ms", "bad number"},
		{"p99 < -1ms", "bad number"},
		{"p99 < ms", "bad number"},
		{"p99 < 1e400ms", "bad number"},
		{"p99 < 0x10ms", "bad number"},
		{"p99 < 1e303s", "too large"},
		{"throughput > 500ms", "bad number"},
		{"throughput > lots", "bad number"},
		{"error_rate < 0.1", "is a percentage"},
		{"error_rate < 101%", "above 100%"},
		{"p99 <", "want METRIC OP VALUE"},
	} {
		_, err := Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q) accepted", tc.in)
			continue
		}

		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q): %v, want it to say %q", tc.in, err, tc.want)
		}
	}
}

func TestComparatorHolds(t *testing.T) {
	for _, tc := range []struct {
		c       Comparator
		v, l    float64
		holds   bool
		comment string
	}{
		{Less, 1, 2, true, ""},
		{Less, 2, 2, false, "equal is not less"},
		{LessEq, 2, 2, true, ""},
		{Greater, 2, 2, false, ""},
		{GreaterEq, 2, 2, true, ""},
		{Greater, 3, 2, true, ""},
	} {
		if got := tc.c.Holds(tc.v, tc.l); got != tc.holds {
			t.Errorf("%v %s %v = %v, want %v %s", tc.v, tc.c, tc.l, got, tc.holds, tc.comment)
		}
	}

	nan := Condition{Metric: Metric{Kind: Mean}, Cmp: LessEq, Limit: 1}
	if nan.Holds(nanValue()) {
		t.Error("a value that could not be measured satisfied a condition")
	}
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		m    Metric
		v    float64
		want string
	}{
		{Metric{Percentile, 99}, 12345, "12.35ms"},
		{Metric{Percentile, 99}, 850, "850µs"},
		{Metric{Kind: Max}, 1_254_000, "1.25s"},
		{Metric{Kind: Throughput}, 312.43, "312.4/s"},
		{Metric{Kind: ErrorRate}, 0.0512, "0.0512%"},
		{Metric{Kind: ErrorRate}, nanValue(), "n/a"},
	} {
		if got := tc.m.Format(tc.v); got != tc.want {
			t.Errorf("%s.Format(%v) = %q, want %q", tc.m, tc.v, got, tc.want)
		}
	}

	for _, tc := range []struct {
		us   float64
		want string
	}{{12345, "12.3ms"}, {850, "850µs"}, {1.234, "1.23µs"}, {1_254_000, "1.25s"}, {20000, "20ms"}, {0, "0µs"}} {
		if got := FormatLatency(tc.us); got != tc.want {
			t.Errorf("FormatLatency(%v) = %q, want %q", tc.us, got, tc.want)
		}
	}
}

func TestParseChange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Change
	}{
		{"p99 +10%", Change{"", Metric{Percentile, 99}, true, 10}},
		{"get:p99.9 +10%", Change{"get", Metric{Percentile, 99.9}, true, 10}},
		{"find_by_id : mean +2.5%", Change{"find_by_id", Metric{Kind: Mean}, true, 2.5}},
		{"throughput -5%", Change{"", Metric{Kind: Throughput}, false, 5}},
		{"p50 +5% find_by_id", Change{"find_by_id", Metric{Percentile, 50}, true, 5}},
		{"error_rate +50%", Change{"", Metric{Kind: ErrorRate}, true, 50}},
		{"max +.5%", Change{"", Metric{Kind: Max}, true, 0.5}},
	} {
		got, err := ParseChange(tc.in)
		if err != nil {
			t.Errorf("ParseChange(%q): %v", tc.in, err)
			continue
		}

		if got != tc.want {
			t.Errorf("ParseChange(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}

	for _, in := range []string{"", "p99", "p99 10%", "p99 +10", "latency +10%", "p0 +1%", "a:p99 +1% b", "get:p99 ±10%"} {
		if c, err := ParseChange(in); err == nil {
			t.Errorf("ParseChange(%q) = %+v, want an error", in, c)
		}
	}
}
