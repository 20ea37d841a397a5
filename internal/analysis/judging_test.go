package analysis

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// specVariant and specPhase are the parts of a workload a results file
// records that judging reads, written as the spec is (JSON field names).
type specVariant struct {
	Name  string `json:"name"`
	Group string `json:"group,omitempty"`
}

type specPhase struct {
	Name    string `json:"name"`
	Verdict *bool  `json:"verdict,omitempty"`
}

type specCollection struct {
	Name    string           `json:"name"`
	Indexes []map[string]int `json:"indexes,omitempty"`
	Capped  bool             `json:"capped,omitempty"`
	Max     int64            `json:"max,omitempty"`
}

type testSpec struct {
	Variants    []specVariant    `json:"variants,omitempty"`
	Phases      []specPhase      `json:"phases,omitempty"`
	Collections []specCollection `json:"collections,omitempty"`
	Operations  []specOperation  `json:"operations,omitempty"`
}

// cleanupMatrix is the cleanup study's shape on one target over six
// rounds: deleting from an empty collection costs 100 µs, dropping and
// re-creating it 5 ms; with 100 documents present both cost about 30 ms
// (drop_recreate_100 1% above delete_many_100, a noise's width).
func cleanupMatrix() *result.Matrix {
	m := &result.Matrix{
		Targets:  []result.MatrixTarget{{Name: "sqlite"}},
		Variants: []string{"delete_many", "drop_recreate", "delete_many_100", "drop_recreate_100"},
		Rounds:   6,
	}
	noise := []float64{1.02, 0.97, 1.05, 0.99, 1.01, 0.96}
	swing := []float64{1.03, 0.96, 1.02, 0.98, 0.99, 1.04}

	for r := 1; r <= 6; r++ {
		m.Trials = append(m.Trials,
			trial("sqlite", "delete_many", r, 100*noise[r-1], 1000),
			trial("sqlite", "drop_recreate", r, 5000*noise[r-1]*swing[r-1], 200),
			trial("sqlite", "delete_many_100", r, 30000*noise[r-1], 30),
			trial("sqlite", "drop_recreate_100", r, 30000*noise[r-1]*swing[r-1], 30))
	}

	return m
}

var cleanupGroups = testSpec{Variants: []specVariant{
	{Name: "delete_many", Group: "empty"},
	{Name: "drop_recreate", Group: "empty"},
	{Name: "delete_many_100", Group: "fixtures"},
	{Name: "drop_recreate_100", Group: "fixtures"},
}}

// TestMatrixBlockComparesLikeWithLike: with comparison groups, the cleanup
// with 100 documents present is ranked against the other cleanup with 100
// documents, not against deleting from an empty collection (which would
// call it "300× slower"); the empty pair is ranked on its own.
func TestMatrixBlockComparesLikeWithLike(t *testing.T) {
	t.Parallel()

	fig := DefaultFigure
	fig.Judging = JudgingOfSpec(cleanupGroups)

	b := MatrixBlock(cleanupMatrix(), fig)
	if len(b.Groups) != 2 || b.Groups[0].Title != "variants on sqlite, group empty" || b.Groups[1].Title != "variants on sqlite, group fixtures" {
		t.Fatalf("groups %+v, want one per comparison group", b.Groups)
	}

	empty, fixtures := b.Groups[0].Lines, b.Groups[1].Lines
	if len(empty) != 2 || empty[0].Name != "delete_many" || empty[1].Name != "drop_recreate" || empty[1].Kind != verdict.Difference ||
		empty[1].RatioLo < 40 || empty[1].RatioHi > 60 {
		t.Errorf("empty group %+v, want drop_recreate about 50× delete_many", empty)
	}

	if len(fixtures) != 2 || fixtures[0].Name != "delete_many_100" || fixtures[1].Name != "drop_recreate_100" ||
		fixtures[1].Kind == verdict.Difference || fixtures[1].RatioLo > 1 || fixtures[1].RatioHi < 1 {
		t.Errorf("fixtures group %+v, want drop_recreate_100 against delete_many_100, no difference", fixtures)
	}

	// The tables' verdicts follow the same groups.
	vs := MatrixVerdicts(cleanupMatrix(), fig.Judging)
	if cv := verdictOf(t, vs, "sqlite", "p50", "drop_recreate_100"); cv.Kind == verdict.Difference || cv.RatioLo > 1 {
		t.Errorf("drop_recreate_100's cell %+v, want it against delete_many_100", cv)
	}

	if cv := verdictOf(t, vs, "sqlite", "p50", "delete_many_100"); cv.Kind != verdict.Reference {
		t.Errorf("delete_many_100's cell %+v, want the fixtures group's reference", cv)
	}
}

