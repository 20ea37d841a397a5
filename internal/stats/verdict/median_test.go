package verdict

import (
	"math"
	"slices"
	"testing"
)

func TestMedian(t *testing.T) {
	t.Parallel()

	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("median of nothing = %v, want NaN", got)
	}

	for _, tt := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := append([]float64(nil), tt.xs...)
		if got := Median(tt.xs); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.xs, got, tt.want)
		}

		if !slices.Equal(in, tt.xs) {
			t.Errorf("median reordered its argument: %v, was %v", tt.xs, in)
		}
	}
}
