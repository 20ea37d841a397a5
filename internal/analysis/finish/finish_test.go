package finish

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/metrics"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// measured records, through the metrics registry, 2 s of get (one each of
// 1 to 100 ms), put (200 successes of 10 ms and failed of 1 ms, timeouts)
// and builds phase name from it.
func measured(t *testing.T, name string, failed int) result.Phase {
	t.Helper()

	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reg := metrics.NewRegistry([]string{"get", "put"})
	reg.Reset(start)

	h := reg.NewHandle()
	for i := 1; i <= 100; i++ {
		h.Record(0, time.Duration(i)*time.Millisecond, 1, "")
	}

	for range 200 {
		h.Record(1, 10*time.Millisecond, 1, "")
	}

	for range failed {
		h.Record(1, time.Millisecond, 0, "timeout")
	}

	reg.Tick(start.Add(2 * time.Second))

	p, err := result.NewPhase(name, 0, reg.Intervals())
	if err != nil {
		t.Fatal(err)
	}

	p.Model = "closed"

	return p
}

// workloadSrc is the workload the tests' rules and settings come from,
// with the thresholds given.
func workloadSrc(thresholds string) string {
	return `name: t
database: bench
collections: [{name: c}]
run: {max_error_rate: 0.05, min_effect: 10%, reference: slow}
phases:
  - {name: warm, duration: 1s}
  - {name: run, duration: 2s}
operations:
  - {name: get, op: findOne, collection: c}
  - {name: put, op: insertOne, collection: c, document: {a: 1}}
thresholds:
` + thresholds
}

// parsed parses the workload through the workload parser, as run does.
func parsed(t *testing.T, thresholds string) *workload.Spec {
	t.Helper()

	s, errs := workload.Parse("w.yaml", []byte(workloadSrc(thresholds)))
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	return s
}

// asRead is the spec as a results file or run log holds it once read back:
// generic JSON.
func asRead(t *testing.T, spec any) any {
	t.Helper()

	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}

	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}

	return v
}

// run is a completed result of a warm and a run phase, the run phase with
// failed timeouts of put, of the workload spec.
func run(t *testing.T, spec any, failed int) *result.Result {
	t.Helper()

	res := &result.Result{Status: result.StatusCompleted, Workload: result.Workload{Name: "t", Spec: spec}}
	res.AddPhase(measured(t, "warm", 0))
	res.AddPhase(measured(t, "run", failed))

	return res
}

// TestFinishThresholdKinds checks one threshold of each kind on the
// recorded run phase (get: 1..100 ms; put: 200 of 10 ms; 2 s), each on its
// own so that the status follows from that one outcome alone.
func TestFinishThresholdKinds(t *testing.T) {
	cases := []struct {
		name, rule string
		pass       bool
		measurable bool
	}{
		{"percentile holds", `  get: ["p50 <= 60ms"]`, true, true},
		{"percentile broken", `  get: ["p50 < 40ms"]`, false, true},
		{"high percentile", `  get: ["p99.9 < 90ms"]`, false, true},
		{"mean", `  get: ["mean < 60ms"]`, true, true},
		{"max", `  get: ["max >= 100ms"]`, true, true},
		{"throughput", `  put: ["throughput >= 150"]`, false, true}, // 100/s
		{"throughput holds", `  put: ["throughput > 99"]`, true, true},
		{"error rate", `  put: ["error_rate < 1%"]`, false, true},     // 3 of 203
		{"all operations", `  all: ["throughput > 149"]`, true, true}, // 300 in 2 s
		{"other phase", `  get@warm: ["p50 < 40ms"]`, false, true},
		{"phase that did not run", `  get@cool: ["p50 < 1s"]`, false, false},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := parsed(t, strings.Replace(tc.rule, "@cool", "@warm", 1))
			rules := spec.Thresholds.Rules

			if strings.Contains(tc.rule, "@cool") {
				rules[0].Phase = "cool" // the parser refuses an unknown phase; a result can lack one
			}

			res := run(t, spec, 3)

			out, err := Finish(res, Options{Rules: rules})
			if err != nil {
				t.Fatal(err)
			}

			if len(res.Thresholds) != 1 {
				t.Fatalf("%d outcomes, want 1", len(res.Thresholds))
			}

			o := res.Thresholds[0]
			if o.Passed != tc.pass || o.Measurable != tc.measurable {
				t.Errorf("outcome %+v, want passed %v measurable %v", o, tc.pass, tc.measurable)
			}

			want := OK
			if !tc.pass {
				want = ThresholdsFailed
			}

			if out.Status != want {
				t.Errorf("status %v (%q), want %v", out.Status, out.Reason, want)
			}

			if want == ThresholdsFailed && out.Reason != "1 of 1 thresholds failed" {
				t.Errorf("reason %q", out.Reason)
			}
		})
	}
}