// verifyTrial is a trial of a write study: its run phase inserts, its
// verify phase reads the documents back.
func verifyTrial(variant string, round int, insert, verify float64) result.Trial {
	op := func(name string, p50 float64) result.Operation {
		return result.Operation{Name: name, Count: 10, OpsPerSec: 10, LatencyUS: result.Latency{Mean: p50, P50: p50, P99: p50}}
	}

	return result.Trial{Target: "t", Variant: variant, Round: round, Result: &result.Result{Phases: []result.Phase{
		{Name: "run", DurationS: 1, Operations: []result.Operation{op("insert", insert)}},
		{Name: "verify", DurationS: 1, Operations: []result.Operation{op("present", verify)}},
	}}}
}

// TestVerdictFalsePhase: a read-back phase marked verdict: false keeps its
// medians in the tables but gets no verdict, and no block ranks it, however
// much it differs; the run phase is judged as before.
func TestVerdictFalsePhase(t *testing.T) {
	t.Parallel()

	m := &result.Matrix{Targets: []result.MatrixTarget{{Name: "t"}}, Variants: []string{"w1", "journaled"}, Rounds: 6}
	for r := 1; r <= 6; r++ {
		d := 1 + 0.1*float64(r%3)
		m.Trials = append(m.Trials, verifyTrial("w1", r, 1000*d, 1000*d), verifyTrial("journaled", r, 2000*d, 300*d))
	}

	no := false
	j := JudgingOfSpec(testSpec{Phases: []specPhase{{Name: "run"}, {Name: "verify", Verdict: &no}}})

	vs := MatrixVerdicts(m, j)

	judged, shown := 0, 0

	for _, mv := range vs {
		for _, cv := range mv.Variants {
			switch mv.Operation {
			case "verify/present":
				shown++

				if cv.Kind != verdict.Inconclusive || cv.Text != notJudgedText || cv.Median == 0 || cv.Best {
					t.Errorf("verify cell %s %+v, want its median, not judged", mv.Metric, cv)
				}
			case "run/insert":
				if cv.Variant == "journaled" && mv.Metric == "p50" {
					judged++

					if cv.Kind != verdict.Difference {
						t.Errorf("run cell %+v, want the difference judged", cv)
					}
				}
			}
		}
	}

	if shown != 6 || judged != 1 {
		t.Errorf("%d verify cells (want 2 variants × 3 metrics), %d judged run p50 cells (want 1)", shown, judged)
	}

	fig := DefaultFigure
	fig.Judging = j

	b := MatrixBlock(m, fig)
	if b.Figure.Operation != "run/insert" {
		t.Errorf("block figure %q, want the run phase's insert", b.Figure.Operation)
	}

	fig.Operation = "verify/present"
	if b := MatrixBlock(m, fig); len(b.Groups) != 0 {
		t.Errorf("a block ranked the verify phase: %+v", b.Groups)
	}

	res := &result.Result{Workload: result.Workload{Spec: testSpec{Phases: []specPhase{{Name: "run"}, {Name: "verify", Verdict: &no}}}}}
	res.Phases = []result.Phase{sequencePhase("run", 100, 500), sequencePhase("verify", 100, 900)}

	rb := runBlock(res, StudyFigureOf(t, res), false)
	if len(rb.Groups) != 1 || rb.Groups[0].Title != "operations of the run phase" {
		t.Errorf("run block groups %+v, want the run phase only", rb.Groups)
	}
}

