package runner

import (
	"math"
	"testing"

	"github.com/mongobench/mongobench/internal/datagen"
	"github.com/mongobench/mongobench/internal/op"
	"github.com/mongobench/mongobench/internal/workload"
)

func TestPickerFollowsWeights(t *testing.T) {
	t.Parallel()

	env, errs := datagen.NewEnv(1, nil, "vars")
	if errs != nil {
		t.Fatal(errs)
	}

	ops := []*op.Operation{
		{Spec: &workload.Operation{Name: "a"}, Weight: 1},
		{Spec: &workload.Operation{Name: "b"}, Weight: 3},
		{Spec: &workload.Operation{Name: "c"}, Weight: 6},
	}

	next := picker(RunConfig{Ops: ops})
	s := env.NewScope(0)

	const draws = 100_000

	counts := make([]int, len(ops))
	buf := make([]int, 0, 1)

	for range draws {
		for _, i := range next(s, buf[:0]) {
			counts[i]++
		}
	}

	for i, want := range []float64{0.1, 0.3, 0.6} {
		got := float64(counts[i]) / draws
		if math.Abs(got-want) > 0.01 {
			t.Errorf("operation %s: share %.3f, want %.2f±0.01", ops[i].Name(), got, want)
		}
	}
}

func TestPickerSequence(t *testing.T) {
	t.Parallel()

	next := picker(RunConfig{Sequence: []int{2, 0, 2}})

	got := next(nil, nil)
	if len(got) != 3 || got[0] != 2 || got[1] != 0 || got[2] != 2 {
		t.Errorf("sequence = %v, want [2 0 2]", got)
	}
}