// TestFinishStatus: how a result ends, from its status, its error budget
// (run.max_error_rate 5%) and its thresholds, failures first.
func TestFinishStatus(t *testing.T) {
	const broken = `  get: ["p50 < 1ms"]`

	cases := []struct {
		name       string
		thresholds string
		failed     int // put's timeouts in the run phase
		edit       func(*result.Result)
		first      string
		want       Status
		reason     string // contained in the reason
		note       string // contained in a note
	}{
		{name: "clean", want: OK},
		// Both phases are measured: 600 successes in all.
		{name: "errors within the budget", failed: 10, want: OK, note: "10 operations failed (1.64%), within run.max_error_rate"},
		{
			name: "errors over the budget", failed: 40, first: "timeout: 1ms", want: Failed,
			reason: "40 of 640 operations failed (6.25%), above the workload's run.max_error_rate of 5.00%\nFirst error: timeout: 1ms",
		},
		{name: "interrupted", edit: status(result.StatusInterrupted, "interrupted by the user"), want: Failed, reason: "run interrupted by the user"},
		{name: "interrupted otherwise", edit: status(result.StatusInterrupted, "SIGTERM"), want: Failed, reason: "run interrupted: SIGTERM"},
		{name: "aborted", edit: status(result.StatusAborted, "the server is unreachable"), first: "network", want: Failed, reason: "run aborted: the server is unreachable\nFirst error: network"},
		{name: "interrupted beats thresholds", thresholds: broken, edit: status(result.StatusInterrupted, ""), want: Failed, reason: "run interrupted"},
		{name: "budget beats thresholds", thresholds: broken, failed: 40, want: Failed, reason: "above the workload's run.max_error_rate"},
		{name: "threshold broken", thresholds: broken, want: ThresholdsFailed, reason: "1 of 1 thresholds failed"},
		{name: "threshold held", thresholds: `  get: ["p50 < 1s"]`, want: OK},
		{
			name: "a shard records its thresholds but does not gate", thresholds: broken,
			edit: func(r *result.Result) { r.Shard = &result.Shard{Index: 1, Count: 2} }, want: OK, note: "share of the load",
		},
		{
			name: "a merge gates", thresholds: broken,
			edit: func(r *result.Result) { r.Merged = &result.Merged{Count: 2} }, want: ThresholdsFailed,
		},
		{name: "incomplete is judged on what it holds", thresholds: broken, edit: status(result.StatusIncomplete, "cut short"), want: ThresholdsFailed},
		{name: "incomplete alone is no failure", edit: status(result.StatusIncomplete, "cut short"), want: OK},
		{
			name: "nothing succeeded", edit: func(r *result.Result) { zero(r, 0) }, want: Failed,
			reason: "no operation succeeded in the measured phases",
		},
		{
			name: "everything failed", edit: func(r *result.Result) { zero(r, 7) }, want: Failed,
			reason: "all 7 operations failed; no operation succeeded in the measured phases",
		},
		{
			// Excluded phases are not measured: their errors cost nothing.
			name: "excluded phase's errors", failed: 50, edit: func(r *result.Result) { r.Phases[1].Excluded = true }, want: OK,
		},
		{
			// A unit's steps are counted as themselves, not again as the unit.
			name: "a unit is not counted twice", failed: 10, want: OK, note: "10 operations failed (1.64%)",
			edit: func(r *result.Result) {
				p := &r.Phases[1]
				p.Operations = append(p.Operations, result.Operation{Name: "step", Unit: "put", Count: 0, Errors: map[string]int64{"timeout": 1000}})
			},
		},
	}

	for _, tc := range cases {
		for _, form := range []string{"parsed", "read"} {
			t.Run(tc.name+"/"+form, func(t *testing.T) {
				var spec any = parsed(t, tc.thresholds)
				if form == "read" {
					spec = asRead(t, spec)
				}

				res := run(t, spec, tc.failed)
				if tc.edit != nil {
					tc.edit(res)
				}

				out, err := Finish(res, Options{FirstError: tc.first})
				if err != nil {
					t.Fatal(err)
				}

				if out.Status != tc.want || !strings.Contains(out.Reason, tc.reason) || (tc.want == OK) != (out.Reason == "") {
					t.Errorf("status %v, reason %q; want %v with %q", out.Status, out.Reason, tc.want, tc.reason)
				}

				if tc.note != "" && !strings.Contains(strings.Join(out.Notes, "\n"), tc.note) {
					t.Errorf("notes %q, want one with %q", out.Notes, tc.note)
				}

				if tc.note == "" && len(out.Notes) > 0 {
					t.Errorf("notes %q, want none", out.Notes)
				}

				if tc.thresholds != "" && len(res.Thresholds) != 1 {
					t.Errorf("%d threshold outcomes recorded, want 1", len(res.Thresholds))
				}
			})
		}
	}
}