// StudyFigureOf is StudyFigure's figure, which carries the workload's
// judging.
func StudyFigureOf(t *testing.T, res *result.Result) Figure {
	t.Helper()

	fig, _ := StudyFigure(res)

	return fig
}

// sequencePhase is a phase of eight one-second intervals running a
// sequence of fast and slow (and their iteration), the p50s given times a
// drift both share.
func sequencePhase(name string, fast, slow float64) result.Phase {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	drift := []float64{1, 1.3, 0.8, 1.1, 0.9, 1.2, 1.05, 0.95}
	p := result.Phase{Name: name}

	for k, d := range drift {
		iv := result.Interval{Start: start.Add(time.Duration(k) * time.Second), End: start.Add(time.Duration(k+1) * time.Second)}
		iv.Operations = []result.Operation{
			{Name: "fast", Count: 10, LatencyUS: result.Latency{Mean: fast * d, P50: fast * d}},
			{Name: "slow", Count: 10, LatencyUS: result.Latency{Mean: slow * d * (1 + 0.01*float64(k%3)), P50: slow * d * (1 + 0.01*float64(k%3))}},
			{Name: "iteration", Unit: result.UnitIteration, Count: 10, LatencyUS: result.Latency{Mean: (fast + slow) * d, P50: (fast + slow) * d}},
		}
		p.Intervals = append(p.Intervals, iv)
	}

	return p
}

// TestPerDocFigureIsTheMedian: a contender whose mean per document is
// dominated by a few slow operations (its p50 half the other's) is ranked
// on its median: faster, as the p50 bars of the same report draw it, not
// "slower" on the mean.
func TestPerDocFigureIsTheMedian(t *testing.T) {
	t.Parallel()

	m := &result.Matrix{Targets: []result.MatrixTarget{{Name: "t"}}, Variants: []string{"steady", "tailed"}, Rounds: 6}
	for r := 1; r <= 6; r++ {
		d := 1 + 0.1*float64(r%3)
		steady, tailed := trial("t", "steady", r, 200*d, 100), trial("t", "tailed", r, 100*d, 100)
		// tailed: p50 100, but a tail makes its mean 10× its p50.
		tailed.Result.Phases[1].Operations[0].LatencyUS.Mean = 1000 * d
		m.Trials = append(m.Trials, steady, tailed)
	}

	b := MatrixBlock(m, Figure{PerDoc: true})

	l := b.Groups[0].Lines[1]
	if l.Name != "tailed" || l.Kind != verdict.Difference || l.Ratio >= 1 || !strings.Contains(l.Verdict, "faster") {
		t.Errorf("tailed %+v, want 2× faster per document on its p50", l)
	}
}

// TestCutShortTrialIsNoSample: a trial stopped by a signal is left out of
// the block and the verdicts: never the answer.
func TestCutShortTrialIsNoSample(t *testing.T) {
	t.Parallel()

	m := syntheticMatrix()
	for i := range m.Trials {
		if tr := &m.Trials[i]; tr.Round == 3 && tr.Variant == "slow" && tr.Target == "a" {
			tr.Result.Status = result.StatusInterrupted
			tr.Result.Phases[1].Operations[0].LatencyUS.P50 = 1 // 31 searches' worth: looks fast
		}
	}

	b := MatrixBlock(m, DefaultFigure)
	if l := b.Groups[0].Lines[1]; l.Name != "slow" || l.N != 5 || l.Kind != verdict.Inconclusive {
		t.Errorf("slow on a %+v, want 5 rounds (the cut-short one left out): inconclusive", l)
	}

	if cv := verdictOf(t, MatrixVerdicts(m, Judging{}), "a", "p50", "slow"); cv.N != 5 {
		t.Errorf("slow's cell has %d rounds, want 5", cv.N)
	}
}

