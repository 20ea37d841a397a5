package schedule

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"time"
)

func TestConstantDue(t *testing.T) {
	t.Parallel()

	type due struct {
		n    uint64
		want time.Duration
		ok   bool
	}

	for _, tc := range []struct {
		name string
		c    Constant
		due  []due
	}{
		{
			name: "integer rate",
			c:    Constant{Rate: 2000},
			due:  []due{{0, 0, true}, {1, 500 * time.Microsecond, true}, {100_000, 50 * time.Second, true}},
		},
		{
			name: "rate below one",
			c:    Constant{Rate: 0.5},
			due:  []due{{0, 0, true}, {1, 2 * time.Second, true}, {3, 6 * time.Second, true}},
		},
		{
			name: "period not a whole number of nanoseconds rounds to nearest",
			c:    Constant{Rate: 3},
			due:  []due{{1, 333_333_333, true}, {2, 666_666_667, true}, {3, time.Second, true}},
		},
		{
			name: "fractional rate",
			c:    Constant{Rate: 2.5},
			due:  []due{{1, 400 * time.Millisecond, true}, {5, 2 * time.Second, true}},
		},
		{
			name: "duration ends the schedule before the operation due at it",
			c:    Constant{Rate: 10, Duration: time.Second},
			due:  []due{{9, 900 * time.Millisecond, true}, {10, 0, false}, {11, 0, false}},
		},
		{
			name: "zero rate has no operations",
			c:    Constant{},
			due:  []due{{0, 0, false}},
		},
		{
			name: "negative rate has no operations",
			c:    Constant{Rate: -1},
			due:  []due{{0, 0, false}},
		},
		{
			name: "NaN rate has no operations",
			c:    Constant{Rate: math.NaN()},
			due:  []due{{0, 0, false}},
		},
		{
			name: "infinite rate has no operations",
			c:    Constant{Rate: math.Inf(1)},
			due:  []due{{0, 0, false}},
		},
		{
			name: "offsets beyond time.Duration end the schedule",
			c:    Constant{Rate: 1},
			due:  []due{{9_223_372_036, 9_223_372_036 * time.Second, true}, {9_223_372_037, 0, false}, {math.MaxUint64, 0, false}},
		},
		{
			name: "fractional rate beyond time.Duration ends the schedule",
			c:    Constant{Rate: 0.5},
			due:  []due{{math.MaxUint64, 0, false}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			for _, d := range tc.due {
				got, ok := tc.c.Due(d.n)
				if got != d.want || ok != d.ok {
					t.Errorf("Due(%d) = %v, %v; want %v, %v", d.n, got, ok, d.want, d.ok)
				}
			}
		})
	}
}

// TestConstantDueExact checks due times far into a phase against exact
// rational arithmetic: integer rates are exact to the nanosecond at any n,
// and fractional ones stay within float64's relative precision of the
// offset (a nanosecond for offsets up to about 50 days) instead of growing
// with n, as they would if periods were added up.
func TestConstantDueExact(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name string
		rate float64
		ns   []uint64
	}{
		{name: "integer rate", rate: 7, ns: []uint64{1, 1e6, 1e9, 64_563_604_257}},
		{name: "high integer rate", rate: 1_000_003, ns: []uint64{1, 1e9, 1e15, 9_223_399_706_116_007}},
		{name: "fractional rate", rate: 333.3, ns: []uint64{1, 1e6, 1e9, 987_654_321}},
		{name: "tiny rate", rate: 0.001, ns: []uint64{1, 12_345, 1e6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			c := Constant{Rate: tc.rate}
			rate := new(big.Rat).SetFloat64(tc.rate)

			for _, n := range tc.ns {
				got, ok := c.Due(n)
				if !ok {
					t.Fatalf("Due(%d): ok = false", n)
				}

				// want = n·10⁹/rate nanoseconds, exactly.
				want := new(big.Rat).SetInt64(int64(n))
				want.Mul(want, big.NewRat(int64(time.Second), 1))
				want.Quo(want, rate)

				wantF, _ := want.Float64()
				tolerance := new(big.Rat).SetFloat64(max(1, wantF*0x1p-52))

				diff := new(big.Rat).Sub(new(big.Rat).SetInt64(int64(got)), want)
				if diff.Abs(diff).Cmp(tolerance) > 0 {
					t.Errorf("Due(%d) = %d ns; exact value %s ns", n, got, want.FloatString(3))
				}
			}
		})
	}
}

func TestConstantValidate(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name string
		c    Constant
		want []string // substrings of the errors, in order
	}{
		{name: "valid", c: Constant{Rate: 100, Duration: time.Minute}},
		{name: "valid unbounded", c: Constant{Rate: 0.1}},
		{name: "zero rate", c: Constant{}, want: []string{"rate:"}},
		{name: "negative rate", c: Constant{Rate: -5}, want: []string{"rate:"}},
		{name: "NaN rate", c: Constant{Rate: math.NaN()}, want: []string{"rate:"}},
		{name: "infinite rate", c: Constant{Rate: math.Inf(1)}, want: []string{"rate:"}},
		{name: "negative duration", c: Constant{Rate: 1, Duration: -time.Second}, want: []string{"duration:"}},
		{name: "everything wrong", c: Constant{Rate: -1, Duration: -1}, want: []string{"rate:", "duration:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkErrors(t, tc.c.Validate(), tc.want)
		})
	}
}

// checkErrors asserts that errs match want, one substring per error.
func checkErrors(t *testing.T, errs []error, want []string) {
	t.Helper()

	if len(errs) != len(want) {
		t.Fatalf("got %d errors %q; want %d matching %q", len(errs), errs, len(want), want)
	}

	for i, err := range errs {
		if !strings.Contains(err.Error(), want[i]) {
			t.Errorf("error %d = %q; want it to contain %q", i, err, want[i])
		}
	}
}