func status(s, reason string) func(*result.Result) {
	return func(r *result.Result) { r.Status, r.StatusReason = s, reason }
}

// zero leaves the measured phases without a success, the last one with
// failed errors.
func zero(r *result.Result, failed int64) {
	for i := range r.Phases {
		r.Phases[i].Operations = []result.Operation{{Name: "get"}}
	}

	if failed > 0 {
		r.Phases[len(r.Phases)-1].Operations[0].Errors = map[string]int64{"network": failed}
	}
}

// TestFinishAgainFromTheFile is what makes run, finish and merge agree: a
// result finished once (as run finishes it), written and read back (as
// finish reads a run log's end record, or merge shard 0's file), finishes
// again to the same outcomes, in the workload's order, with the same lines
// for rules written with and without a phase, and the same status.
func TestFinishAgainFromTheFile(t *testing.T) {
	spec := parsed(t, `  put: ["error_rate < 1%", "p50 < 20ms"]
  all: ["throughput > 10"]
  get@run: ["p50 < 40ms"]
  get@warm: ["max < 1s"]
  get: ["mean < 1ms"]
`)

	res := run(t, spec, 3)

	first, err := Finish(res, Options{Rules: spec.Thresholds.Rules})
	if err != nil {
		t.Fatal(err)
	}

	if first.Status != ThresholdsFailed || first.Reason != "3 of 6 thresholds failed" {
		t.Fatalf("first finish: %+v", first)
	}

	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}

	var read result.Result
	if err := json.Unmarshal(data, &read); err != nil {
		t.Fatal(err)
	}

	again, err := Finish(&read, Options{})
	if err != nil {
		t.Fatal(err)
	}

	if !reflect.DeepEqual(again, first) {
		t.Errorf("finished again: %+v, first %+v", again, first)
	}

	if !reflect.DeepEqual(read.Thresholds, res.Thresholds) {
		t.Errorf("outcomes read back and finished again:\n%+v\nfirst:\n%+v", read.Thresholds, res.Thresholds)
	}

	var lines []string
	for _, o := range res.Thresholds {
		line, _, _ := strings.Cut(o.Text, " (")
		lines = append(lines, line)
	}

	want := []string{
		"✗ put error_rate < 1%", "✓ put p50 < 20ms", "✓ all throughput > 10/s", "✗ get@run p50 < 40ms", "✓ get@warm max < 1s", "✗ get mean < 1ms",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("lines %q, want the workload's order %q", lines, want)
	}
}

// TestFinishRulesFromTheWorkload: a result that records no outcomes (the
// run log of a run killed before its end) is checked on the workload's
// thresholds as the result keeps them, ordered by selector.
func TestFinishRulesFromTheWorkload(t *testing.T) {
	res := run(t, asRead(t, parsed(t, "  put: [\"p50 < 20ms\"]\n  get: [\"p50 < 40ms\", \"max < 1s\"]\n")), 0)
	res.Status = result.StatusIncomplete

	out, err := Finish(res, Options{})
	if err != nil {
		t.Fatal(err)
	}

	var got []string
	for _, o := range res.Thresholds {
		got = append(got, o.Operation+" "+o.Condition+" "+map[bool]string{true: "passed", false: "failed"}[o.Passed])
	}

	want := []string{"get p50 < 40ms failed", "get max < 1s passed", "put p50 < 20ms passed"}
	if !reflect.DeepEqual(got, want) || out.Status != ThresholdsFailed {
		t.Errorf("outcomes %q (%v), want %q", got, out.Status, want)
	}
}

// TestFinishBadRecordedThreshold: an outcome whose condition does not parse
// (a file edited by hand) is an error naming it, not a pass.
func TestFinishBadRecordedThreshold(t *testing.T) {
	res := run(t, nil, 0)
	res.Thresholds = []result.ThresholdOutcome{{Operation: "get", Condition: "p50 <<< 1ms"}}

	if _, err := Finish(res, Options{}); err == nil || !strings.Contains(err.Error(), `"p50 <<< 1ms"`) {
		t.Errorf("error %v, want one naming the condition", err)
	}
}

// TestFinishFindings: the result's findings, and each comparison trial's,
// are the analysis's, recomputed (not kept from before).
func TestFinishFindings(t *testing.T) {
	res := run(t, nil, 3)
	res.Findings = []result.Finding{{Severity: "warning", Text: "stale"}}

	if _, err := Finish(res, Options{}); err != nil {
		t.Fatal(err)
	}

	if !reflect.DeepEqual(res.Findings, analysis.Findings(res)) || len(res.Findings) == 0 {
		t.Errorf("findings %+v", res.Findings)
	}

	for _, f := range res.Findings {
		if f.Text == "stale" {
			t.Errorf("a stale finding was kept")
		}
	}

	if !strings.Contains(res.Findings[0].Text, "3 errors in the run phase") {
		t.Errorf("first finding %q, want put's 3 errors", res.Findings[0].Text)
	}
}

