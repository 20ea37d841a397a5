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

// TestBytes checks the size format: bytes as an integer, larger sizes in
// the largest binary unit below them, a whole number without decimals.
func TestBytes(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1 KiB"},
		{1536, "1.5 KiB"},
		{300_000, "293.0 KiB"}, // 292.97: one decimal, though it rounds to a whole
		{64 << 20, "64 MiB"},
		{1<<30 + 1<<29, "1.5 GiB"},
		{5 << 40, "5 TiB"},
		{3 << 60, "3 EiB"},
		{-2048, "-2 KiB"},
	} {
		if got := Bytes(tc.n); got != tc.want {
			t.Errorf("Bytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
