package analysis

import (
	"encoding/json"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/threshold"
)

// PerDocFigure is the run.compare_by of the mean latency per returned
// document (workload.PerDocFigure; analysis reads results files and does
// not import the workload package).
const PerDocFigure = "per_doc"

// DecodeFigure is the run.compare_by of the client's decode time per
// returned document (workload.DecodeFigure).
const DecodeFigure = "decode"

// StudyFigure is the figure the results' workload asks about, from the
// run section of the workload recorded in the results: the operation (or
// iteration) of run.compare_on, else the first; the metric of
// run.compare_by (p50 by default, or the latency per returned document);
// with run.compare_cost, each line's cost over the best. named reports
// whether the workload named its metric (compare_by or compare_cost),
// which a single run needs to rank its sequences' operations.
func StudyFigure(res *result.Result) (fig Figure, named bool) {
	fig = DefaultFigure
	if res == nil {
		return fig, false
	}

	var spec struct {
		Run struct {
			CompareOn   string `json:"compare_on"`
			CompareBy   string `json:"compare_by"`
			CompareCost bool   `json:"compare_cost"`
			MinEffect   string `json:"min_effect"`
			Reference   string `json:"reference"`
		} `json:"run"`
	}

	// The spec is the workload itself in-process and generic JSON when
	// read from a file: JSON reads both. A spec that does not decode names
	// nothing.
	if b, err := json.Marshal(res.Workload.Spec); err == nil {
		_ = json.Unmarshal(b, &spec)
	}

	fig.Operation = spec.Run.CompareOn
	if fig.Operation == "" {
		fig.Operation = res.Workload.CompareOn
	}

	fig.Cost = spec.Run.CompareCost
	fig.Judging = JudgingOfSpec(res.Workload.Spec)

	switch by := spec.Run.CompareBy; by {
	case "":
	case PerDocFigure:
		fig.PerDoc = true
	case DecodeFigure:
		fig.PerDoc, fig.Decode = true, true
	default:
		if m, err := threshold.ParseMetric(by); err == nil { // validated with the workload
			fig.Metric = m
		}
	}

	return fig, spec.Run.CompareBy != "" || spec.Run.CompareCost
}

// Blocks are the comparison blocks that end the results, the one list the
// terminal, Markdown and HTML report render: for a matrix, its variants
// and targets ranked (MatrixBlock); for a single run, its growth verdict
// (GrowthBlock) and, when the workload names its figure,
// the operations of each phase that runs a sequence (runBlock). With
// run.compare_operations, the operations of every measured phase are
// ranked too: per trial in a matrix (OperationsBlock), per interval in a
// single run. Blocks with nothing to compare are left out.
func Blocks(res *result.Result) []Block {
	if res == nil {
		return nil
	}

	fig, named := StudyFigure(res)
	alternatives := compareOperations(res)

	var all []Block

	if res.Matrix != nil {
		all = append(all, MatrixBlock(res.Matrix, fig))

		if alternatives {
			all = append(all, OperationsBlock(res.Matrix, fig))
		}
	} else {
		all = append(all, GrowthBlock(res, fig))

		if named || alternatives {
			all = append(all, runBlock(res, fig, alternatives))
		}
	}

	var out []Block

	for _, b := range all {
		if len(b.Groups) > 0 {
			out = append(out, b)
		}
	}

	return out
}

// compareOperations reports whether the results' workload sets
// run.compare_operations: the operations of each measured phase are
// alternatives to rank, whether the phase runs them as a sequence or as a
// weighted mix.
func compareOperations(res *result.Result) bool {
	var spec struct {
		Run struct {
			CompareOperations bool `json:"compare_operations"`
		} `json:"run"`
	}

	if b, err := json.Marshal(res.Workload.Spec); err == nil {
		_ = json.Unmarshal(b, &spec)
	}

	return spec.Run.CompareOperations
}
