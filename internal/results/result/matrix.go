package result

import "github.com/mongobench/mongobench/internal/stats/verdict"

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
// metric ("throughput", "p50", "p99").
type MatrixVerdict struct {
	Target    string        `json:"target"`
	Operation string        `json:"operation"`
	Metric    string        `json:"metric"`
	Variants  []CellVerdict `json:"variants"`
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
