package bench

import "testing"

// TestRoundOrderIsBalanced checks that over each pair of rounds every cell
// sits at mirrored positions, so that its mean position is the same for
// all cells.
func TestRoundOrderIsBalanced(t *testing.T) {
	for _, size := range [][2]int{{2, 1}, {1, 3}, {2, 3}} {
		sum := map[trialCell]int{}

		for r := 1; r <= 4; r++ {
			order := roundOrder(size[0], size[1], r)
			if len(order) != size[0]*size[1] {
				t.Fatalf("%v round %d: %d cells", size, r, len(order))
			}

			for pos, c := range order {
				sum[c] += pos
			}
		}

		want := 2 * (size[0]*size[1] - 1) // two pairs of mirrored positions
		for c, s := range sum {
			if s != want {
				t.Errorf("%v: cell %v has position sum %d, want %d for all", size, c, s, want)
			}
		}
	}
}
