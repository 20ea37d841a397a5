package units

import "testing"

func TestMicros(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		us   float64
		want string
	}{
		{0, "0µs"},
		{812.4, "812µs"},
		{999.4, "999µs"},
		{1000, "1.00ms"},
		{12345, "12.35ms"},
		{999_999, "1000.00ms"},
		{1e6, "1.00s"},
		{2_500_000, "2.50s"},
	} {
		if got := Micros(tc.us); got != tc.want {
			t.Errorf("Micros(%v) = %q, want %q", tc.us, got, tc.want)
		}
	}
}