// TestFinishMatrix: a comparison gets its verdicts, judged by the
// workload's run.min_effect and run.reference, and findings per trial; its
// thresholds are not checked (trials are short; the question is the
// comparison); an aborted comparison failed.
func TestFinishMatrix(t *testing.T) {
	for _, form := range []string{"parsed", "read"} {
		t.Run(form, func(t *testing.T) {
			var spec any = parsed(t, `  get: ["p50 < 1ms"]`)
			if form == "read" {
				spec = asRead(t, spec)
			}

			m := comparison(t)
			res := &result.Result{Status: result.StatusCompleted, Workload: result.Workload{Spec: spec}, Matrix: m}

			out, err := Finish(res, Options{})
			if err != nil || out.Status != OK {
				t.Fatalf("finish: %+v, %v", out, err)
			}

			if len(res.Thresholds) != 0 {
				t.Errorf("a comparison's thresholds were checked: %+v", res.Thresholds)
			}

			want := analysis.MatrixVerdicts(comparison(t), analysis.JudgingOf("10%", "slow"))
			if len(m.Verdicts) == 0 || !reflect.DeepEqual(m.Verdicts, want) {
				t.Errorf("verdicts %+v\nwant %+v", m.Verdicts, want)
			}

			for _, mv := range m.Verdicts {
				for _, cv := range mv.Variants {
					if cv.Variant == "slow" && mv.Target != analysis.CrossTarget && cv.Kind != verdict.Reference {
						t.Errorf("run.reference slow is not the reference: %+v", cv)
					}
				}
			}

			if f := m.Trials[0].Result.Findings; len(f) == 0 || !strings.Contains(f[0].Text, "errors") {
				t.Errorf("trial findings %+v", f)
			}

			res.Status, res.StatusReason = result.StatusAborted, "target b: unreachable"
			if out, _ := Finish(res, Options{}); out.Status != Failed || out.Reason != "run aborted: target b: unreachable" {
				t.Errorf("aborted comparison: %+v", out)
			}
		})
	}
}

// comparison is variants base and slow (5× slower) on targets a and b,
// six rounds, every trial with an error.
func comparison(t *testing.T) *result.Matrix {
	t.Helper()

	m := &result.Matrix{Targets: []result.MatrixTarget{{Name: "a"}, {Name: "b"}}, Variants: []string{"base", "slow"}, Rounds: 6}

	for r := 1; r <= 6; r++ {
		for _, tgt := range []string{"a", "b"} {
			for _, v := range []string{"slow", "base"} {
				p50 := 1000.0 * float64(r)
				if v == "slow" {
					p50 *= 5
				}

				op := result.Operation{
					Name: "get", Count: 100, OpsPerSec: 100, Errors: map[string]int64{"timeout": 1},
					LatencyUS: result.Latency{Mean: p50, P50: p50, P99: 2 * p50, Max: 3 * p50},
				}
				tr := &result.Result{Phases: []result.Phase{{Name: "run", Model: "closed", DurationS: 1, Operations: []result.Operation{op}}}}
				m.Trials = append(m.Trials, result.Trial{Target: tgt, Variant: v, Round: r, Result: tr})
			}
		}
	}

	return m
}

// TestSettingsOf reads run.max_error_rate, run.min_effect and
// run.reference from a result's workload in either form, and the defaults
// from a result without one.
func TestSettingsOf(t *testing.T) {
	spec := parsed(t, "")

	for name, s := range map[string]any{"parsed": spec, "read": asRead(t, spec)} {
		got, err := settingsOf(&result.Result{Workload: result.Workload{Spec: s}})
		if err != nil || got.Run.MaxErrorRate != 0.05 || got.Run.MinEffect != "10%" || got.Run.Reference != "slow" {
			t.Errorf("%s: %+v, %v", name, got.Run, err)
		}
	}

	if got, err := settingsOf(&result.Result{}); err != nil || got.Run.MaxErrorRate != 0 || got.Thresholds != nil {
		t.Errorf("no workload: %+v, %v", got, err)
	}
}

func TestStatusString(t *testing.T) {
	for s, want := range map[Status]string{OK: "ok", Failed: "failed", ThresholdsFailed: "thresholds failed", Status(7): "Status(7)"} {
		if s.String() != want {
			t.Errorf("%d: %q, want %q", int(s), s.String(), want)
		}
	}
}