// TestRunBlockAnswersWithExplain: a single run's block ends with one
// answer line: the tweak that made a difference, and the index tweak the
// server did not do, with the plans as evidence and where it would show.
func TestRunBlockAnswersWithExplain(t *testing.T) {
	t.Parallel()

	sort := sequencePhase("sort", 500, 505)
	for k := range sort.Intervals {
		ops := sort.Intervals[k].Operations
		ops[0].Name, ops[1].Name = "sorted_indexed", "sorted_unindexed"
	}

	capped := sequencePhase("capped", 100, 300)
	for k := range capped.Intervals {
		ops := capped.Intervals[k].Operations
		ops[0].Name, ops[1].Name = "insert_normal", "insert_capped"
	}

	res := &result.Result{
		Workload: result.Workload{Spec: testSpec{Collections: []specCollection{
			{Name: "events", Indexes: []map[string]int{{"timestamp": 1}}}, {Name: "events_noindex"},
		}}},
		Phases: []result.Phase{sort, capped},
		Explain: []result.Explain{
			{Operation: "sorted_indexed", Collection: "events", Format: "ferretdb-sqlite", Stages: []string{"SCAN events_1"}, CollectionScan: true, DocsExamined: -1},
			{Operation: "sorted_unindexed", Collection: "events_noindex", Format: "ferretdb-sqlite", Stages: []string{"SCAN events_noindex_2"}, CollectionScan: true, DocsExamined: -1},
		},
	}

	b := runBlock(res, DefaultFigure, false)
	if len(b.Groups) != 2 {
		t.Fatalf("groups %+v", b.Groups)
	}

	if ev := b.Groups[0].Evidence; !strings.Contains(ev, "sorted_indexed SCAN events_1 on events, no index") ||
		!strings.Contains(ev, "sorted_unindexed SCAN events_noindex_2 on events_noindex, no index") {
		t.Errorf("sort evidence %q", ev)
	}

	if b.Groups[1].Evidence != "" {
		t.Errorf("capped evidence %q, want none (no plan for inserts)", b.Groups[1].Evidence)
	}

	var out bytes.Buffer
	b.WriteText(&out)

	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	last := lines[len(lines)-1]

	if !strings.HasPrefix(last, "Answer: sort: no index was used on either side (explain)") || !strings.Contains(last, "on mongod") ||
		!strings.Contains(last, "capped: insert_capped 3.0") || !strings.Contains(last, "slower than insert_normal (95% CI") {
		t.Errorf("last line %q, want the answer: sort not done by the server, capped slower", last)
	}

	// The same phase with an index used is a tweak the server did: no
	// such excuse, its verdict is the answer.
	res.Explain[0].Index, res.Explain[0].CollectionScan = "timestamp_1", false
	if a := runBlock(res, DefaultFigure, false).Answer; strings.Contains(a, "no index was used") || !strings.Contains(a, "no meaningful difference (the interval within the minimum effect): sort") {
		t.Errorf("answer with the index used %q", a)
	}
}

// TestReadBackEvidence: a read-back phase (verdict: false) that reads a
// whole capped collection and finds more documents than its max is the
// evidence the capped tweak cannot show: the answer says so; within the
// max it says nothing.
func TestReadBackEvidence(t *testing.T) {
	t.Parallel()

	no := false
	capped := sequencePhase("capped", 100, 101)

	run := func(docs int64) string {
		res := &result.Result{
			Workload: result.Workload{Spec: testSpec{
				Collections: []specCollection{{Name: "log_capped", Capped: true, Max: 100}},
				Operations:  []specOperation{{Name: "count_capped", Op: "find", Collection: "log_capped"}},
				Phases:      []specPhase{{Name: "capped"}, {Name: "capped_check", Verdict: &no}},
			}},
			Phases: []result.Phase{capped, {Name: "capped_check", Operations: []result.Operation{{Name: "count_capped", Count: 1, Docs: docs}}}},
		}

		return runBlock(res, StudyFigureOf(t, res), false).Answer
	}

	if a := run(2000); !strings.Contains(a, "capped_check (read back): log_capped holds 2000 documents, over its max of 100") {
		t.Errorf("answer %q, want the read-back's evidence", a)
	}

	if a := run(100); strings.Contains(a, "read back") {
		t.Errorf("answer %q: a capped collection within its max is no evidence", a)
	}
}
