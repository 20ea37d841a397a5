package workload

import (
	"fmt"
	"math"
	"strings"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/stats/threshold"
)

// Capacity is the workload's `capacity:` section: the settings `mongobench
// capacity` uses where its flags are not given (a flag given overrides its
// field), so that a capacity study is one file:
//
//	capacity:
//	  slo: ["p99 < 20ms", "error_rate < 0.1%"]
//	  start_rate: 200
//	  max_rate: 20000
//	  step_duration: 5s
//	  workers: [1, 2, 4, 8, 16]
//
// Zero values are "not set": the command's defaults apply. See
// docs/capacity.md.
type Capacity struct {
	// SLO are the objectives, in the grammar of --slo.
	SLO []string `yaml:"slo" json:"slo,omitempty"`
	// StartRate and MaxRate bound the rate search, operations per second.
	StartRate float64 `yaml:"start_rate" json:"start_rate,omitempty"`
	MaxRate   float64 `yaml:"max_rate" json:"max_rate,omitempty"`
	// StepDuration and MaxStepDuration bound a step's measured time.
	StepDuration    Duration `yaml:"step_duration" json:"step_duration,omitempty"`
	MaxStepDuration Duration `yaml:"max_step_duration" json:"max_step_duration,omitempty"`
	// Workers are the concurrency sweep's worker counts.
	Workers []int `yaml:"workers" json:"workers,omitempty"`
}

// MinSweepWorkers is the fewest worker counts a concurrency sweep takes:
// the Universal Scalability Law has three coefficients, and a fourth
// point tests the curve.
const MinSweepWorkers = 4

// MaxSweepWorkers bounds a sweep's worker counts.
const MaxSweepWorkers = 10000

// ParseObjective reads a capacity objective, "[OPERATION:]CONDITION": the
// condition in the threshold grammar, on one operation or, without a
// prefix, on all of them together (AllOperations). It must be an upper
// bound on a latency or the error rate: throughput is what a capacity
// search sets, not an objective. The --slo flag and the capacity section
// share it.
func ParseObjective(s string) (string, threshold.Condition, error) {
	op, cond := AllOperations, strings.TrimSpace(s)

	if name, rest, ok := strings.Cut(cond, ":"); ok && !strings.ContainsAny(name, "<>") {
		op, cond = strings.TrimSpace(name), rest
		if op == "" {
			return "", threshold.Condition{}, fmt.Errorf("%q: empty operation name before ':'", s)
		}
	}

	c, err := threshold.Parse(cond)
	if err != nil {
		return "", threshold.Condition{}, fmt.Errorf("%q: %w", s, err)
	}

	if c.Metric.Kind == threshold.Throughput {
		return "", threshold.Condition{}, fmt.Errorf("%q: throughput is what the capacity search sets, not an objective; give a latency (p99 < 20ms) or an error rate (error_rate < 0.1%%)", s)
	}

	if !c.Metric.HigherIsWorse() || c.Cmp == threshold.Greater || c.Cmp == threshold.GreaterEq {
		return "", threshold.Condition{}, fmt.Errorf("%q: an objective is an upper bound: write it with < or <=", s)
	}

	return op, c, nil
}

// capacity validates the capacity section.
func (v *validator) capacity(ops map[string]bool) {
	c := v.s.Capacity
	if c == nil {
		return
	}

	const p = "capacity"

	for i, s := range c.SLO {
		op, _, err := ParseObjective(s)
		switch {
		case err != nil:
			v.at(yamlpos.Index(yamlpos.Field(p, "slo"), i), "%v", err)
		case op != AllOperations && !ops[op]:
			v.at(yamlpos.Index(yamlpos.Field(p, "slo"), i), "no operation %q (use an operation's name, or none for all of them; the workload has %s)",
				op, strings.Join(sortedKeys(ops), ", "))
		}
	}

	rate := func(field string, r float64) {
		if (v.set(yamlpos.Field(p, field)) && !(r > 0)) || math.IsInf(r, 0) {
			v.at(yamlpos.Field(p, field), "must be > 0 operations per second")
		}
	}

	rate("start_rate", c.StartRate)
	rate("max_rate", c.MaxRate)

	if c.StartRate > 0 && c.MaxRate > 0 && c.MaxRate < c.StartRate {
		v.at(yamlpos.Field(p, "max_rate"), "must be at least start_rate (%v)", c.StartRate)
	}

	if v.set(yamlpos.Field(p, "step_duration")) && c.StepDuration <= 0 {
		v.at(yamlpos.Field(p, "step_duration"), "must be > 0")
	}

	if (v.set(yamlpos.Field(p, "max_step_duration")) && c.MaxStepDuration <= 0) || (c.MaxStepDuration > 0 && c.StepDuration > 0 && c.MaxStepDuration < c.StepDuration) {
		v.at(yamlpos.Field(p, "max_step_duration"), "must be at least step_duration")
	}

	if len(c.Workers) > 0 && len(c.Workers) < MinSweepWorkers {
		v.at(yamlpos.Field(p, "workers"), "a sweep needs at least %d worker counts to fit the three coefficients and test the curve", MinSweepWorkers)
	}

	for i, n := range c.Workers {
		switch {
		case n < 1 || n > MaxSweepWorkers:
			v.at(yamlpos.Index(yamlpos.Field(p, "workers"), i), "must be between 1 and %d", MaxSweepWorkers)
		case i > 0 && n <= c.Workers[i-1]:
			v.at(yamlpos.Index(yamlpos.Field(p, "workers"), i), "the worker counts must increase")
		}
	}
}
