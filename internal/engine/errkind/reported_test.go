package errkind

import "testing"

// TestReported checks the kinds of failures reported by other client
// stacks.
func TestReported(t *testing.T) {
	t.Parallel()

	code := func(n int) *int { return &n }

	for _, tc := range []struct {
		r    Reported
		want string
	}{
		{Reported{Code: code(11000), Message: "E11000 duplicate key"}, DuplicateKey},
		{Reported{Code: code(2), Message: "bad value"}, "server_2"},
		{Reported{Network: true, Message: "connection reset"}, Network},
		{Reported{Labels: []string{"NetworkError"}}, Network},
		{Reported{Timeout: true, Message: "operation timed out"}, Timeout},
		{Reported{Code: code(50), Timeout: true}, Timeout},
		{Reported{Message: "validation failed"}, Other},
	} {
		if got := Of(tc.r.Err()); got != tc.want {
			t.Errorf("%+v: kind %q, want %q", tc.r, got, tc.want)
		}
	}
}
