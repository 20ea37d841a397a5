package result

import (
	"encoding/json"
	"errors"

	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// Matrix holds a comparison run: every variant on every target, in
// interleaved trial rounds, with the verdicts computed from the trials.
type Matrix struct {
	// Targets are the servers, in the order they were opened.
	Targets []MatrixTarget `json:"targets"`
	// Variants are the compared variants' names, in workload order.
	Variants []string `json:"variants"`
	// Rounds is the number of trial rounds: each runs every variant on
	// every target once.
	Rounds int `json:"rounds"`
	// Trials are the individual runs in the order they ran (rounds
	// interleave targets and variants, alternating direction), each a
	// complete result (its workload spec is the variant's).
	Trials []Trial `json:"trials"`
	// Verdicts compare the variants on each target, per operation and
	// metric.
	Verdicts []MatrixVerdict `json:"verdicts"`
}

// MatrixTarget describes one target of a matrix.
type MatrixTarget struct {
	Name          string   `json:"name"`
	Kind          string   `json:"kind"`
	URI           string   `json:"uri,omitempty"`
	ServerVersion string   `json:"server_version,omitempty"`
	Backend       string   `json:"backend,omitempty"`
	Notes         []string `json:"notes,omitempty"`
	// Error is set when the target could not be launched or used.
	Error string `json:"error,omitempty"`
}

// Trial is one run of one variant on one target.
type Trial struct {
	Target  string  `json:"target"`
	Variant string  `json:"variant"`
	Round   int     `json:"round"`
	Result  *Result `json:"result"`
}

// MatrixVerdict compares the variants of one target on one operation's
// metric ("throughput", "p50", "p99"), or, when Target is CrossTarget, the
// targets of a matrix with one variant.
//
// In the file the cells are named for what they compare: "variants", each
// with its "variant", or for a CrossTarget verdict "targets", each with its
// "target" (see MarshalJSON). In Go both are Variants and
// CellVerdict.Variant, the compared group's name.
type MatrixVerdict struct {
	Target    string        `json:"target"`
	Operation string        `json:"operation"`
	Metric    string        `json:"metric"`
	Variants  []CellVerdict `json:"variants"`
}

// CrossTarget is the Target of verdicts that compare targets rather than
// variants: a matrix with one variant on several targets asks which target
// is faster.
const CrossTarget = "*"

// ComparesTargets reports whether the verdict's cells are targets rather
// than variants.
func (mv *MatrixVerdict) ComparesTargets() bool {
	return mv.Target == CrossTarget
}

// targetCell is the file form of a cell that compares a target: the
// CellVerdict's fields, its name written as "target"; the shadowing
// Variant field (never set) keeps the cell's "variant" out.
type targetCell struct {
	Target string `json:"target"`
	CellVerdict
	Variant json.RawMessage `json:"variant,omitempty"`
}

// matrixVerdictFile is the file form of a MatrixVerdict that compares
// variants; targetsVerdictFile of one that compares targets; verdictFile
// reads either.
type (
	matrixVerdictFile struct {
		Target    string        `json:"target"`
		Operation string        `json:"operation"`
		Metric    string        `json:"metric"`
		Variants  []CellVerdict `json:"variants"`
	}
	targetsVerdictFile struct {
		Target    string       `json:"target"`
		Operation string       `json:"operation"`
		Metric    string       `json:"metric"`
		Targets   []targetCell `json:"targets"`
	}
	verdictFile struct {
		Target    string        `json:"target"`
		Operation string        `json:"operation"`
		Metric    string        `json:"metric"`
		Variants  []CellVerdict `json:"variants"`
		Targets   []targetCell  `json:"targets"`
	}
)

// MarshalJSON writes the verdict with its cells named for what they
// compare: a CrossTarget verdict's cells under "targets", each named by
// "target", so that a reader is not told that targets are variants.
func (mv MatrixVerdict) MarshalJSON() ([]byte, error) {
	if !mv.ComparesTargets() {
		return json.Marshal(matrixVerdictFile(mv))
	}

	out := targetsVerdictFile{Target: mv.Target, Operation: mv.Operation, Metric: mv.Metric, Targets: make([]targetCell, len(mv.Variants))}
	for i, cv := range mv.Variants {
		out.Targets[i] = targetCell{Target: cv.Variant, CellVerdict: cv}
		out.Targets[i].CellVerdict.Variant = ""
	}

	return json.Marshal(out)
}

// UnmarshalJSON reads both forms: cells under "targets" (a CrossTarget
// verdict as written now) and under "variants" (every other verdict, and
// CrossTarget verdicts of files written before the targets were named so).
func (mv *MatrixVerdict) UnmarshalJSON(data []byte) error {
	var in verdictFile
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}

	if len(in.Variants) > 0 && len(in.Targets) > 0 {
		return errors.New("a verdict holds both variants and targets")
	}

	*mv = MatrixVerdict{Target: in.Target, Operation: in.Operation, Metric: in.Metric, Variants: in.Variants}
	for _, tc := range in.Targets {
		cv := tc.CellVerdict
		cv.Variant = tc.Target
		mv.Variants = append(mv.Variants, cv)
	}

	return nil
}

// CellVerdict is one variant's standing: the median over trials with its
// 95% confidence interval, and how it compares with the best variant: the
// median of the per-round ratios with its distribution-free 95% interval,
// and the Kind that interval supports (see package verdict).
type CellVerdict struct {
	Variant string  `json:"variant"`
	N       int     `json:"n"`
	Median  float64 `json:"median"`
	Lo      float64 `json:"lo"`
	Hi      float64 `json:"hi"`
	Best    bool    `json:"best,omitempty"`
	Ratio   float64 `json:"ratio"`
	RatioLo float64 `json:"ratio_lo"`
	RatioHi float64 `json:"ratio_hi"`
	P       float64 `json:"p"`
	// Kind is "difference", "no-difference", "inconclusive" or
	// "reference" (the best variant, which the others are compared with).
	Kind verdict.Kind `json:"kind"`
	Text string       `json:"text"`
}
