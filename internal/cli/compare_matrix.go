package cli

import (
	"fmt"

	"github.com/mongobench/mongobench/internal/result"
)

// matrixCells returns what `mongobench compare` compares of a matrix
// results file (variants × targets in rounds): one entry per cell, a
// target and a variant, in the matrix's order of targets, then variants.
// A cell's samples are the intervals of its trials' main phases, round
// after round, so that intervals pair by index with another cell of the
// same design (same round, same interval). Cells without trials (a target
// that failed) are left out. label gives the i'th cell its column label.
func matrixCells(path string, res *result.Result, label func(i int) string) ([]*compareFile, error) {
	m := res.Matrix
	if err := res.CheckContents(); err != nil {
		return nil, fmt.Errorf("results file %s: %w", path, err)
	}

	var out []*compareFile

	for _, t := range m.Targets {
		for _, v := range m.Variants {
			cf := matrixCell(path, m, t.Name, v)
			if cf == nil {
				continue
			}

			cf.label = label(len(out))
			out = append(out, cf)
		}
	}

	if len(out) == 0 {
		return nil, fmt.Errorf("results file %s: no matrix cell has measured intervals", path)
	}

	return out, nil
}

// matrixCell gathers the trials of one target and variant, in round order,
// into a compareFile whose phase holds their main phases' intervals; nil
// when there are none.
func matrixCell(path string, m *result.Matrix, targetName, variant string) *compareFile {
	var (
		first *result.Result
		phase result.Phase
	)

	seen := map[string]bool{}

	for round := 1; round <= m.Rounds; round++ {
		for _, tr := range m.Trials {
			if tr.Target != targetName || tr.Variant != variant || tr.Round != round || tr.Result == nil {
				continue
			}

			main := tr.Result.MainPhase()
			if main == nil || len(main.Intervals) == 0 {
				continue
			}

			if first == nil {
				first = tr.Result
				phase.Name = main.Name
			}

			for _, o := range main.Operations {
				if !seen[o.Name] {
					seen[o.Name] = true
					phase.Operations = append(phase.Operations, result.Operation{Name: o.Name})
				}
			}

			phase.Intervals = append(phase.Intervals, main.Intervals...)
		}
	}

	if first == nil {
		return nil
	}

	return &compareFile{
		path:  fmt.Sprintf("%s [%s · %s]", path, targetName, variant),
		res:   first,
		phase: &phase,
	}
}
