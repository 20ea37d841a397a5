package workload

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/stats/threshold"
)

// TestThresholdsParsed reads thresholds keyed by operation, "all" and a
// phase, and keeps them typed and in file order.
func TestThresholdsParsed(t *testing.T) {
	t.Parallel()

	src := base + `thresholds:
  ins: ["p99 < 20ms", "p99.9 <= 1s"]
  all: ["error_rate < 0.1%", "throughput > 500"]
  ins@run: "max < 2s"
`

	s, errs := Parse("w.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}

	var got []string
	for _, r := range s.Thresholds.Rules {
		got = append(got, r.Selector()+": "+r.Condition.String())
	}

	want := "ins: p99 < 20ms|ins: p99.9 <= 1s|all: error_rate < 0.1%|all: throughput > 500/s|ins@run: max < 2s"
	if strings.Join(got, "|") != want {
		t.Errorf("rules\n got %s\nwant %s", strings.Join(got, "|"), want)
	}

	if r := s.Thresholds.Rules[0]; r.Condition.Metric != (threshold.Metric{Kind: threshold.Percentile, Percent: 99}) || r.Condition.Limit != 20000 {
		t.Errorf("first rule %+v", r)
	}

	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}

	if !strings.Contains(string(js), `"thresholds":{"all":["error_rate \u003c 0.1%","throughput \u003e 500"]`) {
		t.Errorf("spec JSON does not hold the thresholds as written:\n%s", js)
	}
}

// TestThresholdsValidation checks each kind of mistake is one positioned
// error naming file, line and field.
func TestThresholdsValidation(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct{ yaml, want string }{
		{"thresholds:\n  get: [\"p99 < 20ms\"]\n", `w.yaml:15:3: thresholds.get: no operation "get" (use an operation's name, or "all"; the workload has ins)`},
		{"thresholds:\n  ins: [\"latency < 20ms\"]\n", `w.yaml:15:9: thresholds.ins[0]: "latency < 20ms": unknown metric "latency"`},
		{"thresholds:\n  ins: [\"p99 < 20\"]\n", `w.yaml:15:9: thresholds.ins[0]: "p99 < 20": p99 needs a latency unit`},
		{"thresholds:\n  all:\n    - throughput > 500\n    - error_rate < 1\n", `w.yaml:17:7: thresholds.all[1]: "error_rate < 1": error_rate is a percentage`},
		{"thresholds:\n  ins: [\"p99 < 2O ms\"]\n", `w.yaml:15:9: thresholds.ins[0]: "p99 < 2O ms": bad number "2O"`},
		{"thresholds:\n  ins: [20]\n", `w.yaml:15:9: thresholds.ins[0]: must be a condition such as "p99 < 20ms", not`},
		{"thresholds:\n  all@warm: [\"p99 < 1s\"]\n", `w.yaml:15:3: thresholds.all@warm: no phase "warm" (the workload's phases are run)`},
		{"thresholds: [\"p99 < 1s\"]\n", `w.yaml:14:13: thresholds: must be a mapping`},
		{"thresholds:\n  ins@: [\"p99 < 1s\"]\n", `w.yaml:15:3: thresholds.ins@: must be OPERATION, "all", OPERATION@PHASE or all@PHASE`},
		{"thresholds:\n  \"@run\": [\"p99 < 1s\"]\n", `w.yaml:15:3: thresholds.@run: must be OPERATION`},
	} {
		_, errs := Parse("w.yaml", []byte(base+tc.yaml))
		if len(errs) != 1 {
			t.Errorf("%s: %d errors %v, want one", tc.yaml, len(errs), errs)
			continue
		}

		if !strings.HasPrefix(errs[0].Error(), tc.want) {
			t.Errorf("%s:\n got %s\nwant %s…", tc.yaml, errs[0], tc.want)
		}
	}
}
