package runner

import (
	"math"
	"testing"

	"github.com/mongobench/mongobench/internal/datagen"
)

func TestMixFollowsWeights(t *testing.T) {
	t.Parallel()

	env, errs := datagen.NewEnv(1, nil, "vars")
	if errs != nil {
		t.Fatal(errs)
	}

	b := &bound{names: []string{"a", "b", "c"}, index: map[string]int{"a": 0, "b": 1, "c": 2}}
	m := newMix(b, []string{"c", "a", "b"}, nil, map[string]float64{"a": 1, "b": 3, "c": 6})
	s := env.NewScope(0)

	const draws = 100_000

	counts := make([]int, 3)
	buf := make([]int, 0, 1)

	for range draws {
		for _, i := range m.pick(s, buf[:0]) {
			counts[i]++
		}
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
	b := &bound{names: []string{"a", "b", "c"}, index: map[string]int{"a": 0, "b": 1, "c": 2}}

	only := newMix(b, []string{"b"}, nil, map[string]float64{"a": 1, "b": 1, "c": 1})
	for range 100 {
		if got := only.pick(s, nil); len(got) != 1 || got[0] != 1 {
			t.Fatalf("a mix of only b picked %v", got)
		}
	}

	seq := newMix(b, nil, []string{"c", "a", "c"}, nil)
	if got := seq.pick(s, nil); len(got) != 3 || got[0] != 2 || got[1] != 0 || got[2] != 2 {
		t.Errorf("sequence = %v, want [2 0 2]", got)
	}
}
