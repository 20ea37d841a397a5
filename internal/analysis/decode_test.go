package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// decodeRun is a single run of a sequence none, raw, struct (reads of 200
// documents) with decode-time entries beside raw and struct, as the Go
// engine records them: raw decodes in 200µs a read (1µs/doc), struct in
// 600µs (3µs/doc), under end-to-end reads of about 20ms that drift from
// interval to interval much more than the decode times differ.
func decodeRun() *result.Result {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	drift := []float64{1, 1.4, 0.7, 1.2, 0.9, 1.3, 1.05, 0.85, 1.1, 0.95}
	names := []string{"none", "raw", "raw:decode", "struct", "struct:decode", "iteration"}

	p := result.Phase{Name: "run"}
	for _, n := range names {
		o := result.Operation{Name: n}

		switch {
		case strings.HasSuffix(n, ":decode"):
			o.Unit, o.Steps = result.UnitDecode, []string{strings.TrimSuffix(n, ":decode")}
		case n == "iteration":
			o.Unit, o.Steps = result.UnitIteration, []string{"none", "raw", "struct"}
		}

		p.Operations = append(p.Operations, o)
	}

	for k, d := range drift {
		iv := result.Interval{Start: start.Add(time.Duration(k) * time.Second), End: start.Add(time.Duration(k+1) * time.Second)}
		wobble := 1 + 0.02*float64(k%3)
		p50 := map[string]float64{
			"none": 20000 * d, "raw": 20200 * d, "raw:decode": 200 * wobble, "struct": 20600 * d,
			"struct:decode": 600 * wobble * (1 + 0.01*float64(k%2)), "iteration": 61000 * d,
		}

		for _, n := range names {
			// Intervals do not repeat the steps.
			iv.Operations = append(iv.Operations, result.Operation{
				Name: n, Count: 10, Docs: 2000, Unit: p.Operations[len(iv.Operations)].Unit,
				LatencyUS: result.Latency{Mean: 3 * p50[n], P50: p50[n]},
			})
		}

		p.Intervals = append(p.Intervals, iv)
	}

	return &result.Result{Phases: []result.Phase{p}}
}

// TestDecodeFigureRanksDecodeEntries ranks the decode-time entries, named
// by their reads, on their p50 per document: struct costs 2µs/doc more
// than raw, a difference the end-to-end reads (whose drift is 100 times
// larger) would hide; the read that decodes nothing and the iteration are
// not contenders; the group ends with the answer.
func TestDecodeFigureRanksDecodeEntries(t *testing.T) {
	t.Parallel()

	b := runBlock(decodeRun(), Figure{PerDoc: true, Decode: true, Cost: true}, false)
	if len(b.Groups) != 1 {
		t.Fatalf("groups %+v", b.Groups)
	}

	g := b.Groups[0]
	if len(g.Lines) != 2 || g.Lines[0].Name != "raw" || g.Lines[1].Name != "struct" {
		t.Fatalf("lines %+v, want raw then struct", g.Lines)
	}

	raw, st := g.Lines[0], g.Lines[1]
	if raw.Median < 1 || raw.Median > 1.05 || st.Median < 3 || st.Median > 3.2 {
		t.Errorf("medians %v and %v µs/doc, want about 1 and 3 (a read's p50 over its 200 documents)", raw.Median, st.Median)
	}

	if st.Kind != verdict.Difference || st.Cost == nil || st.Cost.Kind != verdict.Difference || st.Cost.Lo <= 1.5 || st.Cost.Hi >= 2.5 {
		t.Errorf("struct %+v cost %+v, want a difference of about +2µs/doc", st, st.Cost)
	}

	if !strings.HasPrefix(g.Answer, "Answer: decode time per document (p50): raw ") ||
		!strings.Contains(g.Answer, "; struct decoding costs +") || !strings.HasSuffix(g.Answer, " more than raw") {
		t.Errorf("answer %q", g.Answer)
	}

	var text strings.Builder
	b.WriteText(&text)

	lines := strings.Split(strings.TrimRight(text.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; last != "  "+g.Answer {
		t.Errorf("the block's last line is %q, want the answer", last)
	}

	// The end-to-end figure of the same run ranks the reads, not the
	// decode entries, by their median per document.
	e2e := runBlock(decodeRun(), Figure{PerDoc: true, Cost: true}, false)
	if n := len(e2e.Groups[0].Lines); n != 3 || e2e.Groups[0].Answer != "" {
		t.Errorf("end-to-end block %+v, want none, raw and struct and no decode answer", e2e.Groups[0])
	}
}
