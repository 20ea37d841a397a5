package runner

import (
	"math"
	"testing"

	"github.com/mongobench/mongobench/internal/spec/datagen"
)

// testBound is a bound of three operations a, b, c that are never run.
func testBound() *bound {
	b := &bound{index: map[string]int{}}
	for _, name := range []string{"a", "b", "c"} {
		b.add(name, &node{})
	}

	return b
}

func TestMixFollowsWeights(t *testing.T) {
	t.Parallel()

	env, errs := datagen.NewEnv(1, nil, "vars")
	if errs != nil {
		t.Fatal(errs)
	}

	b := testBound()
	m := newMix(b, []string{"c", "a", "b"}, nil, map[string]float64{"a": 1, "b": 3, "c": 6})
	s := env.NewScope(0)

	const draws = 100_000

	counts := make([]int, 3)

	for range draws {
		counts[m.pick(s).rec]++
	}

	for i, want := range []float64{0.1, 0.3, 0.6} {
		got := float64(counts[i]) / draws
		if math.Abs(got-want) > 0.01 {
			t.Errorf("operation %s: share %.3f, want %.2f±0.01", b.names[i], got, want)
		}
	}
}

func TestMixSubsetAndSequence(t *testing.T) {
	t.Parallel()

	env, _ := datagen.NewEnv(1, nil, "vars")
	s := env.NewScope(0)
	b := testBound()

	only := newMix(b, []string{"b"}, nil, map[string]float64{"a": 1, "b": 1, "c": 1})
	for range 100 {
		if got := only.pick(s); got.rec != 1 {
			t.Fatalf("a mix of only b picked %d", got.rec)
		}
	}

	// Without an iteration unit (growth blocks), a sequence is an
	// unmeasured group of its operations.
	seq := newMix(b, nil, []string{"c", "a", "c"}, nil).pick(s)
	if seq.rec != -1 || len(seq.steps) != 3 || seq.steps[0].rec != 2 || seq.steps[1].rec != 0 || seq.steps[2].rec != 2 {
		t.Errorf("sequence = %+v, want an unmeasured group of [2 0 2]", seq)
	}

	// With one, the sequence is the unit.
	b.addUnit("iteration", "iteration", b.group([]string{"c", "a", "c"}).steps)

	unit := newMix(b, nil, []string{"c", "a", "c"}, nil).pick(s)
	if unit.rec != 3 || len(unit.steps) != 3 || b.units[3].kind != "iteration" || len(b.units[3].steps) != 3 {
		t.Errorf("sequence = %+v, want the iteration unit (3) of [2 0 2]", unit)
	}
}
