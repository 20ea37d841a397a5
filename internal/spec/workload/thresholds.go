package workload

import (
	"encoding/json"
	"slices"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/stats/threshold"
)

// AllOperations is the threshold selector that stands for every operation
// of a phase together: "all: [throughput > 500]" is the phase's total
// throughput, "all: [p99 < 20ms]" the p99 of every operation's latencies
// merged.
const AllOperations = "all"

// Thresholds are the workload's performance conditions, checked at the end
// of a run:
//
//	thresholds:
//	  get: ["p99 < 20ms", "p99.9 < 100ms"]
//	  all: ["error_rate < 0.1%", "throughput > 500"]
//	  all@warm: ["p99 < 1s"]
//
// Each key selects an operation by name, or all of them with "all", in the
// main phase (the run phase); "KEY@PHASE" selects them in another phase.
// Each value is a list of conditions in the grammar of package threshold.
type Thresholds struct {
	// Rules are the parsed thresholds, in file order.
	Rules []ThresholdRule

	// problems are what decoding found wrong, reported by Validate with
	// the rest of the file's errors.
	problems []*yamlpos.Error
}

// ThresholdRule is one condition on one selection of operations.
type ThresholdRule struct {
	// Operation is the operation's name, or AllOperations.
	Operation string
	// Phase is the phase the condition is checked on; empty for the main
	// phase.
	Phase string
	// Condition is the parsed condition.
	Condition threshold.Condition
	// Text is the condition as written.
	Text string

	// node and path position the rule's messages.
	node *yaml.Node
	path string
}

// Selector is the rule's key as written: "get", "all", "get@warm".
func (r ThresholdRule) Selector() string {
	if r.Phase == "" {
		return r.Operation
	}

	return r.Operation + "@" + r.Phase
}

// MarshalJSON writes the thresholds as they are written in a workload:
// selector → conditions, so that results files show them as given.
func (t Thresholds) MarshalJSON() ([]byte, error) {
	m := map[string][]string{}
	for _, r := range t.Rules {
		m[r.Selector()] = append(m[r.Selector()], r.Text)
	}

	return json.Marshal(m)
}

// IsZero tells encoders that omit empty values that there are no thresholds.
func (t Thresholds) IsZero() bool { return len(t.Rules) == 0 && len(t.problems) == 0 }

// decodeNode reads the thresholds mapping. Problems are kept for Validate,
// which reports all of them with the file's other errors.
func (t *Thresholds) decodeNode(n *yaml.Node, path string) *yamlpos.Error {
	if isNull(n) {
		return nil
	}

	if n.Kind != yaml.MappingNode {
		return yamlpos.At(n, path, `must be a mapping of operation names (or "all") to lists of conditions, such as get: ["p99 < 20ms"]`)
	}

	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], yamlpos.Resolve(n.Content[i+1])
		kp := yamlpos.Field(path, k.Value)

		if k.Kind != yaml.ScalarNode || k.Value == "" {
			t.problems = append(t.problems, yamlpos.At(k, path, "keys must be operation names or \"all\""))
			continue
		}

		op, phase, at := strings.Cut(k.Value, "@")
		if op == "" || (at && (phase == "" || strings.Contains(phase, "@"))) {
			t.problems = append(t.problems, yamlpos.At(k, kp, `must be OPERATION, "all", OPERATION@PHASE or all@PHASE`))
			continue
		}

		items := []*yaml.Node{val}
		if val.Kind == yaml.SequenceNode {
			items = val.Content
		}

		for j, item := range items {
			ip := kp
			if val.Kind == yaml.SequenceNode {
				ip = yamlpos.Index(kp, j)
			}

			item = yamlpos.Resolve(item)
			if item.Kind != yaml.ScalarNode || item.Tag != "!!str" {
				t.problems = append(t.problems, yamlpos.At(item, ip, `must be a condition such as "p99 < 20ms", not %s`, describe(item)))
				continue
			}

			c, err := threshold.Parse(item.Value)
			if err != nil {
				t.problems = append(t.problems, yamlpos.At(item, ip, "%q: %v", item.Value, err))
				continue
			}

			t.Rules = append(t.Rules, ThresholdRule{
				Operation: op, Phase: phase, Condition: c, Text: strings.TrimSpace(item.Value),
				node: k, path: kp,
			})
		}
	}

	return nil
}

// thresholds reports the thresholds' problems: conditions that do not
// parse, and selectors naming an operation or phase the workload does not
// have.
func (v *validator) thresholds(ops map[string]bool) {
	for _, p := range v.s.Thresholds.problems {
		e := *p
		e.File = v.s.file
		v.errs = append(v.errs, &e)
	}

	phases, _ := v.s.PhaseList()

	var phaseNames []string
	for _, p := range phases {
		phaseNames = append(phaseNames, p.Name)
	}

	reported := map[string]bool{}

	for _, r := range v.s.Thresholds.Rules {
		if reported[r.path] {
			continue
		}

		var msg string

		switch {
		case r.Operation != AllOperations && !ops[r.Operation]:
			msg = "no operation " + quote(r.Operation) + ` (use an operation's name, or "all"; the workload has ` +
				strings.Join(sortedKeys(ops), ", ") + ")"
		case r.Phase != "" && !slices.Contains(phaseNames, r.Phase):
			msg = "no phase " + quote(r.Phase) + " (the workload's phases are " + strings.Join(phaseNames, ", ") + ")"
		default:
			continue
		}

		reported[r.path] = true
		e := yamlpos.At(r.node, r.path, "%s", msg)
		e.File = v.s.file
		v.errs = append(v.errs, e)
	}
}

func quote(s string) string { return `"` + s + `"` }
